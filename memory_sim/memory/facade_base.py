"""What the parts of the `MemorySystem` facade share (system.py: writing and reading; records.py: NPCs and
memories listed, fixed and forgotten, diaries; upkeep.py: the jobs): the state the facade keeps, the calls each part
makes on the whole (the jobs' `MemoryHost`, and `settle`), and the summaries a forget or correction remakes."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.consolidation.summarise import Summariser
from memory_sim.memory.models import Recollection, ShortTermMemory
from memory_sim.memory.writing import rederive
from memory_sim.memory.writing.keying import KeyRegistry


class FacadeBase(ABC):
    """The facade's state (set by `MemorySystem.__init__`) and what its parts call on it."""

    env: WorkerEnv
    clock: Callable[[], float]
    config: MemoryConfig
    summariser: Summariser
    _keys: KeyRegistry  # the registry as key inference reads it
    _nothing_to_retry: bool  # nothing pending and no forget half done
    _left_behind: bool  # the background left rows to retry
    _consolidated_through: int | None  # the last diary day consolidated, as this system last saw

    @abstractmethod
    def settle(self) -> None: ...

    @abstractmethod
    def remember_many(
        self, memories: Sequence[ShortTermMemory], *, index_all: bool = False, wait: bool = True
    ) -> set[str]: ...

    @abstractmethod
    def index_memories(self, ids: Sequence[str], *, wait: bool = True) -> set[str]: ...

    @abstractmethod
    def unindex(self, ids: Sequence[str], counter: str) -> int: ...

    @abstractmethod
    def recall(self, npc_id: str, query: str, top_k: int = 5) -> list[Recollection]: ...

    def _remake_summaries(self) -> bool:
        """Summaries a forget or correction hid, made again from their remaining sources (writing/rederive.py)."""
        def summarise(sentences: list[tuple[str, float]]) -> str:
            return self.summariser.summarise(sentences, self.config.summary_sentences)

        return rederive.finish(self.env, summarise, self.config, self.clock())
