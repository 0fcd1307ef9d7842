"""Ada's fortnight: a village NPC's memories over 15 sim days, for the tests of questions about time."""

from __future__ import annotations

from memory_env import build_env

from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.models import Recollection, ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

MODES = ("vector", "keyword", "hybrid", "weighted")
# Ada's fortnight: what she saw of Cole and the village. Several memories say "yesterday" or "day" in their
# words, so matching the question's words alone finds them, not the memories of the day asked about.
FORTNIGHT = [
    (1, 9, "cole-d01", "Cole said yesterday that she would help at the well, and she did."),
    (2, 10, "cole-d02", "She mended the fence by the pond with Cole."),
    (3, 14, "trip-leave", "Cole left on a trip to the coast to sell wool."),
    (5, 18, "trip-back", "Cole came back from his trip to the coast with a cart of salt."),
    (6, 8, "after-trip", "Cole paid off his debt to the miller with the salt money."),
    (6, 15, "cole-d06", "She told me yesterday's storm broke the mill wheel, the whole day was lost."),
    (8, 11, "cole-d08", "She spent the day at the market; yesterday she was ill, she said."),
    (10, 9, "cole-d10", "The day was long: she baked bread for the whole street."),
    (12, 9, "day12-a", "The smith's dog bit the baker's boy in the square."),
    (12, 17, "day12-b", "A travelling juggler performed outside the inn until dark."),
    (13, 10, "cole-d13", "She said yesterday was the best day of the harvest."),
    (14, 16, "day14", "Mira walked to the chapel and lit a candle for her mother."),
    (15, 8, "day15", "She told me what she did yesterday and the day before, in detail."),
]


def remember_fortnight(clock: SimClock) -> MemorySystem:
    system = MemorySystem(build_env(clock), clock=clock, config=MemoryConfig(calendar_start="2026-04-06"))
    for day, hour, memory_id, text in FORTNIGHT:
        clock.advance_to(WorldTime(day, hour))
        system.remember(ShortTermMemory("ada", text, 0.8, WorldTime(day, hour), id=memory_id))
    clock.advance_to(WorldTime(15, 12))
    return system


def ask(system: MemorySystem, question: str, mode: str, top_k: int = 5, now: WorldTime | None = None,
        ) -> list[Recollection]:
    """The question in `mode` ("weighted": weighted_recall); `now` only when given (older code lacks it)."""
    when = {} if now is None else {"now": now}
    if mode == "weighted":
        return system.weighted_recall("ada", question, top_k=top_k, **when)  # type: ignore[arg-type]
    return system.recall("ada", question, top_k=top_k, mode=mode, **when)  # type: ignore[arg-type]


def shown(found: list[Recollection], mode: str) -> list[float]:
    """The score each result shows: the weighted one in weighted recall, else the mode's."""
    return [(r.effective_score or 0.0) if mode == "weighted" else r.score for r in found]
