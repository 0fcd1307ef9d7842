"""A data folder's own Env served as one account of the local API (`local`, memory_sim/owner.py): how the
folder's owner shares its data with other processes, and how `memory-sim serve` serves the folder's memories.

Same objects, never a second opening: the account's Vectorize is the Env's (one Chroma client in the process),
database `database_id_for(name)` is `env.DB` (one DuckDB handle), and the folder's other D1 databases
(`<data>/d1/`) are opened on first use, under the same stable ids. Every call into the Vectorize account holds
the account's lock, which is also the lock the Env's own bindings take (`owner.guard_env`). The index and the
database the Env works on cannot be deleted through the API while it runs.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memory_sim.bindings.vectorize import VectorizeAccount
from memory_sim.folder_lock import database_id_for
from memory_sim.server.accounts import Account, D1Factory
from memory_sim.server.envelope import CODE_BAD_REQUEST, ApiError

if TYPE_CHECKING:
    from memory_sim.env import Env  # the server layer sits below env.py: it is handed an Env, never opens one


def _unused_factory(folder: Any) -> VectorizeAccount:
    raise AssertionError("the folder's own account serves the Env's Vectorize account")


def _in_use(what: str, to: str = "delete it") -> ApiError:
    return ApiError(400, CODE_BAD_REQUEST, f"{what} is in use by the folder's owner; stop it to {to}")


class _ServedIndex:
    """The Env's own index as the routes see it: all but deleting a metadata index the memory system declares."""

    def __init__(self, index: Any, name: str) -> None:
        self._index, self._name = index, name

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def delete_metadata_index(self, property_name: str) -> Any:
        from memory_sim.memory.writing.provision import refuse_deleting_declared

        refuse_deleting_declared(self._name, property_name)
        return self._index.delete_metadata_index(property_name)


class _ServedVectorize:
    """The Env's Vectorize account as the routes see it (they hold the account's lock): all but deleting the
    Env's own index, or a metadata index the memory system declares on it."""

    def __init__(self, account: VectorizeAccount, in_use: str) -> None:
        self._account, self._in_use = account, in_use

    def __getattr__(self, name: str) -> Any:
        return getattr(self._account, name)

    def index(self, name: str) -> Any:
        found = self._account.index(name)
        return _ServedIndex(found, name) if name == self._in_use else found

    def delete_index(self, name: str) -> None:
        if name == self._in_use:
            raise _in_use(f"index {name!r}")
        self._account.delete_index(name)


class EnvAccount(Account):
    """The account over `env`: `vectorize_account` is the Env's unguarded account, `lock` the one its guarded
    bindings take, `d1_factory` what opens the folder's D1 databases (the server's own, `Accounts.d1_factory`)."""

    def __init__(self, env: Env, vectorize_account: VectorizeAccount, lock: threading.RLock,
                 d1_factory: D1Factory) -> None:
        settings = env.settings
        super().__init__(settings.data_dir, d1_factory, _unused_factory, lock)
        self.database_name = settings.database_name
        self.database_id = database_id_for(settings.database_name)
        self._vectorize = _ServedVectorize(vectorize_account, settings.index_name)
        self._open_dbs[self.database_id] = env.DB

    def catalogue(self) -> dict[str, dict[str, Any]]:
        """Every D1 database of the folder, by its stable id."""
        return {database_id_for(name): {"name": name, "created_at": file_created_at(self.d1.path(name))}
                for name in self.d1.list()}

    def create_database(self, name: str) -> dict[str, Any]:
        with self.lock:
            if name in self.d1.list():
                raise ApiError(400, CODE_BAD_REQUEST, f"A database with name '{name}' already exists")
            database_id = database_id_for(name)
            self._open_dbs[database_id] = self.d1.create(name)
            return self.describe_database(database_id)

    def delete_database(self, database_id: str) -> None:
        with self.lock:
            entry = self.describe_database(database_id)
            if database_id == self.database_id:
                raise _in_use(f"database {entry['name']!r}")
            opened = self._open_dbs.pop(database_id, None)
            if opened is not None:
                opened.close()
            self.d1.delete(entry["name"])
            self.time_travel.forget(database_id)

    def replace_database_file(self, database_id: str, staged: Any) -> None:
        if database_id == self.database_id:
            raise _in_use(f"database {self.database_name!r}", "restore it")
        super().replace_database_file(database_id, staged)

    def close(self) -> None:
        """Closes what the account opened itself; the Env closes its own bindings."""
        with self.lock:
            self._open_dbs.pop(self.database_id, None)
            for database in self._open_dbs.values():
                database.close()
            self._open_dbs.clear()


def file_created_at(path: Any) -> str:
    """A folder database's `created_at` as the API gives it: its file's time, ISO 8601 in UTC."""
    try:
        stamp = path.stat().st_mtime
    except OSError:
        stamp = 0.0
    return datetime.fromtimestamp(stamp, UTC).isoformat().replace("+00:00", "Z")
