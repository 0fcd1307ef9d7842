"""Per-account state of the local server: each account id sees only its own indexes and databases.

    <data>/accounts/<account_id>/vectorize/       Chroma files of that account's indexes
    <data>/accounts/<account_id>/d1/               that account's D1 database files
    <data>/accounts/<account_id>/d1/databases.json database uuid -> name and creation time

The server opens no backend itself: it is handed a `VectorizeFactory` and a `D1Factory` (the Env builder's:
`memory_sim.builder.server`). The backends are not thread-safe (the Vectorize mutation queue), and FastAPI runs
handlers on a thread pool, so every call into an account's Vectorize holds that account's lock. D1 databases
lock themselves.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_sim.bindings import vectorize_validation as check
from memory_sim.bindings.vectorize import VectorizeAccount, VectorizeIndex
from memory_sim.damage import d1_sidecars
from memory_sim.server.envelope import CODE_BAD_REQUEST, CODE_D1_NOT_FOUND, ApiError
from memory_sim.server.time_travel import DatabaseHistory, TimeTravel

ACCOUNT_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # also what a token's accounts may be named (auth.py)
# A factory keeps the account's vectors in the folder it is given: that folder existing is how a server (also a
# restarted one) knows the account has a Vectorize, without opening one (which would create it) on a read.
VectorizeFactory = Callable[[Path], VectorizeAccount]
# An account's D1 databases by name, kept under the folder it is given (`<folder>/d1/`): list, create, get, delete,
# path, as memory_sim.local.d1.account.D1Account has them.
D1Factory = Callable[[Path], Any]


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class Account:
    """One account: its Vectorize account (lazily opened), its D1 databases by uuid."""

    folder: Path
    d1_factory: D1Factory
    vectorize_factory: VectorizeFactory
    lock: threading.RLock = field(default_factory=threading.RLock)
    _vectorize: VectorizeAccount | None = None
    _d1: Any = None
    _open_dbs: dict[str, Any] = field(default_factory=dict)
    time_travel_options: dict[str, Any] = field(default_factory=dict)
    _time_travel: TimeTravel | None = None

    @property
    def vectorize(self) -> VectorizeAccount:
        with self.lock:
            self._drop_if_gone()
            if self._vectorize is None:
                self._vectorize = self.vectorize_factory(self.folder / "vectorize")
            return self._vectorize

    def stored_vectorize(self) -> VectorizeAccount | None:
        """The account's Vectorize if it has one (adopted, open, or on disk), else None. Every route but index
        creation uses this: opening Chroma creates its folder, and a read must leave nothing on disk."""
        with self.lock:
            self._drop_if_gone()
            if self._vectorize is None and (self.folder / "vectorize").is_dir():
                return self.vectorize
            return self._vectorize

    def _drop_if_gone(self) -> None:
        """An open Vectorize whose Chroma process died is let go unsaved, so this request opens it afresh from
        what Chroma holds (a write cut short there was never acknowledged)."""
        if getattr(self._vectorize, "process_gone", False):
            self._vectorize.abandon()  # type: ignore[union-attr]
            self._vectorize = None

    def index(self, name: str) -> VectorizeIndex:
        """An existing index, or Vectorize's not-found error (also when the account has no Vectorize yet)."""
        stored = self.stored_vectorize()
        if stored is None:
            raise check.index_not_found(check.check_index_name(name))
        return stored.index(name)

    def adopt_vectorize(self, account: VectorizeAccount) -> None:
        with self.lock:
            self._vectorize = account

    # --- D1 ---------------------------------------------------------------------------------------------------
    @property
    def d1(self) -> Any:
        if self._d1 is None:
            self._d1 = self.d1_factory(self.folder)
        return self._d1

    def _catalogue_path(self) -> Path:
        return self.folder / "d1" / "databases.json"

    def catalogue(self) -> dict[str, dict[str, Any]]:
        path = self._catalogue_path()
        return json.loads(path.read_text()) if path.exists() else {}

    def _save_catalogue(self, catalogue: dict[str, dict[str, Any]]) -> None:
        path = self._catalogue_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(catalogue, indent=1))

    def create_database(self, name: str) -> dict[str, Any]:
        with self.lock:
            catalogue = self.catalogue()
            if any(entry["name"] == name for entry in catalogue.values()):
                raise ApiError(400, CODE_BAD_REQUEST, f"A database with name '{name}' already exists")
            database = self.d1.create(name)
            database_id = str(uuid.uuid4())
            catalogue[database_id] = {"name": name, "created_at": now_iso()}
            self._save_catalogue(catalogue)
            self._open_dbs[database_id] = database
            self.time_travel.of(database_id, name).created()  # the empty database: the oldest state
            return self.describe_database(database_id)

    def describe_database(self, database_id: str) -> dict[str, Any]:
        entry = self.catalogue().get(database_id)
        if entry is None:
            raise ApiError(404, CODE_D1_NOT_FOUND, f"The database {database_id} could not be found")
        path = self.d1.path(entry["name"])
        size = path.stat().st_size if path.exists() else 0
        return {"uuid": database_id, "name": entry["name"], "created_at": entry["created_at"],
                "version": "production", "num_tables": None, "file_size": size}

    def database(self, database_id: str) -> Any:
        with self.lock:
            if database_id not in self._open_dbs:
                entry = self.describe_database(database_id)
                self._open_dbs[database_id] = self.d1.get(entry["name"])
            return self._open_dbs[database_id]

    def delete_database(self, database_id: str) -> None:
        with self.lock:
            entry = self.describe_database(database_id)
            opened = self._open_dbs.pop(database_id, None)
            if opened is not None:
                opened.close()
            self.d1.delete(entry["name"])
            self.time_travel.forget(database_id)
            catalogue = self.catalogue()
            catalogue.pop(database_id, None)
            self._save_catalogue(catalogue)

    @property
    def time_travel(self) -> TimeTravel:
        """The kept states of the account's databases (time_travel.py), made on first use."""
        with self.lock:
            if self._time_travel is None:
                self._time_travel = TimeTravel(self.folder / "d1" / "time-travel", self.d1_factory,
                                               **self.time_travel_options)
            return self._time_travel

    def history(self, database_id: str) -> DatabaseHistory:
        """The kept states of a database (7404 if it does not exist)."""
        known = self.time_travel.known(database_id)
        return known or self.time_travel.of(database_id, self.describe_database(database_id)["name"])

    def replace_database_file(self, database_id: str, staged: Path) -> None:
        """Puts the database file `staged` (checked, on the same file system) in place of the database's own, by
        renames: the open database is closed, the old file set aside, the new one renamed in and opened. If any
        step fails the old file goes back and is reopened: the database is as it was."""
        with self.lock:
            name = self.describe_database(database_id)["name"]
            live = Path(self.d1.path(name))
            opened = self._open_dbs.pop(database_id, None)
            if opened is not None:
                opened.close()  # waits for the statement or batch in flight (each holds the database's lock)
            moved = [(p, p.with_name(f".{p.name}.before-restore"))
                     for p in (live, *d1_sidecars(live)) if p.exists()]
            for path, aside in moved:
                os.replace(path, aside)
            try:
                os.replace(staged, live)
                self._open_dbs[database_id] = self.d1.get(name)
            except BaseException:
                live.unlink(missing_ok=True)
                for path, aside in moved:
                    os.replace(aside, path)
                raise
            for _, aside in moved:
                aside.unlink(missing_ok=True)

    def close(self) -> None:
        with self.lock:
            for database in self._open_dbs.values():
                database.close()
            self._open_dbs.clear()
            close = getattr(self._vectorize, "close", None)
            if close is not None:
                close()
            self._vectorize = None


class Accounts:
    """Every account of one server, by id. An account's folder is created by its first index or database, never
    by a read."""

    def __init__(self, data_dir: str | Path, *, vectorize_factory: VectorizeFactory, d1_factory: D1Factory,
                 clock: Callable[[], float] = time.time, time_travel: dict[str, Any] | None = None) -> None:
        """`time_travel`: options of every account's `TimeTravel` (interval_s, retention_s, max_kept, max_bytes,
        clock)."""
        self.root = Path(data_dir) / "accounts"
        self.d1_factory = d1_factory
        self.vectorize_factory = vectorize_factory
        self._accounts: dict[str, Account] = {}
        self._lock = threading.Lock()
        self.time_travel_options = dict(time_travel or {})

    def get(self, account_id: str) -> Account:
        if not ACCOUNT_ID.match(account_id):
            raise ApiError(400, CODE_BAD_REQUEST, f"invalid account id {account_id!r}")
        with self._lock:
            if account_id not in self._accounts:
                self._accounts[account_id] = Account(self.root / account_id, self.d1_factory, self.vectorize_factory,
                                                     time_travel_options=self.time_travel_options)
            return self._accounts[account_id]

    def install(self, account_id: str, account: Account) -> None:
        """Serves `account` (e.g. a data folder's own Env, server/env_account.py) under `account_id`."""
        if not ACCOUNT_ID.match(account_id):
            raise ApiError(400, CODE_BAD_REQUEST, f"invalid account id {account_id!r}")
        with self._lock:
            account.time_travel_options = self.time_travel_options
            self._accounts[account_id] = account

    def close(self) -> None:
        with self._lock:
            for account in self._accounts.values():
                account.close()
            self._accounts.clear()
