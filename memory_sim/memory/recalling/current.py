"""Current state and history from state keys (schema migration 8), read from D1: the newest memory of an NPC
under a key is its current state, older ones its history. Recall asks here for the keys its candidates carry, so
a key's current memory is ranked (memory/scoring.py's `current_first`) even when only an older
version was among the candidates: no two memories need to be recalled together to be linked.

A wrong inferred key would let an unrelated newer memory take a relevant older one's place, so the hand-over
trusts a version only where the question found it (it is relevant) or its key is sure (`sure`: the game's, or
inferred with confidence at least HANDOVER_FLOOR); a memory is pulled in from D1 only when it is sure and a sure
version of its key was found. An unsure newer version the question did not find leaves the older ones as they
are (they stay history in `history`, `lineage` and `current_state`, which read every version)."""

from __future__ import annotations

from collections.abc import Sequence

from memory_sim.bindings.d1 import D1Database
from memory_sim.memory.beliefs.story import Stance, View, opinion_key, opinion_story, stances
from memory_sim.memory.ledger import store
from memory_sim.memory.models import BeliefLinks, Lineage, Recollection, StoredMemory
from memory_sim.memory.recalling.recall import to_recollection
from memory_sim.memory.recalling.recall_cache import NpcView
from memory_sim.memory.scoring import Chains

HANDOVER_FLOOR = 0.6  # an inferred key at least this sure may bring its newer memory into recall unasked

def with_current(
    db: D1Database, npc_id: str, found: Sequence[Recollection], view: NpcView | None = None
) -> tuple[list[Recollection], Chains, frozenset[str]]:
    """`found` with the current memory of each key among them added where missing (score 0: `current_first`
    gives it its versions' best), the keys' chains (ids oldest first), and the ids among them whose state the game
    named (`_given`). From the NPC's recall view where the candidates came from one proved current (hybrid
    recall), else one D1 read; none when no candidate carries a key."""
    keys = sorted({r.state_key for r in found if r.state_key is not None and r.npc_id == npc_id})
    if not keys:
        return list(found), {}, frozenset()
    histories = view.key_chains(keys) if view is not None else store.keyed(db, npc_id, keys)
    present = {r.id for r in found}
    chains = {key: trusted for key, ms in histories.items() if (trusted := handover_chain(ms, present))}
    pulled = [_pulled(ms[-1]) for ms in chains.values() if ms[-1].id not in present]
    given = frozenset(m.id for ms in chains.values() for m in ms if _given(m))
    return [*found, *pulled], {key: [m.id for m in ms] for key, ms in chains.items()}, given


def sure(memory: StoredMemory) -> bool:
    """Whether the memory's key is sure enough to hand over unasked: the game's, or inferred at HANDOVER_FLOOR."""
    return memory.key_source == "game" or (memory.key_confidence or 0.0) >= HANDOVER_FLOOR


def handover_chain(versions: Sequence[StoredMemory], present: set[str]) -> list[StoredMemory]:
    """The versions of a key (oldest first) recall hands scores round among: those the question found (`present`)
    and those whose key is `sure`; the newest of them, when not found, only where a found version is sure too."""
    kept = [m for m in versions if m.id in present or sure(m)]
    if kept and kept[-1].id not in present and not any(sure(m) for m in kept if m.id in present):
        kept = [m for m in kept if m.id in present]
    return kept


def _given(memory: StoredMemory) -> bool:
    """Whether the game said which state the memory sets: it gave the key, or wrote an opinion memory about one
    NPC (the structure's `opinion:<npc>`, whatever the words: "Tom saved my loom from the fire")."""
    return memory.key_source == "game" or (memory.type == "opinion" and bool(memory.state_key)
                                           and str(memory.state_key).startswith("opinion:"))


def _pulled(memory: StoredMemory) -> Recollection:
    return to_recollection(memory, 0.0, "vectorize" if memory.index_state == "indexed" else "d1")


def current_state(db: D1Database, npc_id: str) -> dict[str, StoredMemory]:
    """{state key: the NPC's newest memory under it}."""
    return {key: ms[-1] for key, ms in store.keyed(db, npc_id).items()}


def history(db: D1Database, npc_id: str, key: str) -> list[StoredMemory]:
    """The NPC's memories under `key`, newest (the current state) first."""
    return list(reversed(store.keyed(db, npc_id, [key]).get(key, [])))


def links(db: D1Database, memory: StoredMemory) -> BeliefLinks:
    """The next newer memory under the memory's key (None: it is current, or has no key) and the one just before
    it."""
    if memory.state_key is None:
        return BeliefLinks(memory.id)
    chain = store.keyed(db, memory.npc_id, [memory.state_key]).get(memory.state_key, [])
    at = next((i for i, m in enumerate(chain) if m.id == memory.id), None)
    if at is None:
        return BeliefLinks(memory.id)
    later = chain[at + 1] if at + 1 < len(chain) else None
    return BeliefLinks(memory.id, later, tuple(chain[at - 1 : at]) if at > 0 else ())


def opinion(db: D1Database, npc_id: str, of: str) -> str:
    """What `npc_id` thinks of `of` (its memories under "opinion:<of>"), told by beliefs/story.py with the NPCs'
    registered names (their ids when not registered)."""
    names = {str(p["npc_id"]): str(p["name"]) for p in store.npc_profiles(db)}
    return opinion_story(names.get(npc_id, npc_id), names.get(of, of), _views(db, npc_id, of))


def opinion_views(db: D1Database, npc_id: str, of: str) -> list[Stance]:
    """The views `npc_id` held of `of`, newest first, restatements of one view as one (beliefs/story.py)."""
    return stances(_views(db, npc_id, of))


def _views(db: D1Database, npc_id: str, of: str) -> list[View]:
    return [View(m.day, m.content, m.state_value) for m in history(db, npc_id, opinion_key(of))]


def lineage(db: D1Database, memory: StoredMemory) -> Lineage:
    """Where a memory came from (a summary's sources), where it went (the summaries it went into), oldest first,
    and its state key's history, newest first."""
    sources = store.sources_of(db, [memory.id]).get(memory.id, ())
    summaries = store.summaries_of(db, memory.id)
    rows = store.memories_by_ids(db, [*sources, *summaries])

    def in_order(ids: Sequence[str]) -> tuple[StoredMemory, ...]:
        return tuple(sorted((rows[i] for i in ids if i in rows), key=lambda m: (m.day, m.hour, m.id)))

    versions = () if memory.state_key is None else tuple(history(db, memory.npc_id, memory.state_key))
    return Lineage(memory.id, in_order(sources), in_order(summaries), memory.state_key, versions)
