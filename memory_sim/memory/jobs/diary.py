"""Diaries: each NPC's day in D1, its most important short-term memories in order, and one past memory they
brought back. Written for many NPCs at once in a few statements (the village writes every NPC's each night):
one read of the day's memories, one read of the remembered neighbours, one batch of diaries."""

from __future__ import annotations

from collections.abc import Sequence

from memory_sim.errors import VectorizeError
from memory_sim.memory.consolidation.condense import diary_entries
from memory_sim.memory.jobs.host import MemoryHost
from memory_sim.memory.ledger import store
from memory_sim.memory.models import Recollection, StoredMemory
from memory_sim.memory.recalling import recall as recall_sources

NEIGHBOURS = 5


def write_diaries(system: MemoryHost, npc_ids: Sequence[str], day: int, max_entries: int) -> dict[str, str]:
    """The diaries of `npc_ids` for `day`, written to D1; NPCs with no observation that day get none."""
    db = system.env.DB
    days = store.memories_of_day(db, npc_ids, day)
    chosen = {n: c for n in dict.fromkeys(npc_ids) if (c := diary_entries(days.get(n, []), max_entries))}
    focus = {n: max(c, key=lambda m: (m.importance, -m.hour)) for n, c in chosen.items()}
    matches = {n: _stored_neighbours(system, n, f) for n, f in focus.items()}
    rows = store.memories_by_ids(db, [i for found in matches.values() if found for i, _ in found])
    texts = {}
    for npc_id, entries in chosen.items():
        found = matches[npc_id]
        near = (system.recall(npc_id, focus[npc_id].content, top_k=NEIGHBOURS) if found is None
                else recall_sources.from_rows(npc_id, found, rows))
        # an earlier observation, never a summary: a diary (and what is condensed from it) does not nest echoes
        past = [r for r in near if r.day < day and r.source == "vectorize" and r.kind == "observation"]
        texts[npc_id] = " ".join([m.content for m in entries] + _echo(past))
    if texts:
        db.batch(store.put_diaries(db, day, texts))
    return texts


def _echo(past: list[Recollection]) -> list[str]:
    return [f"It brought back day {past[0].day}: {past[0].text}"] if past else []


def _stored_neighbours(system: MemoryHost, npc_id: str, focus: StoredMemory) -> list[tuple[str, float]] | None:
    """Memories like `focus` by its stored vector when indexed (no embedding needed); None: recall by text."""
    if focus.index_state != "indexed":
        return None
    try:
        result = system.env.VECTORIZE.query_by_id(focus.id, top_k=NEIGHBOURS + 1, filter={"npcId": npc_id})
    except VectorizeError:
        return None  # not visible yet, or the index failed: recall by text
    return [(m.id, m.score) for m in result.matches if m.id != focus.id]
