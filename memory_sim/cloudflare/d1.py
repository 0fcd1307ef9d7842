"""D1 over Cloudflare's REST API (contract §3.4) with the official SDK: `CloudflareD1Database` is the same
`D1Database` contract as the local engines, and `CloudflareD1Account` manages databases by name.

- `all`/`run`/`first` go to `/query`, `raw` to `/raw`; `batch` is one `{batch: [...]}` request (one transaction).
- `exec` splits by newline as the runtime does and sends the lines as one batch; the failing line is taken from
  the error's `source.pointer` (`/batch/N`) where the server gives one.
- Bind rules are checked here, before any request, with the D1 binding's own `check_value`. Bytes travel
  as an array of byte values (Cloudflare types params as strings; other JSON types are UNCONFIRMED).
- Errors come back as D1's own classes, chosen by the message prefix (`D1_TYPE_ERROR: ...` and so on).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory_sim.bindings.d1 import D1ExecResult, D1Meta, D1PreparedStatement, D1Result, D1Value, check_value, first_of
from memory_sim.cloudflare.client import ApiFailure, CloudflareClient
from memory_sim.errors import D1ColumnNotFound, D1Error, D1ExecError, D1TypeError

_PREFIXES: dict[str, type[D1Error]] = {
    "D1_TYPE_ERROR": D1TypeError,
    "D1_COLUMN_NOTFOUND": D1ColumnNotFound,
    "D1_EXEC_ERROR": D1ExecError,
    "D1_ERROR": D1Error,
}
_META_FIELDS = set(D1Meta.__dataclass_fields__)


def to_d1_error(failure: ApiFailure) -> D1Error:
    """Cloudflare's D1 message as the matching error class, cause without its prefix."""
    for prefix, kind in _PREFIXES.items():
        if failure.message.startswith(prefix + ": "):
            return kind(failure.message[len(prefix) + 2 :])
    if failure.transient:
        return D1Error(f"D1 is unavailable (HTTP {failure.status or 'no answer'}): {failure.message}")
    return D1Error(failure.message)


def wire_value(value: D1Value) -> Any:
    return list(value) if isinstance(value, (bytes, bytearray)) else value


def _meta(obj: dict[str, Any] | None) -> D1Meta:
    return D1Meta(**{k: v for k, v in (obj or {}).items() if k in _META_FIELDS and v is not None})


@dataclass(frozen=True, slots=True)
class CloudflareStatement:
    db: CloudflareD1Database
    sql: str
    values: tuple[D1Value, ...] = ()

    def bind(self, *values: D1Value) -> CloudflareStatement:
        return CloudflareStatement(self.db, self.sql, tuple(check_value(v) for v in values))

    def wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"sql": self.sql}
        if self.values:
            body["params"] = [wire_value(v) for v in self.values]
        return body

    def all(self) -> D1Result:
        return self.db._send("query", [self])[0]

    def run(self) -> D1Result:
        return self.all()

    def first(self, column: str | None = None) -> Any:
        return first_of(self.all().results, column)

    def raw(self, column_names: bool = False) -> list[list[Any]]:
        answer = self.db._post("raw", self.wire())[0]
        table = answer.get("results") or {}
        rows = [list(r) for r in table.get("rows", [])]
        return [list(table.get("columns", [])), *rows] if column_names else rows


class CloudflareD1Database:
    """`D1Database` for one database id of the account."""

    def __init__(self, client: CloudflareClient, database_id: str) -> None:
        self.client = client
        self.database_id = database_id

    def prepare(self, sql: str) -> CloudflareStatement:
        return CloudflareStatement(self, sql)

    def batch(self, statements: Sequence[D1PreparedStatement]) -> list[D1Result]:
        own = [s for s in statements if isinstance(s, CloudflareStatement) and s.db is self]
        if len(own) != len(statements):
            raise D1Error("batch() takes statements prepared on this database")
        return self._send("query", own) if own else []

    def exec(self, sql: str) -> D1ExecResult:
        lines = [(n, line) for n, line in enumerate(sql.strip().split("\n"), start=1) if line.strip()]
        if not lines:
            return D1ExecResult(0, 0.0)
        try:
            results = self._send("query", [CloudflareStatement(self, line) for _, line in lines], keep_position=True)
        except _Positioned as exc:
            number, line = lines[exc.position] if exc.position < len(lines) else lines[-1]
            raise D1ExecError(f"Error in line {number}: {line}: {exc.error.cause}") from exc.error
        return D1ExecResult(len(results), sum(r.meta.duration for r in results))

    def close(self) -> None:
        pass

    # --- the wire -----------------------------------------------------------------------------------------------
    def _send(
        self, route: str, statements: Sequence[CloudflareStatement], *, keep_position: bool = False
    ) -> list[D1Result]:
        body = statements[0].wire() if len(statements) == 1 else {"batch": [s.wire() for s in statements]}
        answers = self._post(route, body, keep_position=keep_position)
        return [D1Result(a.get("results") or [], _meta(a.get("meta")), bool(a.get("success", True))) for a in answers]

    def _post(self, route: str, body: dict[str, Any], *, keep_position: bool = False) -> list[dict[str, Any]]:
        # The SDK's `query`/`raw` parse rows into models; the raw `post` helper keeps D1's JSON exactly.
        path = f"/accounts/{self.client.account_id}/d1/database/{self.database_id}/{route}"
        try:
            answer = self.client.call(lambda sdk: sdk.post(path, body=body, cast_to=object), _positioned)
        except _Positioned as exc:
            if keep_position:
                raise
            raise exc.error from exc.__cause__
        return list(answer["result"])


class _Positioned(D1Error):
    """A D1 error with the failing statement's position, for `exec`; unwrapped for every other caller."""

    def __init__(self, error: D1Error, position: int) -> None:
        super().__init__(error.cause)
        self.error, self.position = error, position


def _positioned(failure: ApiFailure) -> D1Error:
    error = to_d1_error(failure)
    match = re.fullmatch(r"/batch/(\d+)", failure.pointer or "")
    return _Positioned(error, int(match.group(1))) if match else error


class CloudflareD1Account:
    """D1 databases of the account by name, as the local `D1Account` has them."""

    def __init__(self, client: CloudflareClient) -> None:
        self.client = client

    def _databases(self) -> dict[str, str]:
        pages = self.client.call(lambda sdk: list(sdk.d1.database.list(account_id=self.client.account_id)), to_d1_error)
        return {d.name: d.uuid for d in pages}

    def list(self) -> list[str]:
        return sorted(self._databases())

    def describe(self) -> Sequence[dict[str, Any]]:
        """Every database as the API describes it (uuid, name, created_at, ...), for `d1 list --json`."""
        pages = self.client.call(lambda sdk: list(sdk.d1.database.list(account_id=self.client.account_id)), to_d1_error)
        return sorted((d.to_dict(mode="json") for d in pages), key=lambda d: str(d.get("name")))

    def create(self, name: str) -> CloudflareD1Database:
        made = self.client.call(
            lambda sdk: sdk.d1.database.create(account_id=self.client.account_id, name=name), to_d1_error
        )
        return CloudflareD1Database(self.client, made.uuid)

    def get(self, name: str) -> CloudflareD1Database:
        found = self._databases().get(name)
        if found is None:
            raise D1Error(f"no database named {name!r}")
        return CloudflareD1Database(self.client, found)

    def delete(self, name: str) -> None:
        database = self.get(name)
        self.client.call(
            lambda sdk: sdk.d1.database.delete(database.database_id, account_id=self.client.account_id), to_d1_error
        )
