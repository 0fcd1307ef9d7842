"""`MemorySystem`: the NPC memory API over an `Env` (Vectorize, D1, an embedder), as the design describes.

    memory = MemorySystem(env, clock=sim_clock)
    memory.remember(ShortTermMemory("margaret", "The blacksmith mended my oven door for nothing.", 0.8,
                                    WorldTime(day=3, hour=14), type="opinion", about=("tom",)))
    memory.recall("margaret", "What does Margaret think of Tom?")
    memory.weighted_recall("margaret", "What does Margaret think of Tom?", current_day=14)

D1 is written first and is the source of truth: a memory to index is written `pending`, which is what
`retry_pending` finds if the process dies before indexing it; a failed attempt leaves an outbox row with its backoff.
`clock()` gives the world's time in seconds (the sim clock in simulations and tests).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from memory_sim.bindings.limits import VECTORIZE_MAX_TOP_K
from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import D1Error, InvalidInput, VectorizeError
from memory_sim.memory import npcs as npc_registry
from memory_sim.memory import rules
from memory_sim.memory.beliefs.detect import Belief
from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.consolidation.summarise import ExtractiveSummariser, Summariser
from memory_sim.memory.ledger import store
from memory_sim.memory.ledger.schema import migrate
from memory_sim.memory.models import (
    DEFAULT_RECALL_MODE,
    RECALL_MODES,
    BeliefLinks,
    JobReport,
    Lineage,
    RecallMode,
    Recollection,
    ShortTermMemory,
    StoredMemory,
    WorldTime,
)
from memory_sim.memory.npcs import Npc
from memory_sim.memory.recalling import access
from memory_sim.memory.recalling import recall as recall_sources
from memory_sim.memory.recalling.hybrid import HybridParams
from memory_sim.memory.recalling.presets import DEFAULT_SCORING, Scoring, check_scoring
from memory_sim.memory.recalling.recall_cache import RecallCache
from memory_sim.memory.scoring import distinct, rank_by_score, rank_weighted, yield_to_sources
from memory_sim.memory.writing import erasure, forgetting, indexer
from memory_sim.memory.writing.background import Background
from memory_sim.memory.writing.forgetting import MemoryPage

Clock = Callable[[], float]


class BeliefJudge(Protocol):
    """A second opinion on the offline rule's pairs (memory/beliefs/chat.py's `ChatJudge`)."""

    def judge(self, pairs: Sequence[tuple[Belief, Belief]]) -> Sequence[bool | None]: ...


Ranking = Callable[[list[Recollection], int], list[Recollection]]
P = ParamSpec("P")
R = TypeVar("R")


def _settled(method: Callable[Concatenate[MemorySystem, P], R]) -> Callable[Concatenate[MemorySystem, P], R]:
    """The method runs once background indexing (`remember_many(wait=False)`) is done: it sees every memory
    remembered before it as if indexed in line."""

    @functools.wraps(method)
    def settled(self: MemorySystem, /, *args: P.args, **kwargs: P.kwargs) -> R:
        self.settle()
        return method(self, *args, **kwargs)

    return settled


@dataclass(frozen=True, slots=True)
class RelationshipContext:
    """What two NPCs recall of each other: `a_recalls` are `npc_a`'s memories about `npc_b`, and the reverse;
    `a_opinion` is what `npc_a` thinks of `npc_b` now, then how that changed (`MemorySystem.opinion`), and the
    reverse."""

    npc_a: str
    npc_b: str
    a_recalls: list[Recollection]
    b_recalls: list[Recollection]
    a_opinion: str = ""
    b_opinion: str = ""


def _check_recall(npc_id: str, query: str, top_k: int, mode: str) -> None:
    """recall's input rules (memory/rules.py). Any non-empty NPC id is looked up: ids remembered by earlier
    versions may be longer than new memories may use."""
    rules.text("npc_id", npc_id)
    rules.text("query", query)
    rules.top_k(top_k)
    if mode not in RECALL_MODES:
        raise InvalidInput(f"mode must be one of {', '.join(RECALL_MODES)}, got {rules.shown(mode)}")


class MemorySystem:
    """One NPC memory system over one `Env` (Vectorize, D1 and an embedder).

    Args:
        env: where memories live (`Env.local(folder)`, `Env.in_memory()`, `Env.cloudflare(...)`).
        clock: a callable giving the world's time in seconds (a `SimClock`; one sim day is 86,400 seconds).
            "Today" and the jobs' notion of age come from it.
        config: the tunables (`MemoryConfig`); the defaults follow the design.
        summariser: what condenses a day in `consolidate` (the offline extractive one by default, or a
            `ChatSummariser`).
        judge: a chat model's word on which memory corrects which (`memory.beliefs.chat.ChatJudge`); None (the
            default) keeps the offline rule alone (memory/beliefs/detect.py).

    Units: days are whole sim days since the world began (`WorldTime.day`), hours 0-23 of that day, and
    times passed as `now` are seconds of world time, as `clock()` gives them. The jobs (`consolidate`,
    `decay_and_prune`, `retry_pending`) are what a scheduler runs; each is idempotent for a given `now`.
    """

    def __init__(
        self,
        env: WorkerEnv,
        *,
        clock: Clock,
        config: MemoryConfig | None = None,
        summariser: Summariser | None = None,
        judge: BeliefJudge | None = None,
    ) -> None:
        self.env = env
        self.clock = clock
        self.config = config or MemoryConfig()
        self.summariser: Summariser = summariser or ExtractiveSummariser()
        self.judge = judge
        migrate(env.DB, applied_at=0.0)  # 0: the same data gives byte-identical D1 contents in every run
        self._recall_cache = RecallCache(env.DB)  # hybrid and keyword recall's per-NPC state, proved current
        # True while this system knows nothing is pending and no forget is half done: set by a retry that
        # left nothing behind, cleared by anything here that may queue a row. Starts False: a dead process may
        # have left work.
        self._nothing_to_retry = False
        self._background = Background()  # remember_many(wait=False)'s indexing, one thread, in order
        self._left_behind = False  # the background left rows to retry (set there, lowered by retry_pending)

    # --- writing --------------------------------------------------------------------------------------------

    @_settled
    def remember(self, memory: ShortTermMemory) -> bool:
        """Stores one memory in D1; one with importance above `config.index_threshold` (0.7) is embedded and
        upserted to the index at once.

        Returns:
            True when the memory is in the vector index now; False when it is kept in D1 only (not important
            enough) or queued for `retry_pending` (the embedder or the index failed).
        """
        return memory.id in self.remember_many([memory])

    def remember_many(
        self, memories: Sequence[ShortTermMemory], *, index_all: bool = False, wait: bool = True
    ) -> set[str]:
        """Stores many memories: one D1 transaction for all, then one embedding call for the important ones.

        Args:
            memories: the memories; the same id twice is stored once.
            index_all: index every one regardless of importance (what consolidation does with summaries).
            wait: False returns once D1 holds the memories and leaves their embedding and upsert to one
                background thread, in order; every other method of this system (recall, the jobs, stats...)
                waits for that work before it reads, and `settle()` waits for it explicitly. A simulation
                writes its next hours while the model runs. A failure there is queued for `retry_pending`
                as in line; an exception is raised by the next method that waits.

        Returns:
            The ids that are in the vector index now (with `wait=False`: the ids handed to the background).
        """
        if wait:
            self.settle()
        memories = list({m.id: m for m in memories}.values())  # the same memory twice in one call is kept once
        indexable = [m for m in memories if index_all or m.importance > self.config.index_threshold]
        states = {m.id: "pending" for m in indexable}  # no outbox row: one is made only if the attempt fails
        decay = self.config.initial_decay
        if not memories:
            return set()
        db = self.env.DB
        try:
            results = db.batch(store.insert_memories(db, memories, decay, states))
        except D1Error as exc:
            if not store.is_memory_already_stored(exc):
                raise
            results = db.batch(store.insert_memories(db, memories, decay, states, again=True))
        written, bound = store.inserted_rows(results, memories, decay, states)
        ids, now = [m.id for m in indexable], self.clock()
        if wait or not ids:
            return self._index(ids, now, written, bound)
        self._background.submit(lambda: self._index_behind(ids, now, written, bound))
        return set(ids)

    def settle(self) -> None:
        """Waits for the indexing `remember_many(wait=False)` left to the background; raises the first exception
        it met (its memories stay `pending` in D1 for `retry_pending`)."""
        self._background.settle()

    @_settled
    def index_memory(self, memory: ShortTermMemory) -> bool:
        """Indexes a memory already in D1 (e.g. one `remember` kept in D1 only because of its importance).

        Returns:
            True when it is in the index now, False when it was queued for `retry_pending`.
        """
        self.env.DB.batch(
            store.set_state(self.env.DB, [memory.id], "pending")
            + store.enqueue_many(self.env.DB, [memory.id], self.clock())
        )
        return memory.id in self.index_memories([memory.id])

    def index_memories(self, ids: Sequence[str], *, wait: bool = True) -> set[str]:
        """Embeds and upserts memories already in D1, by id; those that fail stay queued for `retry_pending`
        with a backoff (an hour of world time, doubling). `wait=False` leaves the work to the background
        thread, after what is there already (as `remember_many(wait=False)` does).

        Returns:
            The ids that are in the index now (with `wait=False`: the ids handed to the background).
        """
        if not wait:
            ids, now = list(ids), self.clock()
            self._background.submit(lambda: self._index_behind(ids, now))
            return set(ids)
        self.settle()
        return self._index(ids, self.clock())

    def _index(self, ids: Sequence[str], now: float, known: dict[str, StoredMemory] | None = None,
               bound: int | None = None) -> set[str]:
        clear, self._nothing_to_retry = self._nothing_to_retry, False  # an exception leaves the rows queued
        report = indexer.index(self.env, self.config, ids, now, known=known, rows_at_most=bound)
        self._nothing_to_retry = clear and not report.postponed
        return set(report.indexed)

    def _index_behind(self, ids: Sequence[str], now: float, known: dict[str, StoredMemory] | None = None,
                      bound: int | None = None) -> None:
        """`_index` on the background thread. What it leaves to retry is marked in a flag of its own, which
        only `retry_pending` lowers, after settling: the two threads never write the same flag."""
        try:
            report = indexer.index(self.env, self.config, ids, now, known=known, rows_at_most=bound)
        except BaseException:
            self._left_behind = True
            raise
        if report.postponed:
            self._left_behind = True

    @_settled
    def unindex(self, ids: Sequence[str], counter: str) -> int:
        """Drops memories from the vector index; they stay in D1 (and in keyword recall).

        Args:
            ids: the memory ids.
            counter: the `stats()` counter to add the number to (e.g. "prunes").

        Returns:
            How many were dropped (0 when the index failed; the rows stay as they were).
        """
        return indexer.unindex(self.env, ids, counter)

    # --- reading --------------------------------------------------------------------------------------------

    def today(self) -> int:
        """The current sim day (whole days since the world began), from `clock()`."""
        return WorldTime.from_seconds(self.clock()).day

    @_settled
    def recall(
        self, npc_id: str, query: str, top_k: int = 5, mode: RecallMode = DEFAULT_RECALL_MODE, *,
        include_recent: bool = False,
    ) -> list[Recollection]:
        """This NPC's memories that best answer the query, by meaning (age and importance play no part; see
        `weighted_recall`).

        Args:
            npc_id: whose memories; only this NPC's are searched.
            query: a question or situation in plain words.
            top_k: how many to return (1-100).
            mode: "hybrid" (vector + BM25 over D1 + neighbouring memories, the default), "vector" (cosine
                similarity in the index) or "keyword" (BM25 over D1).
            include_recent: also search the NPC's recent memories kept in D1 only (importance at or below
                0.7, never embedded) by keyword and recency, with no embedding (memory/recalling/recent.py); they come
                back with `source="d1"`.

        Returns:
            Up to `top_k` `Recollection`s, highest `score` first (the mode's score). No two share a text, and a
            summary never stands beside a memory it was made from (the better-ranked stays). Empty when the
            NPC has no memories; an id that differs from a registered NPC's only in case is refused.
        """
        _check_recall(npc_id, query, top_k, mode)
        found = self._distinct_top(npc_id, query, top_k, mode, 2 * top_k + self.config.recall_headroom, rank_by_score,
                                   include_recent, weighted=False)
        return found or self._nothing_for(npc_id)

    @_settled
    def weighted_recall(
        self,
        npc_id: str,
        query: str,
        current_day: int | None = None,
        top_k: int = 5,
        mode: RecallMode = DEFAULT_RECALL_MODE,
        scoring: Scoring = DEFAULT_SCORING,
        *,
        include_recent: bool = False,
    ) -> list[Recollection]:
        """`recall`, ranked by the design's effective score:
        `score * importance / (1 + (current_day - day) * decayFactor)`, or another preset's.

        Args:
            npc_id: whose memories, as for `recall`.
            query: a question or situation in plain words.
            current_day: the sim day ages are counted to; `today()` when None.
            top_k: how many to return (1-100).
            mode: how candidates are found, as for `recall`.
            scoring: "design" (the formula above), "generative-agents-paper" or "generative-agents-code"
                (memory/recalling/presets.py). Every call records the game hour it returned each memory (its last
                access, which "generative-agents-code" ranks by).
            include_recent: also search recent memories kept in D1 only, as for `recall`.

        Returns:
            Up to `top_k` `Recollection`s with `effective_score` set (the preset's score), highest first, each
            with its memory's current decay factor; repeats collapsed as in `recall`.
        """
        _check_recall(npc_id, query, top_k, mode)
        scoring = check_scoring(scoring)
        day = self.today() if current_day is None else rules.day(current_day, "current_day")
        now_hours = day * rules.HOURS_PER_DAY + WorldTime.from_seconds(self.clock()).hour

        def rank(found: list[Recollection], k: int) -> list[Recollection]:
            scores = access.scored(self.env.DB, scoring, found, day, now_hours)
            return rank_weighted([replace(r, effective_score=s) for r, s in zip(found, scores, strict=True)], k)

        found = self._distinct_top(
            npc_id, query, top_k, mode, top_k * self.config.candidate_factor, rank, include_recent, weighted=True
        )
        if found:
            self.env.DB.batch(access.record(self.env.DB, [r.id for r in found], now_hours))
        return found or self._nothing_for(npc_id)

    def _nothing_for(self, npc_id: str) -> list[Recollection]:
        """An empty recall, unless the NPC is unknown (neither registered nor remembering anything; a name or
        role given for an id, a typo, a capital): that is refused with a hint (npcs.refuse_unknown)."""
        npc_registry.refuse_unknown(self.env.DB, npc_id)
        return []

    def _distinct_top(
        self, npc_id: str, query: str, top_k: int, mode: RecallMode, k: int, rank: Ranking,
        include_recent: bool = False, *, weighted: bool,
    ) -> list[Recollection]:
        """The top k after collapsing repeats (scoring.distinct), the newest state of each belief above the stale
        one (beliefs/ranking.py; by `effective_score` when `weighted`, else by `score`), asking for more
        candidates while repeats leave it short and more may exist; with `include_recent`, recent D1-only memories
        join the candidates. In hybrid `recall` a summary yields to a source of it scoring nearly as well
        (scoring.yield_to_sources): its lead there is words its other sentences add, not a better answer."""
        k = min(VECTORIZE_MAX_TOP_K, k)
        recent = self._recent(npc_id, query) if include_recent else []
        while True:
            candidates = recall_sources.gather(
                self.env, npc_id, query, k, self.clock(), self.config, mode, self._recall_cache
            )
            if candidates.fell_back:
                self.env.DB.batch([store.bump(self.env.DB, "fallbacks")])
            found = recall_sources.with_sources(self.env, candidates.recollections)
            found += [r for r in recent if r.id not in {f.id for f in found}]
            if mode == "hybrid" and not weighted:
                found = yield_to_sources(found, HybridParams().source_share)
            kept = self._newest_first(distinct(rank(found, len(found))), weighted, top_k, mode != "keyword")
            if len(kept) >= top_k or candidates.fell_back or len(found) < k or k >= VECTORIZE_MAX_TOP_K:
                return kept[:top_k]
            k = min(VECTORIZE_MAX_TOP_K, 2 * k)

    def _newest_first(self, kept: list[Recollection], weighted: bool, top_k: int, embed: bool) -> list[Recollection]:
        """Corrections among the candidates placed above the beliefs they correct (memory/beliefs/); one ranked
        below the top k trades places with the belief it corrects. `embed=False` (keyword recall) embeds
        nothing: only an opinion's turn, which needs no topic, links there."""
        from memory_sim.memory.beliefs import ranking
        from memory_sim.memory.beliefs.among import superseded_among

        cache = self._recall_cache
        refine = None if self.judge is None else self.judge.judge
        def profiles() -> list[dict[str, Any]]:
            """The registry as this recall's name expansion proved it (no statement), else read."""
            if cache is None:
                return store.npc_profiles(self.env.DB)
            return cache.known_profiles() or cache.profiles(cache.proof())

        stale = superseded_among(self.env, kept, profiles, embed=embed, refine=refine)
        if not stale:
            return kept
        if weighted:
            return ranking.newest_first(kept, stale, ranking.by_effective_score, ranking.lift_effective_score, top_k)
        return ranking.newest_first(kept, stale, window=top_k)

    def _recent(self, npc_id: str, query: str) -> list[Recollection]:
        """Recent D1-only memories by keyword and recency (memory/recalling/recent.py); no embedding."""
        from memory_sim.memory.recalling import recent

        expanded = recall_sources.expand_query(query, store.npc_profiles(self.env.DB), npc_id) if (
            self.config.expand_npc_names) else query
        return recent.recent_candidates(self.env, npc_id, query, expanded, self.today())

    @_settled
    def lineage(self, memory_id: str) -> Lineage:
        """Where a memory came from and where it went.

        Returns:
            A `Lineage`: `sources` are the memories a summary was made from, `summaries` the summaries a memory
            went into, each as D1 holds them, oldest first (by day and hour). Both are empty for a memory that
            took no part in consolidation.
        """
        rules.text("memory_id", memory_id)
        sources = store.sources_of(self.env.DB, [memory_id]).get(memory_id, ())
        summaries = store.summaries_of(self.env.DB, memory_id)
        rows = store.memories_by_ids(self.env.DB, [*sources, *summaries])

        def in_order(ids: Sequence[str]) -> tuple[StoredMemory, ...]:
            return tuple(sorted((rows[i] for i in ids if i in rows), key=lambda m: (m.day, m.hour, m.id)))

        return Lineage(memory_id, in_order(sources), in_order(summaries))

    @_settled
    def belief_links(self, memory_id: str) -> BeliefLinks:
        """Which later memory corrects or updates this one, and which earlier ones it corrects, among the NPC's
        memories (memory/beliefs/detect.py's rule, and the `judge` where one is configured): the history recall
        shows as `Recollection.superseded_by`.

        Returns:
            A `BeliefLinks`: `superseded_by` (a `StoredMemory`, or None) and `supersedes` (oldest first).

        Raises:
            NotFound: no memory has this id.
        """
        from memory_sim.memory.beliefs.among import embedded_similarity, stored_beliefs
        from memory_sim.memory.beliefs.detect import links

        memory = forgetting.one(self.env, memory_id)
        mine = {m.id: m for m in store.remembered_in_order(self.env.DB, memory.npc_id) if m.type == memory.type}
        beliefs = stored_beliefs(list(mine.values()), store.npc_profiles(self.env.DB))
        found = links(beliefs, embedded_similarity(self.env), None if self.judge is None else self.judge.judge)
        later = found.get(memory_id)
        earlier = sorted((mine[old] for old, (new, _) in found.items() if new == memory_id),
                         key=lambda m: (m.day, m.hour, m.id))
        return BeliefLinks(memory_id, None if later is None else mine[later[0]], tuple(earlier))

    # --- the design's three uses ----------------------------------------------------------------------------

    @_settled
    def decision_context(self, npc_id: str, situation: str, top_k: int = 5) -> list[Recollection]:
        """What the NPC recalls when deciding (e.g. "Shall I go to the pub tonight?").

        Returns:
            `weighted_recall` of the situation as of `today()`, recent memories kept in D1 only included
            (`include_recent=True`, as the design's decision module falls back to short-term memory): up to
            `top_k` `Recollection`s, weighted by age (in sim days) and importance, highest first.
        """
        return self.weighted_recall(npc_id, situation, self.today(), top_k, include_recent=True)

    @_settled
    def relationship_context(self, npc_a: str, npc_b: str, top_k: int = 5) -> RelationshipContext:
        """Each NPC recalls their history with the other, weighted as of `today()`. The query names the other
        by the name, role and aliases they were registered with, since memories often say "the blacksmith"
        rather than "Tom".

        Returns:
            A `RelationshipContext` with up to `top_k` `Recollection`s each way (a correction above the belief it
            corrects), and each one's opinion of the other, the current one first (`opinion`).
        """
        return RelationshipContext(
            npc_a,
            npc_b,
            self.weighted_recall(npc_a, self._about(npc_b), self.today(), top_k),
            self.weighted_recall(npc_b, self._about(npc_a), self.today(), top_k),
            self.opinion(npc_a, npc_b),
            self.opinion(npc_b, npc_a),
        )

    @_settled
    def opinion(self, npc_id: str, of: str) -> str:
        """What `npc_id` thinks of `of` now, then how it changed, from its opinion and relationship memories about
        `of` alone (memory/beliefs/story.py): "Margaret trusts Tom. Margaret distrusted Tom until day 5; since day
        5 ("Tom pulled my cart out of the fire.") Margaret trusts Tom."

        Returns:
            The sentences, with the NPCs' registered names (their ids when not registered); "" when no memory
            of `npc_id`'s about `of` is warm or cold.
        """
        from memory_sim.memory.beliefs.detect import subjects
        from memory_sim.memory.beliefs.story import opinion_story, stances

        rules.text("npc_id", npc_id)
        rules.text("of", of)
        profiles = store.npc_profiles(self.env.DB)
        names = {str(p["npc_id"]): str(p["name"]) for p in profiles}
        about_other = [
            (m.day * rules.HOURS_PER_DAY + m.hour, m.content)
            for m in store.remembered_in_order(self.env.DB, npc_id)
            if m.kind == "observation" and m.type in ("opinion", "relationship")
            and subjects(m.about, m.content, profiles) == {of}
        ]
        return opinion_story(names.get(npc_id, npc_id), names.get(of, of), stances(about_other))

    def _about(self, npc_id: str) -> str:
        profile = store.npc_profile(self.env.DB, npc_id)
        if profile is None:
            npc_registry.refuse_case_twin(self.env.DB, npc_id)
        name = npc_id if profile is None else profile["name"]
        return f"my history with {name}"  # recall's query expansion adds who they are (config.expand_npc_names)

    # --- NPCs (memory/npcs.py) ------------------------------------------------------------------------------

    @_settled
    def register_npc(
        self, id: str, name: str, role: str | None = None, aliases: Sequence[str] = (), traits: Sequence[str] = ()
    ) -> Npc:
        """Registers (or re-registers, replacing) an NPC in D1: recall then expands its name, role, aliases and
        traits in queries that name it.

        Ids are case-sensitive; one differing from a registered id only in case is refused.

        Returns:
            The `Npc` as stored.
        """
        return npc_registry.register(self.env.DB, npc_registry.make(id, name, role, aliases, traits))

    @_settled
    def npcs(self) -> list[Npc]:
        """Every registered NPC, by id."""
        return npc_registry.all_npcs(self.env.DB)

    @_settled
    def npc(self, id: str) -> Npc:
        """The registered NPC with this id.

        Returns:
            The `Npc` as stored.

        Raises:
            NotFound: there is none (with a hint when only the case differs).
        """
        return npc_registry.get(self.env.DB, id)

    @_settled
    def update_npc(
        self, id: str, *, name: str | None = None, role: str | None = None,
        aliases: Sequence[str] | None = None, traits: Sequence[str] | None = None,
    ) -> Npc:
        """Changes the fields given of a registered NPC; the others stay.

        Returns:
            The `Npc` as stored now.
        """
        old = self.npc(id)
        new = npc_registry.make(
            id, old.name if name is None else name, old.role if role is None else role,
            old.aliases if aliases is None else aliases, old.traits if traits is None else traits,
        )
        return npc_registry.register(self.env.DB, new)

    # --- listing, fixing and forgetting memories (memory/writing/forgetting.py) -------------------------------------

    @_settled
    def memories(
        self, npc_id: str, *, since_day: int | None = None, until_day: int | None = None, type: str | None = None,
        kind: str | None = None, state: str | None = None, limit: int = 100, cursor: str | None = None,
    ) -> MemoryPage:
        """Lists an NPC's memories in the order they were remembered.

        Args:
            npc_id: whose memories.
            since_day: the first sim day listed (included).
            until_day: the last sim day listed (included).
            type: "event", "relationship", "opinion" or "place".
            kind: "observation" or "summary".
            state: an index state ("none", "pending", "indexed", "unindexed", "forgotten"); forgotten memories
                are listed only when asked for.
            limit: the page size (1-100).
            cursor: `page.cursor` of the previous page.

        Returns:
            A `MemoryPage`: `memories` (`StoredMemory`s) and `cursor` (None on the last page).
        """
        return forgetting.list_memories(self.env, npc_id, since_day=since_day, until_day=until_day, type=type,
                                        kind=kind, state=state, limit=limit, cursor=cursor)

    @_settled
    def memory(self, id: str) -> StoredMemory:
        """One memory by id, forgotten or not.

        Returns:
            The `StoredMemory` as D1 holds it.

        Raises:
            NotFound: there is no memory with this id.
        """
        return forgetting.one(self.env, id)

    @_settled
    def update_importance(self, id: str, value: float) -> StoredMemory:
        """Sets a memory's importance (0..1); one in the index is re-indexed so the index's copy agrees.

        Returns:
            The memory as D1 holds it now.
        """
        self._nothing_to_retry = False
        updated = forgetting.update_importance(self.env, id, value, self.clock())
        if updated.index_state == "pending":
            self.index_memories([id])
        return self.memory(id)

    @_settled
    def forget(self, ids: str | Sequence[str], reason: str = forgetting.DEFAULT_REASON) -> list[str]:
        """Forgets memories: they leave the index and every recall and listing, their text is erased from D1,
        and D1 keeps a record with `reason` (so `memory-sim check` knows it was deliberate). What was made from
        them follows (memory/writing/rederive.py): each summary that drew on them is made again from the sources it has
        left (or forgotten too, when none is left), and diaries that quote them lose the quote. Re-running it,
        or any `retry_pending`, finishes a forget a crash cut short.

        Returns:
            The ids newly forgotten, sorted (ones already forgotten, and summaries forgotten with them, are left
            out; `lineage(id)` shows those).

        Raises:
            NotFound: an id names no memory (nothing is forgotten then).
        """
        self._nothing_to_retry = False
        erasure.note(self.env)  # the text leaves the files at the next `compact` (a scheduled job)
        done = forgetting.forget(self.env, [ids] if isinstance(ids, str) else list(ids), reason, self.clock())
        self._remake_summaries()
        return done

    @_settled
    def update_memory(self, id: str, *, content: str) -> StoredMemory:
        """Corrects a memory's text: D1 holds the new text, the index's copy is embedded again, each summary made
        from it is made again (memory/writing/rederive.py, as `forget` does) and diaries quoting it quote the new text.

        Returns:
            The memory as D1 holds it now.

        Raises:
            NotFound: no memory has this id. InvalidInput: it is forgotten, or the text is empty or too long.
        """
        from memory_sim.memory.writing import correcting

        self._nothing_to_retry = False
        erasure.note(self.env)
        hidden = correcting.correct(self.env, id, content, self.clock())
        forgetting.finish(self.env, hidden)
        self._remake_summaries()
        if self.memory(id).index_state == "pending":
            self.index_memories([id])
        return self.memory(id)

    def _remake_summaries(self) -> bool:
        """Summaries a forget or correction hid, made again from their remaining sources (writing/rederive.py)."""
        from memory_sim.memory.writing import rederive

        def summarise(sentences: list[tuple[str, float]]) -> str:
            return self.summariser.summarise(sentences, self.config.summary_sentences)

        return rederive.finish(self.env, summarise, self.config, self.clock())

    @_settled
    def forget_npc(self, npc_id: str) -> list[str]:
        """Forgets all the NPC's memories, as `forget` does, and drops its registration, diaries and
        relationships.

        Returns:
            The ids newly forgotten.
        """
        self._nothing_to_retry = False
        erasure.note(self.env)
        done = forgetting.forget_npc(self.env, npc_id, self.clock())
        self._remake_summaries()
        return done

    @_settled
    def write_diary(self, npc_id: str, day: int, max_entries: int = 6) -> str:
        """Writes the NPC's diary for a sim day to D1: up to `max_entries` of the day's most important
        memories in time order, and one earlier memory they brought back. `consolidate` condenses diaries.

        Returns:
            The diary's text; "" when the NPC remembered nothing that day (no diary is written).
        """
        return self.write_diaries([npc_id], day, max_entries).get(npc_id, "")

    @_settled
    def write_diaries(self, npc_ids: Sequence[str], day: int, max_entries: int = 6) -> dict[str, str]:
        """`write_diary` for several NPCs in a few D1 statements; NPCs with no diary that day are left out."""
        from memory_sim.memory.jobs.diary import write_diaries

        return write_diaries(self, npc_ids, day, max_entries)

    # --- jobs (memory/jobs/scheduled.py) ------------------------------------------------------------------------------

    def consolidate(self, now: float | None = None, *, wait: bool = True) -> JobReport:
        """Condenses each diary day at least `config.consolidate_after_days` (1) sim days old into a summary
        memory made of 1-2 of its memories' sentences, indexed with its lineage; a day of one memory is
        linked to it instead. Each day is condensed once.

        Args:
            now: seconds of world time; `clock()` when None.
            wait: False neither waits for the background thread first (the job reads and writes D1 only, and
                nothing there that it reads is the background's to change) nor for the summaries' embedding,
                which it leaves to that thread, as `remember_many(wait=False)` does: a simulation's scheduler
                lives the next hours meanwhile.

        Returns:
            A `JobReport`: `consolidated` summaries made (their ids in `details`), `linked` days, and `failed`
            diaries with why in `errors` (by NPC).
        """
        from memory_sim.memory.jobs.scheduled import consolidate

        if wait:
            self.settle()
        clear, self._nothing_to_retry = self._nothing_to_retry, False
        report = consolidate(self, self.clock() if now is None else now, wait=wait)
        if wait:
            self.settle()  # the summaries were embedded behind the job's D1 work; in the index when it returns
        self._nothing_to_retry = clear and not report.failed and not report.errors
        return report

    @_settled
    def decay_and_prune(self, now: float | None = None) -> JobReport:
        """Grows every memory's decay factor to today (by `config.decay_rate` per sim day, slower for important
        ones); memories past `config.forget_threshold` are re-embedded if important, else dropped from the
        index (they stay in D1); then prunes the least valued if the index is over `config.index_cap`.

        Args:
            now: seconds of world time; `clock()` when None.

        Returns:
            A `JobReport`: `decayed`, `reembedded`, `unindexed`, and `failed` re-embeddings (queued for retry).
        """
        from memory_sim.memory.jobs.scheduled import decay_and_prune

        clear, self._nothing_to_retry = self._nothing_to_retry, False
        report = decay_and_prune(self, self.clock() if now is None else now)
        self._nothing_to_retry = clear and not report.failed and not report.errors
        return report

    @_settled
    def retry_pending(self, now: float | None = None) -> JobReport:
        """Indexes the memories whose embedding or upsert failed, once their backoff (in seconds of world time)
        has passed, and finishes any `forget` a crash cut short.

        Args:
            now: seconds of world time; `clock()` when None.

        Returns:
            A `JobReport`: `embedded` now, `failed` again (backing off further), with why in `errors`.
        """
        from memory_sim.memory.jobs.scheduled import retry_pending

        self._nothing_to_retry = self._left_behind = False
        half_done = [m.id for m in store.memories_in_state(self.env.DB, ["forgetting"])]
        finished = forgetting.finish(self.env, half_done) == len(half_done)  # forgets a crash cut short
        finished = self._remake_summaries() and finished  # and the summaries they hid
        report, empty = retry_pending(self, self.clock() if now is None else now)
        self._nothing_to_retry = finished and empty
        return report

    @_settled
    def compact(self, now: float | None = None) -> JobReport:
        """Makes erasure reach the disk: forgets a crash cut short are finished, then the text that `forget`,
        `update_memory` and `forget_npc` removed leaves every file of the data folder (`Env.compact`: Chroma's
        log and free pages, D1's free pages and write-ahead log). The `compact` job runs it after an erasure;
        `memory-sim compact` runs it on demand.

        Returns:
            A `JobReport` of the job `compact`.
        """
        half_done = [m.id for m in store.memories_in_state(self.env.DB, ["forgetting"])]
        forgetting.finish(self.env, half_done)
        self._remake_summaries()
        erasure.compact(self.env)
        return JobReport(job="compact", details=["erased text removed from the data folder's files"])

    def erasure_done(self) -> bool:
        """Whether nothing erased since the last compaction waits to leave the files (the `compact` job is idle)."""
        return not erasure.pending(self.env)

    def nothing_to_retry(self) -> bool:
        """Whether `retry_pending` would do nothing, as far as this system knows without reading D1 (the
        scheduler then skips it).

        Returns:
            True when its last run left nothing pending and nothing since may have made a row pending.
        """
        return self._nothing_to_retry and not self._left_behind

    @_settled
    def stats(self) -> dict[str, int]:
        """Counts, for logs and `memory-sim stats`.

        Returns:
            `memories` (remembered and not forgotten, summaries included), `forgotten` (forgotten, or being
            forgotten), `indexed`, `pending` (waiting for the index: `retry_pending`'s work), `summaries` (not
            forgotten), `vectors` (the index's own count; -1 when it cannot be asked), and the jobs' running counters
            (e.g. `consolidations`, `prunes`, `retries`, `fallbacks`).
        """
        from memory_sim.memory.ledger.counts import memory_counts

        db = self.env.DB
        out = memory_counts(db)  # the one definition of each count (memory/ledger/counts.py)
        try:
            out["vectors"] = self.env.VECTORIZE.describe().vector_count
        except VectorizeError:
            out["vectors"] = -1
        out.update(store.counters(db))
        return out

