"""Damaged files in a data folder: telling damage apart from other library errors, naming the file in one line,
and moving a rebuildable file aside (renamed, never deleted) so a fresh one can take its place. Like errors.py,
any layer may use it (it imports nothing heavy); the backends map their libraries' errors with it at the boundary.

What each part of a data folder is decides what damage to it means:

    embeddings.sqlite   a cache: moved aside with a warning, started afresh, refilled as texts are embedded
    vectorize/          the index, rebuilt from D1: `memory-sim check --repair` (or `reembed`) moves it aside
    d1/<name>.*         the ledger: nothing to rebuild it from, so the error points at `memory-sim restore`
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from memory_sim.errors import D1Damaged, IndexDamaged

if TYPE_CHECKING:
    from memory_sim.env import Env

log = logging.getLogger(__name__)
T = TypeVar("T")

SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file (sqlite.org/fileformat)
SIDECARS = ("-wal", "-shm", "-journal")  # the files SQLite keeps beside a database
D1_SIDECARS = (".wal", *SIDECARS)  # and DuckDB's write-ahead log


def d1_sidecars(path: Path) -> tuple[Path, ...]:
    """The files a D1 engine keeps beside a database file. A database file moved or replaced without them would be
    read with another file's log (SQLite replays a -wal it finds), or lose its own."""
    return tuple(path.with_name(path.name + suffix) for suffix in D1_SIDECARS)
_DAMAGE_CODES = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
# How sqlite3 (also inside Chroma) and DuckDB word a file that is not, or no longer, what it should be.
_DAMAGE_TEXT = re.compile(
    r"file is not a database|database disk image is malformed|not a valid DuckDB database file|"
    r"Corrupt database file|Could not read enough bytes|does not match (the )?stored checksum",
    re.IGNORECASE,
)
RESTORE_HINT = "restore the folder from a backup with `memory-sim restore BACKUP` (docs/reliability.md)"
REPAIR_HINT = "`memory-sim check --repair` moves it aside and rebuilds the index from D1"


def looks_damaged(exc: BaseException) -> bool:
    """Whether a library error says its file is damaged (not locked, full or missing)."""
    if getattr(exc, "sqlite_errorname", None) in _DAMAGE_CODES:
        return True
    return bool(_DAMAGE_TEXT.search(str(exc)))


def cause_of(exc: BaseException | str, limit: int = 160) -> str:
    """The first line of a library's message, shortened: enough to search for, short enough for one line."""
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def sqlite_file_problem(path: Path) -> str | None:
    """Why `path` cannot be a SQLite database, judged by its header alone; None when it may be (or is absent).
    SQLite itself takes an empty file for a new, empty database, which would silently hide the loss."""
    try:
        with open(path, "rb") as file:
            head = file.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return None
    if not head:
        return "the file is empty"
    return None if head == SQLITE_HEADER else "the file does not start with SQLite's header"


def aside_name(path: Path) -> Path:
    """`<name>.damaged-<local time>` beside `path`, not yet taken."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate, n = path.with_name(f"{path.name}.damaged-{stamp}"), 1
    while candidate.exists():
        candidate, n = path.with_name(f"{path.name}.damaged-{stamp}-{n}"), n + 1
    return candidate


def move_aside(path: Path) -> Path:
    """Renames a damaged file (with its journal files) or folder to `aside_name(path)`; returns the new name."""
    target = aside_name(path)
    os.replace(path, target)  # a rename in the same folder: atomic, nothing copied, nothing deleted
    for suffix in SIDECARS:
        extra = path.with_name(path.name + suffix)
        if extra.exists():
            os.replace(extra, target.with_name(target.name + suffix))
    return target


def d1_damaged(path: Path, cause: BaseException | str) -> D1Damaged:
    return D1Damaged(
        path,
        f"the D1 database file {path} is damaged ({cause_of(cause)}); D1 is the ledger of every memory and "
        f"cannot be rebuilt from the index: {RESTORE_HINT}",
    )


def index_damaged(op: str, folder: Path, cause: BaseException | str, file: Path | None = None) -> IndexDamaged:
    """`folder` is what gets moved aside (the whole Chroma folder: its files only make sense together)."""
    named, why = file if file is not None else folder, cause_of(cause)
    error = IndexDamaged(op, folder, f"the vector index's file {named} is damaged ({why}); {REPAIR_HINT}")
    error.cause = why
    return error


def run_with_index_rebuilt(open_env: Callable[[], Env], work: Callable[[Env], T]) -> T:
    """`work(env)` on a freshly opened Env, closed afterwards. Where the index's files turn out to be damaged,
    on opening or when `work` reaches them, the index folder is moved aside (kept, never deleted), a warning says
    where, and `work` runs again on a fresh, empty index, for it to rebuild from D1 (`check --repair`, `reembed`)."""
    try:
        with open_env() as env:
            return work(env)
    except IndexDamaged as exc:
        if exc.path is None or not exc.path.exists():
            raise
        aside = move_aside(exc.path)
        log.warning("the vector index in %s is damaged (%s); moved it to %s and rebuilding it from D1",
                    exc.path, exc.cause, aside)
    with open_env() as env:
        return work(env)
