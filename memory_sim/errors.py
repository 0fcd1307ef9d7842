"""The project's own error tree. Library errors (Chroma, DuckDB, sqlite3, torch, httpx) are mapped into it
at the boundary where they are raised, so callers catch these and nothing else.

    MemorySimError
    ├── ConfigError                 bad settings, unknown backend, missing model weights
    ├── InvalidInput                a value breaks a rule of the memory system or the CLI; also a ValueError
    ├── DataInUseError              another process (or Env) owns the data folder: its lock names the owner
    ├── DamagedDataError            a file of the data folder is damaged; the message names it and the way back
    │   ├── IndexDamaged            also a VectorizeUnavailable: `check --repair` rebuilds the index from D1
    │   └── D1Damaged               also a D1Error: D1 is the ledger; restore a backup
    ├── BackupError                 a backup could not be written, or does not verify
    ├── VectorizeError              "<OP>_ERROR (code = N): <text>", as the Workers binding words it
    │   ├── VectorizeInputError     the request broke a rule of the contract (4xx); nothing was changed
    │   └── VectorizeUnavailable    the backend failed or could not be reached (5xx); retry later (IndexDamaged)
    ├── D1Error                     "D1_ERROR: <cause>"
    │   ├── D1TypeError             "D1_TYPE_ERROR: Type '<t>' not supported for value '<v>'"
    │   ├── D1ColumnNotFound        "D1_COLUMN_NOTFOUND: Column not found (<col>)"
    │   ├── D1ExecError             "D1_EXEC_ERROR: Error in line N: <line>: <msg>"
    │   ├── D1Unsupported           a SQLite construct the DuckDB dialect cannot honour; names the alternative
    │   ├── D1StatementError        one statement of several failed: the same words, and its position (`index`)
    │   ├── D1TimeLimit             a query ran past D1's time limit (30 s) and was stopped; REST code 7429
    │   └── D1Damaged               (see DamagedDataError)
    ├── D1SystemLimit               an account's D1 limit (databases per account, an import's size); API code
    └── AiError                     Workers AI's wording for bad input
        └── EmbeddingUnavailable    the model or provider failed (rate limit, 5xx, timeout); retry later

Rule of thumb: `*Unavailable` errors are transient and the memory system degrades on them; every other error
means the caller asked for something the contract forbids.
"""

from __future__ import annotations

from pathlib import Path


class MemorySimError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(MemorySimError):
    """Settings that cannot work: unknown backend, missing weights, a mismatched model."""


class InvalidInput(MemorySimError, ValueError):
    """A value given by the caller breaks a rule (an empty text, an importance outside 0..1, an over-long NPC id,
    a bad command-line argument); the message says which. Nothing was stored."""


class NotFound(InvalidInput, LookupError):
    """The caller named something that does not exist (an unregistered NPC, an unknown memory id)."""


class DataInUseError(MemorySimError):
    """The data folder is owned by another process, or by another open Env of this one. `holder` is the owner
    record the message names, as read when the lock was refused (memory_sim.folder_lock.Owner), if there was one:
    a waiting opener judges by it, since the record itself is removed a moment before the lock is let go."""

    def __init__(self, message: str, holder: object | None = None) -> None:
        super().__init__(message)
        self.holder = holder


class DamagedDataError(MemorySimError):
    """A file of the data folder cannot be read as what it should be (overwritten, truncated, emptied).
    `path` is the damaged file or folder; the message names it and the way back."""

    path: Path | None = None


class BackupError(MemorySimError):
    """A backup could not be written, or a copy does not match what was backed up; nothing was replaced."""


class VectorizeError(MemorySimError):
    """A Vectorize operation failed; the message follows the binding's `<OP>_ERROR (code = N): <text>`."""

    def __init__(self, op: str, message: str, code: int | None = None, status: int = 400) -> None:
        self.op = op
        self.code = code
        self.status = status
        self.detail = message
        prefix = f"{op}_ERROR" if code is None else f"{op}_ERROR (code = {code})"
        super().__init__(f"{prefix}: {message}")


class VectorizeInputError(VectorizeError):
    """The request broke a contract rule; nothing stored was changed."""


class VectorizeUnavailable(VectorizeError):
    """The index backend failed or is unreachable; the caller may retry or fall back."""

    def __init__(self, op: str, message: str, code: int | None = None, status: int = 503) -> None:
        super().__init__(op, message, code, status)


class IndexDamaged(VectorizeUnavailable, DamagedDataError):
    """The index's files are damaged; `memory-sim check --repair` moves them aside and rebuilds from D1."""

    def __init__(self, op: str, path: Path, message: str) -> None:
        self.path = path
        self.cause = message
        super().__init__(op, message)


class D1Error(MemorySimError):
    """A D1 statement failed; the message carries D1's prefix and the cause."""

    prefix = "D1_ERROR"

    def __init__(self, cause: str) -> None:
        self.cause = cause
        super().__init__(f"{self.prefix}: {cause}")


class D1Damaged(D1Error, DamagedDataError):
    """D1's file is damaged. D1 is the ledger, so there is nothing to rebuild it from: restore a backup."""

    def __init__(self, path: Path, cause: str) -> None:
        self.path = path
        super().__init__(cause)


class D1TypeError(D1Error):
    prefix = "D1_TYPE_ERROR"


class D1ColumnNotFound(D1Error):
    prefix = "D1_COLUMN_NOTFOUND"


class D1ExecError(D1Error):
    prefix = "D1_EXEC_ERROR"


class D1Unsupported(D1Error):
    """A SQLite construct that DuckDB cannot run with SQLite's meaning; the message names the alternative. Worded
    as D1 words errors (`D1_ERROR: <message>: SQLITE_ERROR`), so code matching on SQLite's form still parses it."""

    ALTERNATIVE = "or use the sqlite engine (MEMORY_SIM_D1_ENGINE=sqlite), which runs it as D1 does"
    _NOWHERE = ("not available in D1", "not available in SQLite", "empty statement")  # no engine runs these

    def __init__(self, cause: str) -> None:
        cause = cause.removesuffix(": SQLITE_ERROR")
        if not any(words in cause for words in ("sqlite engine", *self._NOWHERE)):
            cause = f"{cause}; {self.ALTERNATIVE}"  # what SQLite answers and DuckDB cannot: the engine that can
        super().__init__(f"{cause}: SQLITE_ERROR")


class D1TimeLimit(D1Error):
    """A statement or batch ran past D1's time limit and was stopped; its writes are rolled back. The wording
    users quote from production (REST code 7429)."""

    code = 7429

    def __init__(self) -> None:
        super().__init__("D1 DB storage operation exceeded timeout which caused object to be reset.")


class D1StatementError(D1Error):
    """A statement of several run together failed: the same prefix and text as its own error (`error`), plus the
    failing statement's position (`index`, from 0) so a caller can name it (REST's `source.pointer`)."""

    def __init__(self, error: D1Error, index: int) -> None:
        self.prefix = error.prefix
        super().__init__(error.cause)
        self.error, self.index = error, index


class D1SystemLimit(MemorySimError):
    """A limit of the account rather than of a statement: too many databases (API code 7406, production's words),
    or an import file over 5 GB (code 7400, this project's words). Nothing was created or read."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        super().__init__(message)


class AiError(MemorySimError):
    """Workers AI rejected the input (empty text, too many texts, unknown model)."""


class EmbeddingUnavailable(AiError):
    """The embedding model or provider failed transiently; the memory is kept and embedded later."""
