"""`MemorySystem`: the NPC memory API over an `Env` (Vectorize, D1, an embedder), as the design describes.

    memory = MemorySystem(env, clock=sim_clock)
    memory.remember(ShortTermMemory("margaret", "The blacksmith mended my oven door for nothing.", 0.8,
                                    WorldTime(day=3, hour=14), type="opinion", about=("tom",)))
    memory.recall("margaret", "What does Margaret think of Tom?")
    memory.weighted_recall("margaret", "What does Margaret think of Tom?", current_day=14)

A thin facade: each method checks its input and delegates to the groups (ledger/, writing/, recalling/,
consolidation/, jobs/, beliefs/). D1 is written first and is the source of truth: a memory to index is written
`pending`, which is what `retry_pending` finds if the process dies before indexing it. `clock()` gives the world's
time in seconds (the sim clock in simulations and tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress

from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.memory import npcs as npc_registry
from memory_sim.memory import rules
from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.consolidation.summarise import ExtractiveSummariser, Summariser
from memory_sim.memory.index_rule import reaches_index
from memory_sim.memory.ledger import store
from memory_sim.memory.ledger.schema import migrate
from memory_sim.memory.models import (
    DEFAULT_RECALL_MODE,
    BeliefLinks,
    Lineage,
    RecallMode,
    Recollection,
    RelationshipContext,
    ShortTermMemory,
    StoredMemory,
    WorldTime,
)
from memory_sim.memory.recalling import current
from memory_sim.memory.recalling.presets import DEFAULT_SCORING, Scoring, check_scoring
from memory_sim.memory.recalling.ranked import Recaller, check_recall
from memory_sim.memory.recalling.recall_cache import RecallCache
from memory_sim.memory.records import Records
from memory_sim.memory.upkeep import Upkeep
from memory_sim.memory.writing import forgetting, indexer, remembering
from memory_sim.memory.writing.background import Background, settled
from memory_sim.memory.writing.held import HeldOutcomes
from memory_sim.memory.writing.keying import KeyRegistry, configured_refiner

__all__ = ["MemorySystem", "RelationshipContext"]
Clock = Callable[[], float]
_settled = settled  # the method runs once background indexing (`remember_many(wait=False)`) is done


class MemorySystem(Records, Upkeep):
    """One NPC memory system over one `Env` (`Env.local(folder)`, `Env.in_memory()`, `Env.cloudflare(...)`).
    `clock` gives the world's time in seconds (a `SimClock`; a sim day is 86,400 s), `config` the tunables,
    `summariser` what `consolidate` condenses a day with (the offline extractive one, or a `ChatSummariser`).
    Days are whole sim days (`WorldTime.day`), hours 0-23, `now` seconds of world time. The jobs (`consolidate`,
    `decay_and_prune`, `retry_pending`) are what a scheduler runs; each is idempotent for a given `now`."""

    # A read-only face (the inspector) sets this: its recalls change no count and record no access.
    read_only: bool = False

    def __init__(self, env: WorkerEnv, *, clock: Clock, config: MemoryConfig | None = None,
                 summariser: Summariser | None = None) -> None:
        self.env = env
        self.clock = clock
        self.config = config or MemoryConfig()
        self.summariser: Summariser = summariser or ExtractiveSummariser()
        migrate(env.DB, applied_at=0.0)  # 0: the same data gives byte-identical D1 contents in every run
        self._recall_cache = RecallCache(env.DB)  # hybrid and keyword recall's per-NPC state, proved current
        # the registry as key inference reads it, and the chat model the settings configure to refine keys
        self._keys = KeyRegistry(env.DB, configured_refiner(env))
        # True while nothing is pending and no forget is half done (set by a clean retry, cleared by anything
        # that may queue a row); False at first: a dead process may have left work.
        self._nothing_to_retry = False
        self._background = Background()  # remember_many(wait=False)'s indexing, one thread, in order
        self._left_behind = False  # the background left rows to retry (set there, lowered by retry_pending)
        self._held = HeldOutcomes()  # the background's plain index outcomes, written when the system settles
        # The last diary day every diary is consolidated up to, as this system last saw; None when unknown (at
        # first, and after any write that may add or unlink a diary): the `consolidate` job is idle meanwhile.
        self._consolidated_through: int | None = None

    # --- writing --------------------------------------------------------------------------------------------

    @_settled
    def remember(self, memory: ShortTermMemory) -> bool:
        """Stores one memory in D1 and, if the index rule admits it, indexes it at once.

        The memory is stored with its state key (the game's, else inferred: memory/writing/keying.py); one the index
        rule admits (memory/index_rule.py: importance above `config.index_threshold`, 0.7) is embedded and indexed at
        once.

        Args:
            memory: the memory to store.

        Returns:
            Whether it is in the index now; False when it is in D1 only, or queued for `retry_pending`."""
        return memory.id in self.remember_many([memory])

    def remember_many(
        self, memories: Sequence[ShortTermMemory], *, index_all: bool = False, wait: bool = True
    ) -> set[str]:
        """Stores many memories in one D1 transaction, then embeds those the index rule admits in one call.

        The same id given twice is stored once. `wait=False` returns once D1 holds them and leaves the embedding to one
        background thread, in order; every other method waits for it first.

        Args:
            memories: the memories to store.
            index_all: embed and index every one of them, not only those the index rule admits.
            wait: wait for the embedding (True), or leave it to the background thread (False).

        Returns:
            The ids in the index now; with `wait=False`, the ids handed to the background to index."""
        if wait:
            self.settle()
        memories = list({m.id: m for m in memories}.values())
        if not memories:
            return set()
        indexable = [m.id for m in memories if index_all or reaches_index(m, self.config.index_threshold)]
        decay = self.config.initial_decay
        written, bound = remembering.write(self.env, memories, decay, dict.fromkeys(indexable, "pending"), self._keys)
        now = self.clock()
        if wait or not indexable:
            return self._index(indexable, now, written, bound)
        self._background.submit(lambda: self._index_behind(indexable, now, written, bound))
        return set(indexable)

    def settle(self) -> None:
        """Waits for the background's indexing and writes its held outcomes to D1 (writing/held.py); raises the
        first exception it met (its memories stay pending)."""
        try:
            self._background.settle()
        except BaseException:
            with suppress(Exception):  # the background's failure is the one to report
                self._write_held()
            raise
        self._write_held()

    def _write_held(self) -> None:
        try:
            self._held.write(self.env.DB)
        except BaseException:
            self._left_behind = True  # their rows stay pending: retry_pending indexes them again
            raise

    @_settled
    def index_memory(self, memory: ShortTermMemory) -> bool:
        """Indexes a memory already in D1; True when it is in the index now, False when queued for retry."""
        self.env.DB.batch(store.set_state(self.env.DB, [memory.id], "pending")
                          + store.enqueue_many(self.env.DB, [memory.id], self.clock()))
        return memory.id in self.index_memories([memory.id])

    def index_memories(self, ids: Sequence[str], *, wait: bool = True) -> set[str]:
        """Embeds and upserts memories already in D1, by id.

        Failures stay queued for `retry_pending` with a backoff.

        Args:
            ids: the ids of the memories to index.
            wait: wait for the indexing (True), or leave the work to the background thread (False).

        Returns:
            The ids in the index now; with `wait=False`, the ids handed to the background to index."""
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
        """`_index` on the background thread; what it leaves to retry raises a flag only `retry_pending` lowers."""
        try:
            if self._held.holds_any(ids):  # written before this task's outcome for the same rows
                self._write_held()
            report = indexer.index(self.env, self.config, ids, now, known=known, rows_at_most=bound,
                                   hold=self._held.hold)
        except BaseException:
            self._left_behind = True
            raise
        self._left_behind = self._left_behind or bool(report.postponed)

    @_settled
    def unindex(self, ids: Sequence[str], counter: str) -> int:
        """Drops memories from the vector index (they stay in D1); adds the number to the `stats()` counter."""
        return indexer.unindex(self.env, ids, counter)

    # --- reading (memory/recalling/ranked.py) ---------------------------------------------------------------

    def today(self) -> int:
        """The current sim day (whole days since the world began), from `clock()`."""
        return WorldTime.from_seconds(self.clock()).day

    @_settled
    def recall(
        self, npc_id: str, query: str, top_k: int = 5, mode: RecallMode = DEFAULT_RECALL_MODE, *,
        include_recent: bool = False, now: WorldTime | None = None,
    ) -> list[Recollection]:
        """Up to `top_k` of this NPC's memories that best answer the query, by meaning alone.

        A state key's current memory ranks above its older versions (pulled in from D1 when only an older one was
        found), which may follow, marked `superseded_by`. No two results share a text; an unknown NPC is refused.

        Args:
            npc_id: the NPC whose memories are searched.
            query: what the NPC tries to remember.
            top_k: how many to return at most, 1-100.
            mode: "hybrid" (vector + BM25 over D1 + neighbouring memories), "vector" or "keyword".
            include_recent: also rank the NPC's memories of the last 7 sim days kept in D1 only that share a word with
                the query, scored as the mode scores indexed ones (memory/recalling/recent.py; `source="d1"`).
            now: the moment recall reads time from ("today", recency); None: the clock.

        Returns:
            The `Recollection`s found, highest `score` first; empty when none answer."""
        check_recall(npc_id, query, top_k, mode)
        found = self._recaller(now).recall(npc_id, query, top_k, mode, include_recent)
        return found or self._nothing_for(npc_id)

    @_settled
    def weighted_recall(
        self, npc_id: str, query: str, current_day: int | None = None, top_k: int = 5,
        mode: RecallMode = DEFAULT_RECALL_MODE, scoring: Scoring = DEFAULT_SCORING, *, include_recent: bool = False,
        now: WorldTime | None = None,
    ) -> list[Recollection]:
        """`recall`, ranked by the design's effective score or another preset's.

        The design's effective score is `score * importance / (1 + (current_day - day) * decayFactor)`, with ages in
        sim days; the other presets are "generative-agents-paper" and "generative-agents-code"
        (memory/recalling/presets.py). Every call records the game hour it returned each memory.

        Args:
            npc_id: the NPC whose memories are searched.
            query: what the NPC tries to remember.
            current_day: the sim day ages count to; None: `now`'s day, else `today()`.
            top_k: how many to return at most, 1-100.
            mode: "hybrid", "vector" or "keyword", as for `recall`.
            scoring: the scoring preset.
            include_recent: also rank recent memories kept in D1 only, as for `recall`.
            now: the moment time words are read against, as for `recall`; None: the clock.

        Returns:
            The `Recollection`s found with `effective_score` set, highest first, a key's current memory first as in
            `recall`; empty when none answer."""
        check_recall(npc_id, query, top_k, mode)
        scoring = check_scoring(scoring)
        moment = now or WorldTime.from_seconds(self.clock())
        day = moment.day if current_day is None else rules.day(current_day, "current_day")
        found = self._recaller(now).weighted_recall(npc_id, query, day, top_k, mode, scoring, include_recent)
        return found or self._nothing_for(npc_id)

    def _recaller(self, now: WorldTime | None = None) -> Recaller:
        """Recall's pipeline with the config as it is now, reading time from `now` where given, else the clock."""
        clock = self.clock if now is None else now.to_seconds
        return Recaller(self.env, self.config, self._recall_cache, clock, self.read_only)

    def _nothing_for(self, npc_id: str) -> list[Recollection]:
        """An empty recall, unless the NPC is unknown: that is refused with a hint (npcs.refuse_unknown)."""
        npc_registry.refuse_unknown(self.env.DB, npc_id)
        return []

    @_settled
    def current_state(self, npc_id: str) -> dict[str, StoredMemory]:
        """{state key: the NPC's newest memory under it}: what the NPC holds true now, one memory a key."""
        return current.current_state(self.env.DB, rules.text("npc_id", npc_id))

    @_settled
    def history(self, npc_id: str, key: str) -> list[StoredMemory]:
        """The NPC's memories under a state key, newest (the current state) first; empty when none."""
        return current.history(self.env.DB, rules.text("npc_id", npc_id), rules.text("key", key))

    @_settled
    def lineage(self, memory_id: str) -> Lineage:
        """Where a memory came from and where it went.

        Args:
            memory_id: the memory's id.

        Returns:
            A `Lineage` with `sources` (a summary's) and `summaries` (those it went into), oldest first, and its
            `state_key` with the key's `history`, newest first; only the `memory_id` when no memory has this id."""
        found = store.memories_by_ids(self.env.DB, [rules.text("memory_id", memory_id)], forgotten=True)
        return current.lineage(self.env.DB, found[memory_id]) if memory_id in found else Lineage(memory_id)

    @_settled
    def belief_links(self, memory_id: str) -> BeliefLinks:
        """The memories next to this one under its state key.

        Args:
            memory_id: the memory's id.

        Returns:
            `BeliefLinks` holding the next newer memory under this memory's state key (`superseded_by`) and the one
            just before it (`supersedes`).

        Raises:
            NotFound: no memory has this id."""
        return current.links(self.env.DB, forgetting.one(self.env, memory_id))

    # --- the design's three uses ----------------------------------------------------------------------------

    @_settled
    def decision_context(self, npc_id: str, situation: str, top_k: int = 5) -> list[Recollection]:
        """What the NPC recalls when deciding.

        `weighted_recall` of the situation as of the current sim day (`today()`), recent memories kept in D1 only
        included (`include_recent=True`).

        Args:
            npc_id: the NPC deciding.
            situation: the situation it decides in, as a query.
            top_k: how many memories to return at most, 1-100.

        Returns:
            The `Recollection`s recalled, highest `effective_score` first."""
        return self.weighted_recall(npc_id, situation, self.today(), top_k, include_recent=True)

    @_settled
    def relationship_context(self, npc_a: str, npc_b: str, top_k: int = 5) -> RelationshipContext:
        """What two NPCs recall of each other, and what each thinks of the other.

        Each NPC recalls their history with the other, weighted as of `today()` (the query names the other by their
        registered name; recall adds role and aliases).

        Args:
            npc_a: one NPC.
            npc_b: the other NPC.
            top_k: how many memories each recalls at most, 1-100.

        Returns:
            A `RelationshipContext` with each NPC's recollections of the other, each one's `opinion` of the other
            and the views it held (`a_views`, `b_views`: newest first, restatements of one view as one)."""
        return RelationshipContext(
            npc_a, npc_b, self.weighted_recall(npc_a, self._about(npc_b), self.today(), top_k),
            self.weighted_recall(npc_b, self._about(npc_a), self.today(), top_k),
            self.opinion(npc_a, npc_b), self.opinion(npc_b, npc_a),
            self._views(npc_a, npc_b), self._views(npc_b, npc_a),
        )

    @_settled
    def opinion(self, npc_id: str, of: str) -> str:
        """What `npc_id` thinks of `of`, from its memories under the state key "opinion:<of>".

        Args:
            npc_id: the NPC whose opinion is asked.
            of: the NPC (or thing) the opinion is of.

        Returns:
            The current view with the day it began, then the earlier ones (memory/beliefs/story.py); "<Name> has no
            opinion of <Other> yet." when there is none."""
        return current.opinion(self.env.DB, rules.text("npc_id", npc_id), rules.text("of", of))

    def _views(self, npc_id: str, of: str) -> tuple[dict[str, object], ...]:
        return tuple(v.to_json() for v in current.opinion_views(self.env.DB, npc_id, of))

    def _about(self, npc_id: str) -> str:
        profile = store.npc_profile(self.env.DB, npc_id)
        if profile is None:
            npc_registry.refuse_case_twin(self.env.DB, npc_id)
        return f"my history with {npc_id if profile is None else profile['name']}"
