"""D1's limits on an account rather than on a statement, checked before anything is created or read. Pure.

- Databases per account: 1,000,000 on Workers Paid (cloudflare-docs changelog 2026-09-18). Over it production's
  API answers code 7406 "System limit reached: databases per account (N)" (quoted by wrangler users,
  cloudflare/workers-sdk#2913, #15165); the HTTP status, 400 here, is this project's choice.
- `d1 execute --file` imports at most 5 GB (D1's limits page). No wording of production's refusal was found: the
  code (7400) and text here are this project's own.
"""

from __future__ import annotations

from memory_sim.bindings import limits
from memory_sim.errors import D1SystemLimit

CODE_DATABASE_LIMIT = 7406
CODE_IMPORT_TOO_LARGE = 7400


def check_database_count(existing: int, limit: int | None = None) -> None:
    """Refuses a new database where the account already holds `limit` (default: D1's per-account limit)."""
    cap = limits.D1_MAX_DATABASES_PER_ACCOUNT if limit is None else limit
    if existing >= cap:
        raise D1SystemLimit(CODE_DATABASE_LIMIT, f"System limit reached: databases per account ({cap})")


def check_import_size(size: int, limit: int | None = None) -> None:
    """Refuses an import file of more than `limit` bytes (default: D1's 5 GB) before any of it is read."""
    cap = limits.D1_MAX_IMPORT_BYTES if limit is None else limit
    if size > cap:
        raise D1SystemLimit(CODE_IMPORT_TOO_LARGE, f"the import file is {size:,} bytes; D1 imports files of at most "
                                                   f"{cap:,} bytes")
