"""The D1 contract, shaped like the Workers binding (`env.DB`) in Python naming.

`db.prepare(sql).bind(*values)` gives a statement; `.first()`, `.all()`, `.run()`, `.raw()` run it;
`db.batch([...])` runs statements in one transaction; `db.exec(sql)` runs newline-separated statements.
Results carry D1's shape: `success`, `results` (rows as dicts), `meta`. Every backend binds values by
`check_value`; SQL text is read with `d1_sql` (statement boundaries, `?NNN` placeholders). Backends: sqlite3 (the
engine D1 itself runs, and the reference), DuckDB with a SQLite dialect layer, Cloudflare's REST API.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from memory_sim.bindings import limits
from memory_sim.errors import D1ColumnNotFound, D1Error, D1TypeError

# What D1 accepts as a bound value; bytes come back as a list of ints, bools as 1/0.
D1Value = None | int | float | str | bool | bytes
Row = dict[str, Any]
_INT64 = 2**63
_DATABASE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


# Where a local answer says it was served: there is one database, its own primary, in no Cloudflare region.
# Production names a region from a closed set (WNAM ENAM WEUR EEUR APAC OC) and a colo's airport code; clients
# that read them get a value of the same kind, and `served_by` says plainly which server answered.
LOCAL_SERVED_BY = "memory-sim-local"
LOCAL_REGION = "WNAM"
LOCAL_COLO = "LCL"


@dataclass(slots=True)
class D1Meta:
    """A statement's `meta`, every field production's D1 returns (`duration` and `timings.sql_duration_ms` are both
    the milliseconds spent in SQL, as in production)."""

    duration: float = 0.0  # milliseconds spent in SQL
    changes: int = 0
    last_row_id: int = 0
    changed_db: bool = False
    size_after: int = 0
    rows_read: int = 0
    rows_written: int = 0
    # Where it was served, as production says it; None where an answer did not say (a Cloudflare adapter's
    # older response), and left out of the JSON then.
    served_by: str | None = None
    served_by_region: str | None = None
    served_by_colo: str | None = None
    served_by_primary: bool | None = None
    total_attempts: int | None = None

    @property
    def timings(self) -> dict[str, float]:
        return {"sql_duration_ms": self.duration}

    def to_json(self) -> dict[str, Any]:
        return {**{k: v for k, v in asdict(self).items() if v is not None}, "timings": self.timings}


def local_meta(**fields: Any) -> D1Meta:
    """A meta as a local engine answers it: served by this process, the primary, at the first attempt."""
    return D1Meta(**fields, served_by=LOCAL_SERVED_BY, served_by_region=LOCAL_REGION, served_by_colo=LOCAL_COLO,
                  served_by_primary=True, total_attempts=1)


@dataclass(slots=True)
class D1Result:
    results: list[Row] = field(default_factory=list)
    meta: D1Meta = field(default_factory=D1Meta)
    success: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"success": self.success, "meta": self.meta.to_json(), "results": self.results}


@dataclass(frozen=True, slots=True)
class D1ExecResult:
    count: int
    duration: float

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "duration": self.duration}


def first_of(rows: list[Row], column: str | None = None) -> Any:
    """D1's `first()`: the first row, or that row's `column`; None without rows; D1_COLUMN_NOTFOUND when rows
    exist but lack the column. Shared by every backend's statement."""
    if not rows:
        return None
    if column is None:
        return rows[0]
    if column not in rows[0]:
        raise D1ColumnNotFound(f"Column not found ({column})")
    return rows[0][column]


def check_value(value: object) -> D1Value:
    """D1's bind-time type rules, checked by every backend's `bind` before anything runs; booleans become 1/0
    (as D1 stores them), bytes-like values bytes."""
    if isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, (bool, str, float)):
        if (isinstance(value, str) and len(value) * 4 > limits.D1_MAX_STRING_OR_BLOB_BYTES  # at most 4 bytes a char
                and len(value.encode()) > limits.D1_MAX_STRING_OR_BLOB_BYTES):
            raise D1Error("string or blob too big: SQLITE_TOOBIG")
        return value
    if isinstance(value, int):
        if not -_INT64 <= value < _INT64:
            raise D1TypeError(f"Type 'bigint' not supported for value '{value}'")
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        blob = bytes(value)
        if len(blob) > limits.D1_MAX_STRING_OR_BLOB_BYTES:
            raise D1Error("string or blob too big: SQLITE_TOOBIG")
        return blob
    raise D1TypeError(f"Type '{type(value).__name__}' not supported for value '{value}'")


def check_database_name(name: str) -> str:
    """The database names this project takes, on every backend: a local database is a file named after it."""
    if not _DATABASE_NAME.fullmatch(name):
        raise D1Error(f"invalid database name {name!r}: letters, digits, '-' and '_' (at most 64)")
    return name


@runtime_checkable
class D1PreparedStatement(Protocol):
    def bind(self, *values: D1Value) -> D1PreparedStatement: ...

    def first(self, column: str | None = None) -> Any: ...

    def all(self) -> D1Result: ...

    def run(self) -> D1Result: ...

    def raw(self, column_names: bool = False) -> list[list[Any]]: ...


@runtime_checkable
class D1Database(Protocol):
    def prepare(self, sql: str) -> D1PreparedStatement: ...

    def batch(self, statements: Sequence[D1PreparedStatement]) -> list[D1Result]: ...

    def exec(self, sql: str) -> D1ExecResult: ...
