"""The one rule that decides which memories reach the vector index. Pure: no I/O.

A summary always does (consolidation makes it from a day's memories: it is that day's long-term memory). An
observation does when its importance is above `MemoryConfig.index_threshold` (0.7), and only then: the rule reads
the memory alone, never what else happened that day, so consolidation's linking a day of one memory to it indexes
nothing (measured on the village eval: indexing such days' memories too lowered precision@5 in every semantic
mode; benchmarks/village_eval.md). Observations at or below the threshold stay in D1, where keyword recall,
diaries, consolidation and `decision_context` (memory/recalling/recent.py) find them.

`remember_many(index_all=True)` is the caller's explicit override (LoCoMo indexes every turn), not the rule.
"""

from __future__ import annotations

from typing import Protocol


class Indexable(Protocol):
    """What the rule reads of a memory (a `ShortTermMemory` or a `StoredMemory`)."""

    @property
    def kind(self) -> str: ...
    @property
    def importance(self) -> float: ...


def reaches_index(memory: Indexable, threshold: float) -> bool:
    """Whether `memory` belongs in the vector index under `threshold` (`MemoryConfig.index_threshold`)."""
    return memory.kind == "summary" or memory.importance > threshold
