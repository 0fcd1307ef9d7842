"""A small hand-written world: three NPCs, 30 memories of their own over 10 days, lived hour by hour on the sim
clock with the scheduled jobs (consolidation every 6 sim hours) and a diary at the end of each day, as the
village driver does. Days with one memory, days with several, memories of two sentences, opinions about others.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_sim.memory.models import Recollection, ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.scheduling import SimScheduler
from memory_sim.sim.clock import SimClock

DAYS = 10
DIARY_HOUR = 23
HERBALIST_CURED = "The herbalist cured my fever. Maybe I was wrong about her."
DISTRUST = "I think Cora is a fraud. Cora sells weeds and calls them remedies."
PROFILES = (
    ("bram", "Bram", "farmer", "grows barley by the river"),
    ("cora", "Cora", "herbalist", "keeps a garden of remedies"),
    ("wren", "Wren", "innkeeper", "runs the Crooked Kettle"),
)

# npc, day, hour, text, importance, type, about
MEMORIES: tuple[tuple[str, int, int, str, float, str, tuple[str, ...]], ...] = (
    ("bram", 1, 9, "Cora sold me a tonic that tasted of pond water.", 0.5, "opinion", ("cora",)),
    ("bram", 1, 15, "The barley in the east field is coming up thin.", 0.4, "event", ()),
    ("bram", 2, 10, DISTRUST, 0.75, "opinion", ("cora",)),
    ("bram", 3, 8, "Wren poured me a free ale at the Crooked Kettle.", 0.6, "event", ("wren",)),
    ("bram", 3, 14, "Wren thinks the river will flood this spring.", 0.45, "relationship", ("wren",)),
    ("bram", 4, 11, "A fox got into the hen house and took two hens.", 0.7, "event", ()),
    ("bram", 5, 9, "I woke with a burning fever and could not stand.", 0.85, "event", ()),
    ("bram", 5, 20, "Cora left a jar of willow bark tea at my door.", 0.6, "event", ("cora",)),
    ("bram", 6, 12, HERBALIST_CURED, 0.9, "opinion", ("cora",)),
    ("bram", 7, 10, "I mended the fence by the river.", 0.3, "event", ()),
    ("bram", 8, 16, "Wren charged me double for a bowl of stew.", 0.55, "relationship", ("wren",)),
    ("bram", 9, 9, "Cora asked me to bring her river mint from the east field.", 0.5, "relationship", ("cora",)),
    ("cora", 1, 8, "I planted feverfew and yarrow along the south wall.", 0.4, "event", ()),
    ("cora", 2, 13, "Bram called my tonic pond water in front of the whole market.", 0.7, "opinion", ("bram",)),
    ("cora", 3, 19, "Wren is the only one who pays for remedies on time.", 0.6, "opinion", ("wren",)),
    ("cora", 4, 10, "A frost blackened half of the mint bed.", 0.5, "event", ()),
    ("cora", 5, 18, "Bram is down with a fever. I left willow bark tea at his door.", 0.8, "event", ("bram",)),
    ("cora", 6, 11, "Bram thanked me for the tea. He looked ashamed.", 0.75, "relationship", ("bram",)),
    ("cora", 6, 15, "I think Bram is proud but not unkind.", 0.65, "opinion", ("bram",)),
    ("cora", 8, 9, "I dried elderflowers in the loft.", 0.3, "event", ()),
    ("cora", 9, 14, "Wren asked for something to help her sleep.", 0.5, "relationship", ("wren",)),
    ("wren", 1, 20, "Bram drank three ales and complained about the herbalist.", 0.55, "opinion", ("bram", "cora")),
    ("wren", 2, 12, "The brewer's cart lost a wheel outside the inn.", 0.4, "event", ()),
    ("wren", 3, 8, "I gave Bram a free ale; he looked worn out.", 0.5, "event", ("bram",)),
    ("wren", 4, 21, "Cora pays her tab on time and never drinks too much.", 0.6, "opinion", ("cora",)),
    ("wren", 4, 22, "Cora's sleeping draught works better than any ale.", 0.65, "opinion", ("cora",)),
    ("wren", 5, 17, "The river rose to the second step of the inn.", 0.8, "event", ()),
    ("wren", 7, 19, "Bram and the herbalist shared a table and laughed.", 0.7, "relationship", ("bram", "cora")),
    ("wren", 8, 16, "Bram haggled over the price of barley again.", 0.45, "relationship", ("bram",)),
    ("wren", 10, 12, "I hired a new cook from the next valley.", 0.5, "event", ()),
)


def memories() -> list[ShortTermMemory]:
    return [
        ShortTermMemory(npc, text, importance, WorldTime(day, hour), type=kind, about=about)  # type: ignore[arg-type]
        for npc, day, hour, text, importance, kind, about in MEMORIES
    ]


def save_profiles(system: MemorySystem) -> None:
    db = system.env.DB
    db.batch([
        db.prepare("INSERT INTO npc_state (npc_id, name, role, description) VALUES (?, ?, ?, ?)").bind(*profile)
        for profile in PROFILES
    ])


def live(system: MemorySystem, clock: SimClock, days: int = DAYS) -> None:
    """Days 1..`days` hour by hour: the scheduled jobs, the hour's memories, each NPC's diary at 23:00."""
    save_profiles(system)
    scheduler = SimScheduler(system)
    by_hour: dict[int, list[ShortTermMemory]] = {}
    for memory in memories():
        by_hour.setdefault(memory.world_time.hours, []).append(memory)
    for hours in range(WorldTime(1).hours, WorldTime(days + 1).hours):
        when = WorldTime.from_hours(hours)
        clock.advance_to(when)
        scheduler.tick(clock())
        system.remember_many(by_hour.get(hours, []))
        if when.hour == DIARY_HOUR:
            for npc, *_ in PROFILES:
                system.write_diary(npc, when.day)
    clock.advance_to(WorldTime(days + 1))
    scheduler.tick(clock())


def readme_calls(system: MemorySystem) -> dict[str, list[Recollection]]:
    """Every recall-like call of the README's Python API, for Bram about Cora; the jobs run after them."""
    question = "What does Bram think of Cora?"
    out = {f"recall-{mode}": system.recall("bram", question, top_k=5, mode=mode) for mode in ("vector", "keyword", "hybrid")}
    out["weighted"] = system.weighted_recall("bram", question, current_day=DAYS + 1)
    out["decision"] = system.decision_context("bram", "Shall I ask the herbalist for help?")
    relationship = system.relationship_context("bram", "cora")
    out["relationship-bram"], out["relationship-cora"] = relationship.a_recalls, relationship.b_recalls
    system.write_diary("bram", DAYS)
    system.consolidate(), system.decay_and_prune(), system.retry_pending()
    return out


def normalised(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def repeated_texts(found: Sequence[Recollection]) -> list[str]:
    texts = [normalised(r.text) for r in found]
    return sorted({t for t in texts if texts.count(t) > 1})
