"""What the jobs use of the memory system (`MemorySystem` is one): its env, tunables, summariser and clock, and
the few methods they call back. The jobs name this protocol, never `system.py`: the facade imports the jobs, the
jobs import nothing of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.consolidation.summarise import Summariser
from memory_sim.memory.models import Recollection, ShortTermMemory


class MemoryHost(Protocol):
    env: WorkerEnv
    config: MemoryConfig
    summariser: Summariser
    clock: Callable[[], float]

    def remember_many(
        self, memories: Sequence[ShortTermMemory], *, index_all: bool = False, wait: bool = True
    ) -> set[str]: ...

    def index_memories(self, ids: Sequence[str], *, wait: bool = True) -> set[str]: ...

    def unindex(self, ids: Sequence[str], counter: str) -> int: ...

    def recall(self, npc_id: str, query: str, top_k: int = 5) -> list[Recollection]: ...
