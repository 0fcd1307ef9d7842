"""`MemorySystem`: the NPC memory API over an `Env` (Vectorize, D1, an embedder), as the design describes.

    memory = MemorySystem(env, clock=sim_clock)
    memory.remember(ShortTermMemory("margaret", "The blacksmith mended my oven door for nothing.", 0.8,
                                    WorldTime(day=3, hour=14), type="opinion", about=("tom",)))
    memory.recall("margaret", "What does Margaret think of Tom?")
    memory.weighted_recall("margaret", "What does Margaret think of Tom?", current_day=14)

D1 is written first and is the source of truth; indexing failures leave an outbox row for `retry_pending`.
`clock()` gives the world's time in seconds (the sim clock in simulations and tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memory_sim.bindings.limits import VECTORIZE_MAX_TOP_K
from memory_sim.errors import InvalidInput, VectorizeError
from memory_sim.memory import forgetting, indexer, rules, store
from memory_sim.memory import npcs as npc_registry
from memory_sim.memory import recall as recall_sources
from memory_sim.memory.condense import diary_entries
from memory_sim.memory.forgetting import MemoryPage
from memory_sim.memory.models import (
    DEFAULT_RECALL_MODE,
    RECALL_MODES,
    JobReport,
    Lineage,
    MemoryConfig,
    RecallMode,
    Recollection,
    ShortTermMemory,
    StoredMemory,
    WorldTime,
)
from memory_sim.memory.npcs import Npc
from memory_sim.memory.recall_cache import RecallCache
from memory_sim.memory.schema import migrate
from memory_sim.memory.scoring import distinct, rank_by_score, rank_weighted, weighted_score
from memory_sim.memory.summarise import ExtractiveSummariser, Summariser

if TYPE_CHECKING:
    from memory_sim.env import Env  # the memory layer needs only its shape; env.py sits above it

Clock = Callable[[], float]
Ranking = Callable[[list[Recollection], int], list[Recollection]]


@dataclass(frozen=True, slots=True)
class RelationshipContext:
    npc_a: str
    npc_b: str
    a_recalls: list[Recollection]
    b_recalls: list[Recollection]


def _check_recall(npc_id: str, query: str, top_k: int, mode: str) -> None:
    """recall's input rules (memory/rules.py). Any non-empty NPC id is looked up: ids remembered by earlier
    versions may be longer than new memories may use."""
    rules.text("npc_id", npc_id)
    rules.text("query", query)
    rules.top_k(top_k)
    if mode not in RECALL_MODES:
        raise InvalidInput(f"mode must be one of {', '.join(RECALL_MODES)}, got {rules.shown(mode)}")


class MemorySystem:
    """One NPC memory system over one `Env`. Jobs (consolidate, decay_and_prune, retry_pending) are methods
    that delegate to memory/jobs.py, so the sim clock and APScheduler drive the same functions."""

    def __init__(
        self,
        env: Env,
        *,
        clock: Clock,
        config: MemoryConfig | None = None,
        summariser: Summariser | None = None,
    ) -> None:
        self.env = env
        self.clock = clock
        self.config = config or MemoryConfig()
        self.summariser: Summariser = summariser or ExtractiveSummariser()
        migrate(env.DB, applied_at=0.0)  # 0: the same data gives byte-identical D1 contents in every run
        self._recall_cache = RecallCache(env.DB)  # hybrid recall's per-NPC state, proved current against D1

    # --- writing --------------------------------------------------------------------------------------------

    def remember(self, memory: ShortTermMemory) -> bool:
        """Stores one memory; returns True when it is in the vector index now (False: D1 only or queued)."""
        return memory.id in self.remember_many([memory])

    def remember_many(self, memories: Sequence[ShortTermMemory], *, index_all: bool = False) -> set[str]:
        """One D1 transaction for all, then one embedding call for the important ones; returns the ids
        indexed now. `index_all` indexes regardless of importance (consolidated summaries)."""
        memories = list({m.id: m for m in memories}.values())  # the same memory twice in one call is kept once
        indexable = [m for m in memories if index_all or m.importance > self.config.index_threshold]
        now = self.clock()
        states = {m.id: "pending" for m in indexable}
        statements = store.insert_memories(self.env.DB, memories, self.config.initial_decay, states)
        statements += store.enqueue_many(self.env.DB, [m.id for m in indexable], now)
        if statements:
            self.env.DB.batch(statements)
        return self.index_memories([m.id for m in indexable])

    def index_memory(self, memory: ShortTermMemory) -> bool:
        """The indexing step alone, for a memory already in D1 (e.g. after `remember` kept it D1-only)."""
        self.env.DB.batch(
            store.set_state(self.env.DB, [memory.id], "pending")
            + store.enqueue_many(self.env.DB, [memory.id], self.clock())
        )
        return memory.id in self.index_memories([memory.id])

    def index_memories(self, ids: Sequence[str]) -> set[str]:
        """Embeds and upserts memories from D1 (memory/indexer.py); on failure they stay in the outbox with a
        backoff. Returns the ids indexed now."""
        return set(indexer.index(self.env, self.config, ids, self.clock()).indexed)

    def unindex(self, ids: Sequence[str], counter: str) -> int:
        """Drops the memories from the index (they stay in D1); returns how many (0 if the index failed)."""
        return indexer.unindex(self.env, ids, counter)

    # --- reading --------------------------------------------------------------------------------------------

    def today(self) -> int:
        return WorldTime.from_seconds(self.clock()).day

    def recall(
        self, npc_id: str, query: str, top_k: int = 5, mode: RecallMode = DEFAULT_RECALL_MODE
    ) -> list[Recollection]:
        """Top-k of this NPC's memories for the query; `score` is the mode's (hybrid: fused vector + BM25 +
        neighbour context; vector: cosine similarity), higher first. No two share a text, and a summary never
        stands beside a memory it was made from (the better-ranked stays)."""
        _check_recall(npc_id, query, top_k, mode)
        found = self._distinct_top(npc_id, query, top_k, mode, 2 * top_k + self.config.recall_headroom, rank_by_score)
        return found or self._nothing_for(npc_id)

    def weighted_recall(
        self,
        npc_id: str,
        query: str,
        current_day: int | None = None,
        top_k: int = 5,
        mode: RecallMode = DEFAULT_RECALL_MODE,
    ) -> list[Recollection]:
        """score * importance / (1 + (current_day - day) * decayFactor), highest first, with each memory's
        current decay factor from D1; repeats collapsed as in `recall`."""
        _check_recall(npc_id, query, top_k, mode)
        day = self.today() if current_day is None else rules.day(current_day, "current_day")

        def rank(found: list[Recollection], k: int) -> list[Recollection]:
            weighted = [
                replace(r, effective_score=weighted_score(r.score, r.importance, day, r.day, r.decay_factor))
                for r in found
            ]
            return rank_weighted(weighted, k)

        return self._distinct_top(
            npc_id, query, top_k, mode, top_k * self.config.candidate_factor, rank
        ) or self._nothing_for(npc_id)

    def _nothing_for(self, npc_id: str) -> list[Recollection]:
        """An empty recall, unless the id is another case of a registered NPC's: that is refused with a hint."""
        npc_registry.refuse_case_twin(self.env.DB, npc_id)
        return []

    def _distinct_top(
        self, npc_id: str, query: str, top_k: int, mode: RecallMode, k: int, rank: Ranking
    ) -> list[Recollection]:
        """The top k after collapsing repeats (scoring.distinct), asking for more candidates while repeats
        leave it short and more may exist."""
        k = min(VECTORIZE_MAX_TOP_K, k)
        while True:
            candidates = recall_sources.gather(
                self.env, npc_id, query, k, self.clock(), self.config, mode, self._recall_cache
            )
            if candidates.fell_back:
                self.env.DB.batch([store.bump(self.env.DB, "fallbacks")])
            found = recall_sources.with_sources(self.env, candidates.recollections)
            kept = distinct(rank(found, len(found)))
            if len(kept) >= top_k or candidates.fell_back or len(found) < k or k >= VECTORIZE_MAX_TOP_K:
                return kept[:top_k]
            k = min(VECTORIZE_MAX_TOP_K, 2 * k)

    def lineage(self, memory_id: str) -> Lineage:
        """Where a memory came from and where it went: the memories a summary was made from, and the summaries
        a memory went into (D1 rows, in the order they happened)."""
        rules.text("memory_id", memory_id)
        sources = store.sources_of(self.env.DB, [memory_id]).get(memory_id, ())
        summaries = store.summaries_of(self.env.DB, memory_id)
        rows = store.memories_by_ids(self.env.DB, [*sources, *summaries])

        def in_order(ids: Sequence[str]) -> tuple[StoredMemory, ...]:
            return tuple(sorted((rows[i] for i in ids if i in rows), key=lambda m: (m.day, m.hour, m.id)))

        return Lineage(memory_id, in_order(sources), in_order(summaries))

    # --- the design's three uses ----------------------------------------------------------------------------

    def decision_context(self, npc_id: str, situation: str, top_k: int = 5) -> list[Recollection]:
        """What the NPC recalls when deciding (e.g. "go to the pub tonight?"): weighted by age and importance."""
        return self.weighted_recall(npc_id, situation, self.today(), top_k)

    def relationship_context(self, npc_a: str, npc_b: str, top_k: int = 5) -> RelationshipContext:
        """Each recalls their history with the other; the query names the other by name and by role, since
        memories often say "the blacksmith" rather than "Tom"."""
        return RelationshipContext(
            npc_a,
            npc_b,
            self.weighted_recall(npc_a, self._about(npc_b), self.today(), top_k),
            self.weighted_recall(npc_b, self._about(npc_a), self.today(), top_k),
        )

    def _about(self, npc_id: str) -> str:
        profile = store.npc_profile(self.env.DB, npc_id)
        if profile is None:
            npc_registry.refuse_case_twin(self.env.DB, npc_id)
        name = npc_id if profile is None else profile["name"]
        return f"my history with {name}"  # recall's query expansion adds who they are (config.expand_npc_names)

    # --- NPCs (memory/npcs.py) ------------------------------------------------------------------------------

    def register_npc(
        self, id: str, name: str, role: str | None = None, aliases: Sequence[str] = (), traits: Sequence[str] = ()
    ) -> Npc:
        """Registers (or re-registers, replacing) an NPC: recall then expands its name, role, aliases and
        traits in queries that name it. Ids are case-sensitive; one differing from a registered id only in
        case is refused."""
        return npc_registry.register(self.env.DB, npc_registry.make(id, name, role, aliases, traits))

    def npcs(self) -> list[Npc]:
        return npc_registry.all_npcs(self.env.DB)

    def npc(self, id: str) -> Npc:
        """The registered NPC; NotFound (with a hint when only the case differs) otherwise."""
        return npc_registry.get(self.env.DB, id)

    def update_npc(
        self, id: str, *, name: str | None = None, role: str | None = None,
        aliases: Sequence[str] | None = None, traits: Sequence[str] | None = None,
    ) -> Npc:
        """Changes the fields given; the others stay."""
        old = self.npc(id)
        new = npc_registry.make(
            id, old.name if name is None else name, old.role if role is None else role,
            old.aliases if aliases is None else aliases, old.traits if traits is None else traits,
        )
        return npc_registry.register(self.env.DB, new)

    # --- listing, fixing and forgetting memories (memory/forgetting.py) -------------------------------------

    def memories(
        self, npc_id: str, *, since_day: int | None = None, until_day: int | None = None, type: str | None = None,
        kind: str | None = None, state: str | None = None, limit: int = 100, cursor: str | None = None,
    ) -> MemoryPage:
        """One page of the NPC's memories in remember order; pass `page.cursor` back for the next."""
        return forgetting.list_memories(self.env, npc_id, since_day=since_day, until_day=until_day, type=type,
                                        kind=kind, state=state, limit=limit, cursor=cursor)

    def memory(self, id: str) -> StoredMemory:
        """One memory by id, forgotten or not (NotFound when there is none)."""
        return forgetting.one(self.env, id)

    def update_importance(self, id: str, value: float) -> StoredMemory:
        """Sets a memory's importance (0..1); an indexed one is re-indexed so the index's copy agrees."""
        updated = forgetting.update_importance(self.env, id, value, self.clock())
        if updated.index_state == "pending":
            self.index_memories([id])
        return self.memory(id)

    def forget(self, ids: str | Sequence[str], reason: str) -> list[str]:
        """Forgets memories in D1 and the index, recording `reason`; returns the ids newly forgotten. Re-running
        it, or any `retry_pending`, finishes a forget a crash cut short."""
        return forgetting.forget(self.env, [ids] if isinstance(ids, str) else list(ids), reason, self.clock())

    def forget_npc(self, npc_id: str) -> list[str]:
        """Forgets all the NPC's memories and drops its registration, diaries and relationships."""
        return forgetting.forget_npc(self.env, npc_id, self.clock())

    def write_diary(self, npc_id: str, day: int, max_entries: int = 6) -> str:
        """The day's diary in D1: its most important short-term memories in order, and one past memory
        they brought back."""
        chosen = diary_entries(store.memories_of(self.env.DB, npc_id, day), max_entries)
        if not chosen:
            return ""
        lines = [m.content for m in chosen]
        echo = self._echo(npc_id, day, chosen)
        if echo is not None:
            lines.append(f"It brought back day {echo.day}: {echo.text}")
        text = " ".join(lines)
        store.put_diary(self.env.DB, npc_id, day, text)
        return text

    def _echo(self, npc_id: str, day: int, chosen: Sequence[StoredMemory]) -> Recollection | None:
        focus = max(chosen, key=lambda m: (m.importance, -m.hour))
        # an earlier observation, never a summary: a diary (and what is condensed from it) does not nest echoes
        past = [
            r
            for r in self._neighbours(npc_id, focus)
            if r.day < day and r.source == "vectorize" and r.kind == "observation"
        ]
        return past[0] if past else None

    def _neighbours(self, npc_id: str, focus: StoredMemory, k: int = 5) -> list[Recollection]:
        """Memories like `focus`: by its stored vector when indexed (no embedding needed), else by recall."""
        if focus.index_state == "indexed":
            try:
                result = self.env.VECTORIZE.query_by_id(focus.id, top_k=k + 1, filter={"npcId": npc_id})
                matches = [(m.id, m.score) for m in result.matches if m.id != focus.id]
                return recall_sources.from_index(self.env, npc_id, matches)
            except VectorizeError:
                pass  # not visible yet, or the index failed: recall by text below
        return self.recall(npc_id, focus.content, top_k=k)

    # --- jobs (memory/jobs.py) ------------------------------------------------------------------------------

    def consolidate(self, now: float | None = None) -> JobReport:
        from memory_sim.memory.jobs import consolidate

        return consolidate(self, self.clock() if now is None else now)

    def decay_and_prune(self, now: float | None = None) -> JobReport:
        from memory_sim.memory.jobs import decay_and_prune

        return decay_and_prune(self, self.clock() if now is None else now)

    def retry_pending(self, now: float | None = None) -> JobReport:
        from memory_sim.memory.jobs import retry_pending

        forgetting.finish(self.env)  # forgets a crash cut short
        return retry_pending(self, self.clock() if now is None else now)

    def stats(self) -> dict[str, int]:
        db = self.env.DB
        out = {
            "memories": store.count_memories(db),
            "indexed": store.count_memories(db, "index_state = 'indexed'"),
            "pending": store.outbox_size(db),
            "summaries": store.count_memories(db, "kind = 'summary'"),
        }
        try:
            out["vectors"] = self.env.VECTORIZE.describe().vector_count
        except VectorizeError:
            out["vectors"] = -1
        out.update(store.counters(db))
        return out

