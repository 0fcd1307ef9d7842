"""`stats()` counts forgotten memories apart from the ones still remembered."""

from __future__ import annotations

from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from tests.memory.memory_env import build_env


def test_forgotten_memories_are_counted_apart() -> None:
    clock = SimClock(WorldTime(3))
    system = MemorySystem(build_env(clock), clock=clock)
    kept = ShortTermMemory("ada", "The well water tasted of iron.", 0.9, WorldTime(1, 8))
    gone = ShortTermMemory("ada", "I lost a copper coin by the mill.", 0.9, WorldTime(2, 9))
    low = ShortTermMemory("ada", "It drizzled all afternoon.", 0.2, WorldTime(2, 15))
    for memory in (kept, gone, low):
        system.remember(memory)
    before = system.stats()
    assert (before["memories"], before["forgotten"], before["indexed"]) == (3, 0, 2)

    system.forget(gone.id, reason="the player asked")
    after = system.stats()
    assert (after["memories"], after["forgotten"], after["indexed"], after["vectors"]) == (2, 1, 1, 1)
    assert after["memories"] == len(system.memories("ada").memories)
