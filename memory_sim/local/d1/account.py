"""Named local D1 databases under `<data>/d1/`, one file each (`<name>.duckdb` or `<name>.sqlite`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from memory_sim.bindings.d1 import check_database_name
from memory_sim.bindings.d1_account_limits import check_database_count
from memory_sim.damage import d1_sidecars
from memory_sim.errors import ConfigError, D1Error
from memory_sim.local.d1.core import D1CoreDatabase
from memory_sim.local.d1.time_limit import D1_QUERY_TIME_LIMIT_S

Engine = Literal["duckdb", "sqlite"]
_SUFFIX = {"duckdb": ".duckdb", "sqlite": ".sqlite"}


class D1Account:
    """Creates, lists, opens and deletes the local D1 databases of one data folder."""

    def __init__(self, data_dir: str | Path, engine: Engine = "duckdb", *,
                 time_limit_s: float = D1_QUERY_TIME_LIMIT_S, sqlite_synchronous: str = "normal",
                 max_databases: int | None = None) -> None:
        """`time_limit_s`: D1's limit on one query (time_limit.py), for every database opened here;
        `sqlite_synchronous`: how the sqlite engine commits ('normal' or 'full', sqlite_engine.py);
        `max_databases`: how many databases `create` allows (default: D1's 1,000,000 per account)."""
        self.max_databases = max_databases
        if engine not in _SUFFIX:
            raise ConfigError(f"unknown D1 engine {engine!r}: expected 'duckdb' or 'sqlite'")
        self.engine: Engine = engine
        self.root = Path(data_dir) / "d1"
        self.time_limit_s = time_limit_s
        if sqlite_synchronous not in ("normal", "full"):
            raise ConfigError(f"unknown sqlite synchronous level {sqlite_synchronous!r}: expected 'normal' or 'full'")
        self.sqlite_synchronous = sqlite_synchronous

    def path(self, name: str) -> Path:
        return self.root / f"{check_database_name(name)}{_SUFFIX[self.engine]}"

    def list(self) -> list[str]:
        suffix = _SUFFIX[self.engine]
        if not self.root.exists():
            return []
        return sorted(p.name[: -len(suffix)] for p in self.root.iterdir() if p.name.endswith(suffix))

    def create(self, name: str) -> D1CoreDatabase:
        path = self.path(name)  # checks the name before anything is written
        existing = self.list()
        if name in existing:
            raise D1Error(f"database {name!r} already exists")
        check_database_count(len(existing), self.max_databases)
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)  # the data is this user's only
        if self.engine == "sqlite":
            _write_empty_sqlite(path)
        return self._open(path)

    def get(self, name: str) -> D1CoreDatabase:
        if name not in self.list():
            raise D1Error(f"no database named {name!r} (create it with `memory-sim d1 create {name}`)")
        path = self.path(name)
        if path.stat().st_size == 0:  # both engines write a header at once (see create): this one was emptied
            from memory_sim.damage import d1_damaged

            raise d1_damaged(path, "the file is empty")
        return self._open(path)

    def delete(self, name: str) -> None:
        path = self.path(name)
        if not path.exists():
            raise D1Error(f"no database named {name!r}")
        for extra in (path, *d1_sidecars(path)):
            extra.unlink(missing_ok=True)

    def _open(self, path: Path) -> D1CoreDatabase:
        if self.engine == "sqlite":
            from memory_sim.local.d1.sqlite_engine import SqliteDatabase

            return SqliteDatabase(path, time_limit_s=self.time_limit_s,
                                  synchronous=self.sqlite_synchronous)  # type: ignore[arg-type]  # checked above
        from memory_sim.local.d1.duckdb_engine import DuckDBDatabase

        return DuckDBDatabase(path, time_limit_s=self.time_limit_s)


def _write_empty_sqlite(path: Path) -> None:
    """SQLite leaves a new database file empty until its first write, and takes an empty file for a new
    database: written out now (under another name, then renamed), an empty file can only mean a damaged one."""
    import os
    import sqlite3

    partial = path.with_name(f".{path.name}.new")
    connection = sqlite3.connect(str(partial))
    try:
        connection.execute("VACUUM")
    finally:
        connection.close()
    os.replace(partial, path)
