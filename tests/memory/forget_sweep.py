"""One day of Mira's that consolidation condenses, and a sweep of every reader of the memory for a text (each recall
mode, weighted recall, both contexts, the listing, each memory and its lineage, the diaries, an export of D1 and
of the index): what forgetting tests search for the forgotten words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from memory_sim.transfer import export_sql, export_vectors

DEBT = "Oswin owes me three silver for the ale he drank at the harvest dance."
PIES = "Hilda's pies are the best in the valley, warm from the oven at dawn."
WELL = "The well by the mill tasted of iron after the storm."
SECRET_WORDS = ("owes", "silver", "harvest dance")


def memories_of_day_one(system: MemorySystem, clock: SimClock) -> dict[str, str]:
    ids = {}
    for hour, text in ((9, DEBT), (12, PIES), (15, WELL)):
        memory = ShortTermMemory("mira", text, 0.9, WorldTime(1, hour), type="opinion", about=("oswin",))
        system.remember(memory)
        ids[text] = memory.id
    system.write_diary("mira", 1)
    clock.advance_to(WorldTime(3, 0))
    system.consolidate()
    return ids


def every_reader(system: MemorySystem, tmp_path: Path, npc: str = "mira", other: str = "oswin") -> str:
    """What every reader of the memory gives back, as one text to search: each recall mode, weighted recall,
    the listing (forgotten ones too), each memory and its lineage, the diaries, both contexts, and an export
    of D1 and of the index."""
    system.register_npc(other, "Oswin", "the miller") if not store.npc_profile(system.env.DB, other) else None
    seen: list[Any] = []
    for query in ("Who owes me silver?", "the ale at the harvest dance", "pies and the well"):
        for mode in ("vector", "keyword", "hybrid"):
            seen += system.recall(npc, query, top_k=10, mode=mode)
            seen += system.weighted_recall(npc, query, top_k=10, mode=mode)
        seen += system.decision_context(npc, query, top_k=10)
    seen += system.memories(npc).memories + system.memories(npc, state="forgotten").memories
    for m in store.all_memories(system.env.DB) + system.memories(npc, state="forgotten").memories:
        seen += [system.memory(m.id), system.lineage(m.id)]
    seen += [store.diary(system.env.DB, npc, day) for day in range(0, 5)]
    seen.append(system.relationship_context(npc, other, top_k=10))
    export_sql(system.env.DB, tmp_path / "d1.sql")
    export_vectors(system.env.VECTORIZE, tmp_path / "vectors.ndjson")
    seen += [(tmp_path / "d1.sql").read_text(), (tmp_path / "vectors.ndjson").read_text()]
    return repr(seen)


def assert_nowhere(text: str, words: tuple[str, ...] = SECRET_WORDS) -> None:
    found = [w for w in words if w in text]
    assert not found, f"{found} still readable"


