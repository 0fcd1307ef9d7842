"""Bearer tokens, and the accounts each one opens.

Every `/client/v4` route needs `Authorization: Bearer <token>` with one of the server's tokens, and a token opens
only its own accounts. `--token` / MEMORY_SIM_API_TOKEN hold entries separated by commas (or repeated `--token`):

    TOKEN:ACCOUNT[+ACCOUNT...]     the token opens these account ids, and no other
    TOKEN                          a bare token opens every account id; allowed only as the one entry

Checked in one place for both ways a request is served: the ASGI middleware `TokenGate` (every route) and the
query route answered before FastAPI's routing (`fast_query.py`).
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory_sim.errors import ConfigError
from memory_sim.server.accounts import ACCOUNT_ID
from memory_sim.server.envelope import CODE_AUTH_ERROR, CODE_AUTH_INVALID, ApiError, fail

API_PREFIX = "/client/v4"
ACCOUNT_IN_PATH = re.compile(r"^/client/v4/accounts/([^/]+)")
TOKEN = re.compile(r"^[!-~]+$")  # printable ASCII, no spaces (',' and ':' separate, so never inside)
GRAMMAR = "TOKEN:ACCOUNT[+ACCOUNT...], entries separated by ','"
_UNKNOWN = object()


@dataclass(frozen=True)
class TokenTable:
    """Which account ids each token opens; `None` means every account (a lone bare token)."""

    owners: Mapping[str, frozenset[str] | None]

    def __len__(self) -> int:
        return len(self.owners)

    def with_token(self, token: str, accounts: frozenset[str] | None) -> TokenTable:
        """This table and one more token (e.g. the folder owner's, which opens the account `local` only)."""
        return TokenTable({**self.owners, token: accounts})

    def refusal(self, header: str, account_id: str | None) -> ApiError | None:
        """Why a request with this `Authorization` header may not touch `account_id`, or None. 401 without a
        header, 403 with a token the server does not know (9109), 403 on an account the token does not open
        (10000 "Authentication error", as Cloudflare answers a token used on another account)."""
        if not header:
            return ApiError(401, CODE_AUTH_ERROR, "Authentication error")
        scheme, _, token = header.partition(" ")
        owned = self._owned(token.strip()) if scheme.lower() == "bearer" else _UNKNOWN
        if owned is _UNKNOWN:
            return ApiError(403, CODE_AUTH_INVALID, "Invalid access token")
        if account_id is not None and owned is not None and account_id not in owned:  # type: ignore[operator]
            return ApiError(403, CODE_AUTH_ERROR, "Authentication error")
        return None

    def _owned(self, token: str) -> Any:
        """The accounts of `token`, compared in constant time against every known token; `_UNKNOWN` if none."""
        given = token.encode("latin-1", "replace")  # a header is latin-1; configured tokens are ASCII
        found: Any = _UNKNOWN
        for known, accounts in self.owners.items():
            if hmac.compare_digest(given, known.encode("ascii")):
                found = accounts
        return found

    def describe(self) -> str:
        """For the start-up line: how many tokens and what they open (never the tokens themselves)."""
        if any(accounts is None for accounts in self.owners.values()):
            return "1 token for every account id (a bare token; give TOKEN:ACCOUNT to limit it)"
        accounts = set().union(*(a for a in self.owners.values() if a is not None))
        return f"{len(self.owners)} token(s), each for its own accounts ({len(accounts)} account id(s) in all)"


def parse_tokens(value: str | Sequence[str] | TokenTable | None) -> TokenTable:
    """The token table of `--token` values or MEMORY_SIM_API_TOKEN (see the module's grammar). Blank entries are
    skipped; a malformed one is a ConfigError naming the entry by position (a token is a secret: never echoed)."""
    if isinstance(value, TokenTable):
        return value
    items = [value] if isinstance(value, str) else list(value or [])
    entries = [entry.strip() for item in items for entry in item.split(",") if entry.strip()]
    owners: dict[str, set[str]] = {}
    for number, entry in enumerate(entries, start=1):
        token, colon, accounts = entry.partition(":")
        where = f"token entry {number} of {len(entries)}"
        if not TOKEN.match(token):
            raise ConfigError(f"{where}: a token is printable ASCII without spaces, ',' or ':' (expected {GRAMMAR})")
        if not colon:
            if len(entries) > 1:
                raise ConfigError(f"{where} names no account: with several entries each needs its accounts ({GRAMMAR})")
            return TokenTable({token: None})
        names = accounts.split("+")
        bad = next((name for name in names if not ACCOUNT_ID.match(name)), None)
        if bad is not None:
            raise ConfigError(f"{where}: invalid account id {bad!r}: letters, digits, '-' and '_', at most 64, "
                              f"several joined by '+' (expected {GRAMMAR})")
        owners.setdefault(token, set()).update(names)
    return TokenTable({token: frozenset(accounts) for token, accounts in owners.items()})


def account_in_path(path: str) -> str | None:
    """The `{account_id}` of a `/client/v4/accounts/{account_id}/...` path, as the router reads it."""
    matched = ACCOUNT_IN_PATH.match(path)
    return None if matched is None else matched[1]


def authorization(headers: Sequence[tuple[bytes, bytes]]) -> str:
    """The `Authorization` header of ASGI-style (lower-cased name, value) pairs; "" when absent."""
    return next((v for k, v in headers if k == b"authorization"), b"").decode("latin-1")


class TokenGate:
    """Every `/client/v4` request needs a bearer token that opens the account in its path. A plain ASGI middleware
    rather than a FastAPI dependency: resolving a dependency per request was a measurable share of the server's
    added latency. It reads the same decoded `path` the router matches, so both see the same account id."""

    def __init__(self, app: Any, tokens: TokenTable) -> None:
        self.app, self.tokens = app, tokens

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith(API_PREFIX):
            refused = self.tokens.refusal(authorization(scope["headers"]), account_in_path(scope["path"]))
            if refused is not None:
                await fail(refused.status, refused.code, refused.message)(scope, receive, send)
                return
        await self.app(scope, receive, send)
