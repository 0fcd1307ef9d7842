"""The data folder the inspector reads, opened the one way every process opens it (`Env.from_settings`).

- Under `memory-sim serve` the server's own Env is handed in and used as it is (`Folder.of_env`).
- `memory-sim inspect` opens the folder per request (`Folder.from_settings`): a folder another process runs
  (`memory-sim run`) is read through that owner's API, so the pages follow the run on every reload; a stopped
  folder is opened for one request and closed before its answer goes out, so the inspector never holds the
  folder's lock between requests, however often a page reloads. While it holds the lock, its owner record
  names it a brief holder (`builder.BRIEF_HOLDER`): a `remember` or `run` that finds it waits for it to let go
  instead of being refused. A request that finds the folder held by another `memory-sim` verb that does not
  serve it (a `remember`, a `stats`) waits for it the same way, up to `WAIT_S`.
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
    from memory_sim.folder_lock import Owner
    from memory_sim.memory.system import MemorySystem
    from memory_sim.settings import Settings


WAIT_S = 60.0  # how long a request waits for a folder another verb holds without serving it: a `remember` holds
# it from its start (the model loaded) to its exit, many seconds on a busy machine; a page may wait that long
_RETRY_S = 0.05


class Folder:
    """Hands out the folder's Env (and a MemorySystem over it for recall), one request at a time."""

    def __init__(self, settings: Settings | None = None, env: Env | None = None) -> None:
        self.settings, self._env, self._given = settings, env, env is not None
        self._system: MemorySystem | None = None
        self._owner_pid: int | None = None
        self._lock = threading.RLock()
        self._depth = 0  # nested `env()` blocks of the request in progress: the outermost one closes

    @classmethod
    def of_env(cls, env: Env) -> Folder:
        return cls(env=env)

    @classmethod
    def from_settings(cls, settings: Settings) -> Folder:
        if settings.backend == "local" and not Path(settings.data_dir).is_dir():
            raise ConfigError(f"no data folder {str(settings.data_dir)!r} (a mistyped --data or $MEMORY_SIM_DATA?)")
        return cls(settings)

    @property
    def label(self) -> str:
        settings = self.settings if self.settings is not None else self._env.settings if self._env else None
        return str(settings.data_dir) if settings is not None else ""

    @property
    def through_owner(self) -> int | None:
        """The pid of the owner the folder is read through, if it is."""
        return self._owner_pid

    @property
    def held(self) -> bool:
        """Whether this process holds the folder itself now (not through an owner, not handed an Env)."""
        return not self._given and self._env is not None and self._owner_pid is None

    @contextmanager
    def env(self) -> Iterator[Env]:
        """The folder's Env for one request (blocks nest: a page's several reads share one opening). A folder
        held here is let go when the outermost block ends; one read through its owner stays connected."""
        with self._lock:
            env = self._current()
            self._depth += 1
            try:
                yield env
            finally:
                self._depth -= 1
                if self._depth == 0 and self.held:
                    self._drop()

    @contextmanager
    def system(self, seconds: float) -> Iterator[MemorySystem]:
        """A MemorySystem over the Env whose clock stands at `seconds` of world time."""
        from memory_sim.memory.system import MemorySystem

        with self.env() as env:
            if self._system is None or self._system.env is not env:
                self._system = MemorySystem(env, clock=lambda: seconds)
                self._system.read_only = True  # the inspector's recalls change no count, record no access
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
        """Opens the folder (itself, or through its owner), waiting up to WAIT_S for a holder that does not serve
        it (a CLI verb) to let go."""
        from memory_sim.folder_lock import wait_for_brief_holder

        # another process's verb holds the folder for a moment
        return wait_for_brief_holder(self._open_once, _brief, WAIT_S, _RETRY_S)

    def _open_once(self) -> Env:
        from memory_sim.builder import BRIEF_HOLDER
        from memory_sim.env import Env
        from memory_sim.folder_lock import acting_as
        from memory_sim.owner import announcing, serving

        assert self.settings is not None
        routes: list[str] = []
        # never serve (the inspector only looks); named a brief holder, so openers wait for it (builder)
        with serving(False), announcing(routes.append), acting_as(BRIEF_HOLDER):
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
            if not self._given:
                self._drop()


def _brief(holder: Owner) -> bool:
    """A holder that lets go on its own soon: another `memory-sim` verb that does not serve the folder."""
    return holder.verb.startswith("memory-sim ") and not holder.address
