"""Named local D1 databases under `<data>/d1/`, one file each (`<name>.duckdb` or `<name>.sqlite`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from memory_sim.errors import ConfigError, D1Error
from memory_sim.local.d1_core import D1CoreDatabase

Engine = Literal["duckdb", "sqlite"]
_SUFFIX = {"duckdb": ".duckdb", "sqlite": ".sqlite"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class D1Account:
    """Creates, lists, opens and deletes the local D1 databases of one data folder."""

    def __init__(self, data_dir: str | Path, engine: Engine = "duckdb") -> None:
        if engine not in _SUFFIX:
            raise ConfigError(f"unknown D1 engine {engine!r}: expected 'duckdb' or 'sqlite'")
        self.engine: Engine = engine
        self.root = Path(data_dir) / "d1"

    def path(self, name: str) -> Path:
        if not _NAME.match(name):
            raise D1Error(f"invalid database name {name!r}: letters, digits, '-' and '_' (at most 64)")
        return self.root / f"{name}{_SUFFIX[self.engine]}"

    def list(self) -> list[str]:
        suffix = _SUFFIX[self.engine]
        if not self.root.exists():
            return []
        return sorted(p.name[: -len(suffix)] for p in self.root.iterdir() if p.name.endswith(suffix))

    def create(self, name: str) -> D1CoreDatabase:
        path = self.path(name)  # checks the name before anything is written
        if name in self.list():
            raise D1Error(f"database {name!r} already exists")
        self.root.mkdir(parents=True, exist_ok=True)
        return self._open(path)

    def get(self, name: str) -> D1CoreDatabase:
        if name not in self.list():
            raise D1Error(f"no database named {name!r} (create it with `memory-sim d1 create {name}`)")
        return self._open(self.path(name))

    def delete(self, name: str) -> None:
        path = self.path(name)
        if not path.exists():
            raise D1Error(f"no database named {name!r}")
        for extra in (path, path.with_name(path.name + ".wal"), path.with_name(path.name + "-journal")):
            extra.unlink(missing_ok=True)

    def _open(self, path: Path) -> D1CoreDatabase:
        if self.engine == "sqlite":
            from memory_sim.local.d1_sqlite import SqliteDatabase

            return SqliteDatabase(path)
        from memory_sim.local.d1_duckdb import DuckDBDatabase

        return DuckDBDatabase(path)
