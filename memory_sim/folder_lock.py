"""One process owns a data folder: `FolderLock.acquire(data)` before anything in it is opened.

    <data>/.lock        an OS lock (flock, through `filelock`): the truth. The OS drops it when the owner exits,
                        even on kill -9, so a crash never leaves a folder that cannot be opened.
    <data>/owner.json   who holds it (pid, verb, since, and an address once the owner serves the folder), written
                        atomically by the holder and removed on release. Information only: a record left by a
                        dead process blocks nobody.
    <data>/owner.token  the bearer token of the owner's API (memory_sim/owner.py), readable by this user only
                        (0600); written before the address is published, removed on release and by the next owner.

The folder must be this user's own, and others may not write it (memory_sim/trust.py): a folder made here is made
0700, and every file the lock writes is written no-follow and exclusive (0600), then renamed in place.

A second opener, in another process or in the same one, gets `DataInUseError` with one line naming the owner.
The same process is refused too (no reference counting): two Envs over one folder keep two Vectorize states that
hide each other's writes, exactly as two processes do. Close the first Env, then open the folder again.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from memory_sim.errors import ConfigError, DataInUseError
from memory_sim.trust import is_partial, own_folder_problem, write_private

T = TypeVar("T")
LOCK_FILE = ".lock"
OWNER_FILE = "owner.json"
TOKEN_FILE = "owner.token"


def _script_name() -> str:
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path("-c")
    return script.parent.name if script.name == "__main__.py" else script.name  # `python -m pytest`: pytest


_verb = f"python {_script_name()}"


def is_lock_file(name: str) -> bool:
    """What the lock itself puts in a folder (the lock, the owner record, a record being written)."""
    return name in (LOCK_FILE, OWNER_FILE, TOKEN_FILE) or is_partial(name, OWNER_FILE) or is_partial(name, TOKEN_FILE)


@contextmanager
def acting_as(verb: str) -> Iterator[None]:
    """Names this process in the owner records of folders it locks meanwhile, e.g. `memory-sim run`."""
    global _verb
    before, _verb = _verb, verb
    try:
        yield
    finally:
        _verb = before


_DATABASE_IDS = uuid.UUID("5d1b7e0c-7a43-4d4e-9a55-6d656d6f7279")  # namespace of the stable database ids


def database_id_for(name: str) -> str:
    """The id under which an owner publishes (owner.json) and serves the folder's D1 database `name`: the same
    in every run."""
    return str(uuid.uuid5(_DATABASE_IDS, name))


@dataclass(frozen=True)
class Owner:
    pid: int
    verb: str
    since: str
    address: str | None = None  # where the owner serves the folder, when it does
    account_id: str | None = None  # the account, database and index of the folder's own data at that address
    database_id: str | None = None
    database_name: str | None = None
    index_name: str | None = None

    def alive(self) -> bool:
        if self.pid <= 0:  # a damaged record: os.kill would signal a process group
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def read_owner(data_dir: str | Path) -> Owner | None:
    """The record, as information (who to name in a refusal); memory_sim/owner.py reads it again, checked, before
    it trusts it."""
    try:
        return owner_from_json((Path(data_dir) / OWNER_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None


def owner_from_json(text: str) -> Owner | None:
    try:
        fields = json.loads(text)
        served = {k: str(fields[k]) for k in _SERVED if isinstance(fields.get(k), str)}
        return Owner(int(fields["pid"]), str(fields["verb"]), str(fields["since"]), **served)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


_SERVED = ("address", "account_id", "database_id", "database_name", "index_name")


def holder_of(refusal: DataInUseError) -> Owner | None:
    """The owner record a refusal named (None for a holder that left none)."""
    return refusal.holder if isinstance(refusal.holder, Owner) else None


def wait_for_brief_holder(open_once: Callable[[], T], brief: Callable[[Owner], bool], wait_s: float,
                          pause_s: float) -> T:
    """`open_once()`, tried again every `pause_s` while the folder's holder is one `brief` says lets go on its own
    soon, up to `wait_s`; any other refusal is raised at once. A holder removes its record just before it unlocks,
    so a refusal with no record after a brief holder's is that holder letting go: waited for too."""
    deadline = time.monotonic() + wait_s
    waited_on: Owner | None = None
    while True:
        try:
            return open_once()
        except DataInUseError as refused:
            holder = holder_of(refused) or waited_on
            if holder is None or not brief(holder) or time.monotonic() > deadline:
                raise
            waited_on = holder
            time.sleep(pause_s)


def in_use_message(data_dir: str | Path, owner: Owner | None) -> str:
    if owner is None:
        who = "another process (it left no owner record)"
    elif owner.pid == os.getpid():
        return (f"{data_dir} is already open in this process ({owner.verb}, since {owner.since}); "
                "close that Env before opening the folder again")
    else:
        who = f"pid {owner.pid} ({owner.verb}, since {owner.since})"
    way_in = (f"reach the data through its API at {owner.address}" if owner and owner.address
              else "let one `memory-sim serve` own the folder and reach the data through its API")
    return f"{data_dir} is in use by {who}; stop it first, or {way_in}"


class FolderLock:
    """The held lock of one data folder; `release()` (or leaving the `with` block) gives it up."""

    def __init__(self, data_dir: Path, lock: Any, owner: Owner) -> None:
        self.data_dir = data_dir
        self.owner = owner
        self._lock = lock

    @classmethod
    def acquire(cls, data_dir: str | Path, verb: str | None = None) -> FolderLock:
        from filelock import FileLock, Timeout

        data = Path(data_dir)
        # thread_local=False: the server and the scheduler release from other threads than the one that acquired.
        lock = FileLock(data / LOCK_FILE, timeout=0, mode=0o600, thread_local=False)
        try:
            _own_folder(data)
            lock.acquire()
        except Timeout:
            holder = _current_owner(data)
            raise DataInUseError(in_use_message(data, holder), holder) from None
        except OSError as exc:  # a read-only or missing mount, a file where the folder should be
            raise ConfigError(f"cannot lock the data folder {data}: {exc.strerror or exc}") from exc
        held = cls(data, lock, Owner(os.getpid(), verb or _verb, datetime.now().isoformat(" ", "seconds")))
        try:
            held._write_owner()
            (data / TOKEN_FILE).unlink(missing_ok=True)  # a killed owner's: nothing serves with it any more
        except BaseException:
            lock.release()
            raise
        return held

    @property
    def held(self) -> bool:
        return bool(self._lock.is_locked)

    def publish(
        self,
        address: str,
        token: str | None = None,
        *,
        account_id: str | None = None,
        database_id: str | None = None,
        database_name: str | None = None,
        index_name: str | None = None,
    ) -> None:
        """Records where the owner serves the folder (and which account, database and index there hold the folder's
        own data), so other processes can work through it. `token` goes first into a file only this user can
        read: whoever sees the address can then authenticate."""
        if token is not None:
            self._write_token(token)
        self.owner = replace(self.owner, address=address, account_id=account_id, database_id=database_id,
                             database_name=database_name, index_name=index_name)
        self._write_owner()

    def withdraw(self) -> None:
        """The owner stops serving: the token file goes, the record keeps the owner without an address."""
        (self.data_dir / TOKEN_FILE).unlink(missing_ok=True)
        if self.owner.address is not None and self.held:
            self.owner = Owner(self.owner.pid, self.owner.verb, self.owner.since)
            self._write_owner()

    def release(self) -> None:
        if not self.held:
            return
        try:
            (self.data_dir / TOKEN_FILE).unlink(missing_ok=True)
            (self.data_dir / OWNER_FILE).unlink(missing_ok=True)  # before unlocking: the next owner writes its own
        finally:
            self._lock.release()

    def _write_token(self, token: str) -> None:
        write_private(self.data_dir, TOKEN_FILE, token)  # a new 0600 file, never an older file's mode

    def _write_owner(self) -> None:
        write_private(self.data_dir, OWNER_FILE,
                      json.dumps({k: v for k, v in asdict(self.owner).items() if v is not None}))

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _own_folder(data: Path) -> None:
    """`data` made (0700) when missing; ConfigError when it is not this user's own, or its lock file is a link."""
    with suppress(FileExistsError):
        data.mkdir(parents=True, mode=0o700)
    problem = own_folder_problem(data)
    if problem is None and (data / LOCK_FILE).is_symlink():
        problem = f"{data / LOCK_FILE} is a symbolic link"
    if problem is not None:
        raise ConfigError(f"will not keep data in {data}: {problem}; use a folder of your own that only you can "
                          "write (chmod go-w)")


def _current_owner(data: Path, patience_s: float = 0.5) -> Owner | None:
    """The holder's record; a new holder writes it just after locking, so a missing or dead one is re-read."""
    deadline = time.monotonic() + patience_s
    while True:
        owner = read_owner(data)
        if owner is not None and owner.alive():
            return owner
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)  # waiting for another process to finish writing its record
