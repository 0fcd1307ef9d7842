"""The data folder the inspector reads, opened the one way every process opens it (`Env.from_settings`).

- Under `memory-sim serve` the server's own Env is handed in and used as it is (`Folder.of_env`).
- `memory-sim inspect` opens the folder per request burst (`Folder.from_settings`): a folder another process
  runs (`memory-sim run`) is read through that owner's API, so the pages follow the run on every reload; a
  stopped folder is opened here and closed again after `hold_s` idle seconds, so the inspector does not keep
  the folder from `memory-sim run` while nobody is looking.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from memory_sim.errors import ConfigError

if TYPE_CHECKING:
    from memory_sim.env import Env
    from memory_sim.memory.system import MemorySystem
    from memory_sim.settings import Settings


class Folder:
    """Hands out the folder's Env (and a MemorySystem over it for recall), one request at a time."""

    def __init__(self, settings: Settings | None = None, env: Env | None = None, hold_s: float = 3.0) -> None:
        self.settings, self._env, self._given = settings, env, env is not None
        self.hold_s = hold_s
        self._system: MemorySystem | None = None
        self._owner_pid: int | None = None
        self._lock = threading.RLock()
        self._timer: threading.Timer | None = None

    @classmethod
    def of_env(cls, env: Env) -> Folder:
        return cls(env=env)

    @classmethod
    def from_settings(cls, settings: Settings, hold_s: float = 3.0) -> Folder:
        if settings.backend == "local" and not Path(settings.data_dir).is_dir():
            raise ConfigError(f"no data folder {str(settings.data_dir)!r} (a mistyped --data or $MEMORY_SIM_DATA?)")
        return cls(settings, hold_s=hold_s)

    @property
    def label(self) -> str:
        settings = self.settings if self.settings is not None else self._env.settings if self._env else None
        return str(settings.data_dir) if settings is not None else ""

    @property
    def through_owner(self) -> int | None:
        """The pid of the owner the folder is read through, if it is."""
        return self._owner_pid

    @contextmanager
    def env(self) -> Iterator[Env]:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            env = self._current()
            try:
                yield env
            finally:
                if not self._given and self._owner_pid is None and self.hold_s >= 0:
                    self._timer = threading.Timer(self.hold_s, self.close)
                    self._timer.daemon = True
                    self._timer.start()

    @contextmanager
    def system(self, seconds: float) -> Iterator[MemorySystem]:
        """A MemorySystem over the Env whose clock stands at `seconds` of world time."""
        from memory_sim.memory.system import MemorySystem

        with self.env() as env:
            if self._system is None or self._system.env is not env:
                self._system = MemorySystem(env, clock=lambda: seconds)
            self._system.clock = lambda: seconds
            yield self._system

    def _current(self) -> Env:
        from memory_sim.folder_lock import read_owner

        if self._given:
            assert self._env is not None
            return self._env
        if self._env is not None and self._owner_pid is not None:
            owner = read_owner(self.label)
            if owner is None or owner.pid != self._owner_pid or not owner.alive():
                self._drop()  # the owner stopped (or another took over): open the folder anew
        if self._env is None:
            self._env = self._open()
        return self._env

    def _open(self) -> Env:
        from memory_sim.env import Env
        from memory_sim.owner import announcing, serving

        assert self.settings is not None
        routes: list[str] = []
        with serving(False), announcing(routes.append):  # never serve: the inspector only looks
            env = Env.from_settings(self.settings)
        if routes:
            from memory_sim.folder_lock import read_owner

            owner = read_owner(self.label)
            self._owner_pid = owner.pid if owner is not None else -1
        return env

    def _drop(self) -> None:
        env, self._env, self._system, self._owner_pid = self._env, None, None, None
        if env is not None:
            env.close()

    def close(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._given:
                self._drop()
