"""D1 Time Travel on the local server: kept states of each database, named by bookmarks.

A state is kept the way `memory-sim backup` copies a database (memory_sim/backup.py): the database's own
`backup()` (sqlite3's online backup API, or DuckDB's CHECKPOINT and a copy) under its lock, in a folder shaped
like an account's, then reopened and its rows per table compared with what was copied before it is named:

    <account>/d1/time-travel/<database_id>/bookmarks.json     the ledger: bookmark, time, rows per table
    <account>/d1/time-travel/<database_id>/<n>/d1/<name>.*    state n, opened with the account's own D1 factory

When states are kept: the empty database a creation makes is state 0, which needs no copy (restoring it makes a
new empty database); after a request through the server that changed the database, at most one per `interval_s`
(a change inside the interval is pending: the first request after the interval keeps it before it runs, so a
timestamp restores the database as it was at most `interval_s` before it); and whenever a bookmark of the
current state is asked for, or an import or a restore is made (those are exact). At most
`max_kept` states per database, none older than needed for `retention_s`, and at most `max_bytes` of them
together (each state is a whole copy of the database: a 14 MB database written every minute would otherwise keep
1.4 GB); the oldest go first, and the two newest always stay (the state a restore undoes to, and the restored
one). Writes that do not go through the server's routes (the folder owner's own `env.DB`) are seen only when
the next state is kept.

A restore swaps the database's file under the gate every statement request through the server holds
(`serving`): it waits for the request in flight, keeps the state as it then stands as `previous_bookmark` (so
every write acknowledged before the restore is in it), and a request that comes while it runs is answered a
retryable 503 instead of running on a database being closed and swapped.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_sim.server.envelope import CODE_BAD_REQUEST, CODE_D1_SQL, ApiError

RETENTION_S = 30 * 86400.0  # D1 on a paid plan: 30 days (Free: 7 days; `retention_s=7 * 86400.0`)
MAX_RESTORES, RESTORE_WINDOW_S = 10, 600.0  # D1: at most 10 restores per 10 minutes per database
INTERVAL_S = 60.0  # D1 restores to "any minute" of the window
MAX_KEPT = 100
MAX_BYTES = 256 * 2**20  # of kept states per database; the newest two are kept whatever their size
LEDGER = "bookmarks.json"
CODE_TIME_TRAVEL = 7500  # UNCONFIRMED: Cloudflare's code for a bookmark or timestamp it cannot restore


@dataclass(frozen=True)
class Bookmark:
    """One kept state: its bookmark, the time of the newest change it holds (epoch seconds), its rows per table."""

    bookmark: str
    at: float
    number: int
    counts: dict[str, int]
    size: int = 0  # bytes of the kept copy (0: the empty state of the creation, or a ledger from before sizes)


def iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str) -> float:
    """An RFC 3339 timestamp (as wrangler sends it) or Unix seconds, as epoch seconds; 400 otherwise."""
    try:
        when = float(text) if text.replace(".", "", 1).isdigit() else datetime.fromisoformat(text).timestamp()
        iso(when)  # a time datetime can write back (years 1 to 9999)
    except (ValueError, OverflowError, OSError):
        raise ApiError(400, CODE_BAD_REQUEST, f"Invalid timestamp '{text}': give an RFC 3339 time or Unix seconds") \
            from None
    return when


def time_travel_error(message: str) -> ApiError:
    return ApiError(400, CODE_TIME_TRAVEL, message)


def restoring_error(name: str) -> ApiError:
    """A request that comes while the database is swapped: D1's words for a database that is starting up again,
    which its retry guidance names as retryable ("storage caused object to be reset"); the 503 and the code are
    UNCONFIRMED for REST. Clients that retry 5xx (the official SDK does) retry it."""
    return ApiError(503, CODE_D1_SQL, "D1_ERROR: Internal error while starting up D1 DB storage caused object to be "
                                      f"reset (database {name} is being restored by Time Travel; retry the request)")


class DatabaseHistory:
    """The kept states of one database. `open_folder(folder)` is the account's D1 factory: it opens the databases
    under `<folder>/d1/` (how a kept state is reopened and checked)."""

    def __init__(self, root: Path, name: str, open_folder: Callable[[Path], Any], *, clock: Callable[[], float],
                 interval_s: float, retention_s: float, max_kept: int, max_bytes: int = MAX_BYTES) -> None:
        self.root, self.name, self._open_folder, self._clock = root, name, open_folder, clock
        self.interval_s, self.retention_s, self.max_kept, self.max_bytes = interval_s, retention_s, max_kept, max_bytes
        self._lock = threading.RLock()
        self._changed_at: float | None = None  # the newest change not yet in a kept state
        self._gate = threading.Lock()  # held by each statement request, and by a restore for its whole swap
        self._restores = 0  # restores asked for and not yet over: new requests are answered 503 meanwhile
        self._counting = threading.Lock()
        self._restored_at: collections.deque[float] = collections.deque()  # the last restores' times

    # --- requests and restores ----------------------------------------------------------------------------------
    @contextmanager
    def serving(self) -> Iterator[None]:
        """Held while a request runs statements on the database: a restore waits for it to end; a request that
        comes while a restore is asked for or under way is answered a retryable 503 (`restoring_error`)."""
        if self._restores:
            raise restoring_error(self.name)
        with self._gate:
            if self._restores:  # a restore was asked for while this request waited for the gate
                raise restoring_error(self.name)
            yield

    @contextmanager
    def restoring(self) -> Iterator[None]:
        """Held for a restore: new requests are refused at once, the one in flight is waited for."""
        with self._counting:
            self._restores += 1
        try:
            with self._gate:
                yield
        finally:
            with self._counting:
                self._restores -= 1

    def admit_restore(self) -> None:
        """D1's limit of 10 restores per 10 minutes per database: a restore past it is refused (429) with when
        the next one is allowed; `count_restore` records one that was made."""
        with self._counting:
            now = self._clock()
            while self._restored_at and self._restored_at[0] <= now - RESTORE_WINDOW_S:
                self._restored_at.popleft()
            if len(self._restored_at) >= MAX_RESTORES:
                raise ApiError(429, CODE_TIME_TRAVEL, f"Too many restores of database {self.name}: at most "
                               f"{MAX_RESTORES} restores per {RESTORE_WINDOW_S / 60:.0f} minutes per database; the "
                               f"next is allowed at {iso(self._restored_at[0] + RESTORE_WINDOW_S)}")

    def count_restore(self) -> None:
        with self._counting:
            self._restored_at.append(self._clock())

    # --- the ledger ---------------------------------------------------------------------------------------------
    def kept(self) -> list[Bookmark]:
        path = self.root / LEDGER
        if not path.exists():
            return []
        return [Bookmark(**entry) for entry in json.loads(path.read_text("utf-8"))]

    def _save(self, kept: list[Bookmark]) -> None:
        path = self.root / LEDGER
        partial = path.with_name(f".{LEDGER}.partial")
        partial.write_text(json.dumps([asdict(b) for b in kept], indent=1), "utf-8")
        os.replace(partial, path)  # the ledger is whole or as it was

    def created(self) -> None:
        """A new, empty database: its state 0, named without copying anything."""
        with self._lock:
            at = self._clock()
            self.root.mkdir(parents=True, exist_ok=True)
            self._save([Bookmark(f"{0:08x}-{int(at * 1000):012x}-{uuid.uuid4().hex}", at, 0, {})])

    def state_file(self, bookmark: Bookmark) -> Path:
        return Path(self._open_folder(self.root / str(bookmark.number)).path(self.name))

    # --- keeping states -----------------------------------------------------------------------------------------
    def keep(self, database: Any, at: float | None = None) -> Bookmark:
        """Copies the database as it stands now into a new kept state, checks the copy, and names it."""
        with self._lock:
            kept = self.kept()
            number = kept[-1].number + 1 if kept else 1
            partial = self.root / f".{number}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            target = Path(self._open_folder(partial).path(self.name))
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                counts = database.backup(target)
                self.check(partial, counts)
                os.replace(partial, self.root / str(number))
            except BaseException:
                shutil.rmtree(partial, ignore_errors=True)
                raise
            pending = self._changed_at if self._changed_at is not None else self._clock()
            when = at if at is not None else pending
            size = sum(p.stat().st_size for p in (self.root / str(number)).rglob("*") if p.is_file())
            bookmark = Bookmark(f"{number:08x}-{int(when * 1000):012x}-{uuid.uuid4().hex}", when, number, counts, size)
            self._changed_at = None
            self._save(self._pruned([*kept, bookmark]))
            return bookmark

    def check(self, folder: Path, counts: dict[str, int]) -> None:
        """Reopens the copy of the database in `folder` and compares its rows per table with `counts`."""
        copy = self._open_folder(folder).get(self.name)
        try:
            found = copy.row_counts()
        finally:
            copy.close()
        if found != counts:
            differ = sorted(t for t in set(found) | set(counts) if found.get(t) != counts.get(t))
            raise time_travel_error(f"the kept state of {self.name} does not match what was copied "
                                    f"(tables {', '.join(differ)} differ)")

    def _pruned(self, kept: list[Bookmark]) -> list[Bookmark]:
        """Drops states beyond `max_kept`, those older than the newest one at or before the retention window's
        start (that one is still needed: it is the database as the window opens), and the oldest while all of them
        take more than `max_bytes` (but the newest two)."""
        cutoff = self._clock() - self.retention_s
        first = max((i for i, b in enumerate(kept) if b.at <= cutoff), default=0)
        first = max(first, len(kept) - self.max_kept)
        while first < len(kept) - 2 and sum(b.size for b in kept[first:]) > self.max_bytes:
            first += 1
        for dropped in kept[:first]:
            shutil.rmtree(self.root / str(dropped.number), ignore_errors=True)
        return kept[first:]

    def changed(self, database: Any) -> None:
        """A request through the server changed the database: kept now if the interval since the last kept state
        is over, else noted as pending (kept by the first request after the interval, `catch_up`)."""
        with self._lock:
            self._changed_at = self._clock()
            if self._due():
                self.keep(database)

    def catch_up(self, database: Any) -> None:
        """Before a request runs: a pending change whose interval is over is kept first, so that the state it made
        is not merged with what this request does."""
        if self._changed_at is not None:
            with self._lock:
                if self._changed_at is not None and self._due():
                    self.keep(database)

    def _due(self) -> bool:
        kept = self.kept()
        return not kept or self._clock() >= kept[-1].at + self.interval_s

    def current(self, database: Any) -> Bookmark:
        """The bookmark of the database as it stands now (a new state kept if it changed since the last)."""
        with self._lock:
            kept = self.kept()
            if kept and self._changed_at is None:
                return kept[-1]
            return self.keep(database)

    def at_time(self, when: float, database: Any) -> Bookmark:
        """The newest kept state holding no change after `when`."""
        with self._lock:
            if when >= self._clock():
                raise time_travel_error(f"Invalid timestamp '{iso(when)}'. Please provide a timestamp in the past")
            if self._changed_at is not None and self._changed_at <= when:
                return self.current(database)  # the pending change happened before `when`: keep it first
            kept = [b for b in self.kept() if b.at <= when]
            if not kept:
                oldest = self.kept()[0].at if self.kept() else self._clock()
                raise time_travel_error(f"Invalid timestamp '{iso(when)}': the oldest state of database "
                                        f"{self.name} kept for Time Travel is from {iso(oldest)}")
            return kept[-1]

    def find(self, bookmark: str) -> Bookmark:
        found = next((b for b in self.kept() if b.bookmark == bookmark), None)
        if found is None:
            raise time_travel_error(f"Bookmark '{bookmark}' is not a kept state of database {self.name} "
                                    f"(see `wrangler d1 time-travel info`)")
        return found

    def staged(self, bookmark: Bookmark) -> Path:
        """A checked copy of a kept state, beside the others, ready to be swapped in."""
        staging = self.root / ".restoring"
        shutil.rmtree(staging, ignore_errors=True)
        target = Path(self._open_folder(staging).path(self.name))
        target.parent.mkdir(parents=True)
        try:
            if bookmark.number == 0:  # the empty database of the creation
                self._open_folder(staging).create(self.name).close()
            else:
                shutil.copyfile(self.state_file(bookmark), target)
            self.check(staging, bookmark.counts)
        except ApiError:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        except Exception as exc:  # a kept state that is gone or does not open
            shutil.rmtree(staging, ignore_errors=True)
            raise time_travel_error(f"the state of {self.name} at bookmark {bookmark.bookmark} cannot be "
                                    f"restored: {exc}") from exc
        return target

    def discard_staging(self) -> None:
        shutil.rmtree(self.root / ".restoring", ignore_errors=True)

    def forget_pending(self) -> None:
        with self._lock:
            self._changed_at = None


class TimeTravel:
    """The Time Travel of one account's databases, by database id."""

    def __init__(self, root: Path, open_folder: Callable[[Path], Any], *, clock: Callable[[], float] = time.time,
                 interval_s: float = INTERVAL_S, retention_s: float = RETENTION_S, max_kept: int = MAX_KEPT,
                 max_bytes: int = MAX_BYTES) -> None:
        self.root, self._open_folder, self._clock = root, open_folder, clock
        self._options: dict[str, Any] = {"interval_s": interval_s, "retention_s": retention_s, "max_kept": max_kept,
                                         "max_bytes": max_bytes}
        self._histories: dict[str, DatabaseHistory] = {}
        self._lock = threading.Lock()

    def of(self, database_id: str, name: str) -> DatabaseHistory:
        with self._lock:
            if database_id not in self._histories:
                self._histories[database_id] = DatabaseHistory(
                    self.root / database_id, name, self._open_folder, clock=self._clock, **self._options)
            return self._histories[database_id]

    def known(self, database_id: str) -> DatabaseHistory | None:
        return self._histories.get(database_id)

    def forget(self, database_id: str) -> None:
        """A deleted database's history goes with it."""
        with self._lock:
            self._histories.pop(database_id, None)
        shutil.rmtree(self.root / database_id, ignore_errors=True)
