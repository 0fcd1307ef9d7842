"""Per-NPC state for hybrid and keyword recall, kept in the MemorySystem's process and proved current against D1.

Without it, every recall in these modes reads all of the NPC's memories it ranks from D1 and indexes their texts:
~0.7 s at 10,000 memories. An NPC has a view per mode: hybrid's holds the semantic memories (indexed or pending),
keyword's every memory not forgotten. With it, a recall first reads two numbers from D1 (`store.revisions`):
- both unchanged: the NPC's rows, keyword index and timeline are reused as they are;
- only the remember counter moved: the rows remembered since (`seq` above the counter we saw) are added, in
  remember order, exactly as a rebuild would place them;
- the revision moved (a memory entered or left a view's set, or decay factors or an importance changed): the NPC's
  rows are read again; the keyword index drops the memories that left and adds those that entered, and the
  timeline is laid anew.
D1 stays the source of truth: another process writing it moves the same numbers (store.set_state,
store.set_decay and store.insert_memories move them in the writing batch).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import numpy as np

from memory_sim.bindings.d1 import D1Database
from memory_sim.memory.ledger import store
from memory_sim.memory.models import StoredMemory
from memory_sim.memory.recalling import hybrid_arrays
from memory_sim.memory.recalling.cues import CueWeights, MemoryCues, QueryCues, memory_cues
from memory_sim.memory.recalling.hybrid import HybridParams
from memory_sim.memory.recalling.hybrid_arrays import Factors, TimelineArrays
from memory_sim.memory.recalling.keyword import BM25Index, sentence_tokens, tokenize

ViewKind = Literal["hybrid", "keyword"]
_STATES: dict[ViewKind, tuple[str, ...] | None] = {"hybrid": store.SEMANTIC_STATES, "keyword": None}  # None: all
_CUE_WEIGHTS = CueWeights()
_MAX_VIEWS = 2 * 256  # 256 NPCs in both modes; the least recently recalled views are dropped beyond this


class NpcView:
    """One NPC's memories that a recall mode ranks, in remember order: `kind` "hybrid", the semantic ones
    (indexed or pending); "keyword", every memory not forgotten. With the keyword index (keyword.py) and
    the timeline of episodes (sim days, in order of their first memory), both over the index's slots. `lock`
    guards it while a recall ranks or the cache updates it."""

    def __init__(
        self, revision: int = 0, counter: int = 0, kind: ViewKind = "hybrid", loose: frozenset[str] = frozenset()
    ) -> None:
        self.revision, self.counter = revision, counter
        self.states = _STATES[kind]  # None: every state D1's readers show
        self.loose = loose  # ids ranked on their own words and vector alone: in no episode, so no neighbour
        self.index = BM25Index()
        self.rows: list[StoredMemory] = []
        self.by_id: dict[str, StoredMemory] = {}
        self.seen: set[str] = set()  # every id read, kept or not (appends never repeat one)
        self.keyed: dict[str, list[StoredMemory]] = {}  # state key -> its memories of any state, remember order
        self.lock = threading.RLock()
        self._episodes: dict[int, list[int]] = {}  # day -> slots in remember order
        self._timeline: TimelineArrays | None = None
        self._cues: dict[int, MemoryCues] = {}  # slot -> what its text says (recalling/cues.py), read once
        self._cue_arrays: CueArrays | None = None

    @classmethod
    def read(
        cls, db: D1Database, npc_id: str, revision: int = 0, counter: int = 0, kind: ViewKind = "hybrid"
    ) -> NpcView:
        """The NPC's view built from D1."""
        view = cls(revision, counter, kind)
        view.refresh(view.rows_in(db, npc_id))
        return view

    def rows_in(self, db: D1Database, npc_id: str) -> list[StoredMemory]:
        """The NPC's rows this view is laid from, in remember order: for hybrid only the semantic ones (after
        decay has dropped most of a long life's memories from the index, a small share of them), for keyword all."""
        return store.remembered_in_order(db, npc_id) if self.states is None else store.semantic_in_order(
            db, npc_id, keyed=True)

    def refresh(self, memories: list[StoredMemory]) -> None:
        """Lays the view anew from the NPC's rows in remember order (those it keeps suffice: others are
        skipped); the keyword index only changes where a memory left the view's set, entered it or changed
        its text."""
        kept = {m.id: m for m in memories if self._keeps(m)}
        leaving = [i for i, m in self.by_id.items() if i not in kept or kept[i].content != m.content]
        for memory_id in leaving:
            self._cues.pop(self.index.slot(memory_id), None)
        self.index.remove(leaving)
        self.rows, self.by_id, self.seen, self._episodes, self.keyed = [], {}, set(), {}, {}
        self.append(memories)

    def append(self, memories: list[StoredMemory]) -> None:
        """Adds memories remembered after those the view holds (ids already read are skipped)."""
        for m in memories:
            if m.id in self.seen:
                continue
            self.seen.add(m.id)
            if m.state_key is not None and m.kind == "observation":
                self.keyed.setdefault(m.state_key, []).append(m)
            if not self._keeps(m):
                continue
            if m.id in self.index:
                pass
            elif m.kind == "summary":  # it repeats its sources' words: scored as its best sentence, not counted
                self.index.add_parts(m.id, sentence_tokens(m.content))
            else:
                self.index.add_tokens(m.id, tokenize(m.content))
            self.rows.append(m)
            self.by_id[m.id] = m
            slot = self.index.slot(m.id)
            if m.kind != "summary" and m.id not in self.loose:  # a summary: made a day later from the day as a
                self._episodes.setdefault(m.day, []).append(slot)  # whole, no neighbour of any memory
            if slot not in self._cues:
                self._cues[slot] = memory_cues(m.content)
            self._timeline = self._cue_arrays = None

    def key_chains(self, keys: Iterable[str]) -> dict[str, list[StoredMemory]]:
        """The memories under each of `keys` that has any, oldest first by world time (remember order within an
        hour), as `store.keyed` reads them: memories of every state, the D1-only ones included."""
        with self.lock:
            return {k: sorted(self.keyed[k], key=lambda m: (m.day, m.hour)) for k in keys if k in self.keyed}

    def _keeps(self, memory: StoredMemory) -> bool:
        return self.states is None or memory.index_state in self.states

    def timeline(self) -> TimelineArrays:
        if self._timeline is None:
            self._timeline = TimelineArrays.of(list(self._episodes.values()), len(self.index.ids))
        return self._timeline

    def cue_arrays(self) -> CueArrays:
        if self._cue_arrays is None:
            self._cue_arrays = CueArrays.of(self._cues, {self.index.slot(m.id): m.day for m in self.rows},
                                            len(self.index.ids))
        return self._cue_arrays

    def subjects(self) -> frozenset[str]:
        """The speakers the view's memories begin with (lower-cased first names): what a query may be about."""
        with self.lock:
            return self.cue_arrays().subjects

    def rank(
        self, query: str, vector: Mapping[str, float], k: int, params: HybridParams, cues: QueryCues | None = None,
        weights: CueWeights = _CUE_WEIGHTS,
    ) -> list[tuple[str, float]]:
        """hybrid.hybrid_rank over this view: `vector` (id -> score, ids the view holds) fused with BM25 over
        the view's texts, plus neighbour context, with the query's `cues` (recalling/cues.py) where given; the `k`
        best (id, score)."""
        with self.lock:
            vector_hits = (self.index.slots(vector), np.fromiter(vector.values(), np.float64, len(vector)))
            before = after = None
            if cues is not None and cues.any:
                before, after = self.cue_arrays().factors(cues, weights)
            ranked = hybrid_arrays.hybrid_rank(
                vector_hits, self.index.hits(query), self.timeline(), k, self.index.ids, params, before, after
            )
            return [(self.index.ids[s], score) for s, score in ranked]  # type: ignore[misc]

    def keyword_top(self, query: str, k: int) -> list[tuple[StoredMemory, float]]:
        """BM25's `k` best over this view (memory, score), highest first; ties in `store.memories_of` order
        (day, hour, id), whatever order the memories entered the index in."""
        with self.lock:
            by_id = self.by_id
            found = self.index.search(query, k, order=lambda i: (by_id[i].day, by_id[i].hour, i))
            return [(by_id[i], score) for i, score in found]


class CueArrays:
    """The view's memory cues over slots (holes: no subject, no cue, day 0), for `hybrid_arrays.hybrid_rank`'s
    multipliers: a question's cues become numpy operations over the candidates only."""

    def __init__(self, subject: np.ndarray, codes: dict[str, int], timed: np.ndarray, trait: np.ndarray,
                 day: np.ndarray) -> None:
        self.subject, self.codes, self.timed, self.trait, self.day = subject, codes, timed, trait, day
        self.subjects = frozenset(codes)

    @classmethod
    def of(cls, cues: Mapping[int, MemoryCues], days: Mapping[int, int], size: int) -> CueArrays:
        codes: dict[str, int] = {}
        subject = np.full(size, -1, np.int64)
        timed, trait = np.zeros(size, dtype=bool), np.zeros(size, dtype=bool)
        day = np.zeros(size, np.int64)
        for slot, day_of in days.items():
            cue = cues[slot]
            if cue.subject:
                subject[slot] = codes.setdefault(cue.subject, len(codes))
            timed[slot], trait[slot], day[slot] = cue.timed, cue.trait, day_of
        return cls(subject, codes, timed, trait, day)

    def factors(self, cues: QueryCues, weights: CueWeights) -> tuple[Factors, Factors]:
        """(before, after): the multipliers recalling/cues.py describes, as functions of candidate slots."""

        def before(slots: np.ndarray) -> np.ndarray:
            factor = np.ones(slots.shape[0])
            if cues.asks_when:
                factor *= 1.0 + weights.when * self.timed[slots]
            if cues.asks_trait:
                factor *= 1.0 + weights.trait * self.trait[slots]
            if cues.days is not None:
                first, last = cues.days[0] - weights.date_before_days, cues.days[1] + weights.date_after_days
                day = self.day[slots]
                factor *= 1.0 + weights.date * ((day >= first) & (day <= last))
            return factor

        def after(slots: np.ndarray) -> np.ndarray:
            code = self.codes.get(cues.subject, -2) if cues.subject else -2
            return 1.0 + weights.subject * (self.subject[slots] == code)

        return before, after


class RecallCache:
    """(NPC id, kind) -> NpcView, and the registered NPCs' profiles, for one D1 database. Thread-safe (the scheduler's
    thread may recall too). One read of `store.read_proof` per recall proves both current."""

    def __init__(self, db: D1Database) -> None:
        self.db = db
        self._views: OrderedDict[tuple[str, ViewKind], NpcView] = OrderedDict()
        self._profiles: tuple[int, list[dict[str, Any]]] | None = None  # (NPC revision, profiles)
        self._lock = threading.Lock()
        store.ensure_revision(db)

    def proof(self) -> store.Proof | None:
        return store.read_proof(self.db)  # read before the rows: a write in between only costs a re-read

    def profiles(self, proof: store.Proof | None) -> list[dict[str, Any]]:
        """store.npc_profiles, read again only when a registration was written or dropped since (the list is
        shared: callers only read it)."""
        if proof is None or proof.npcs is None:
            return store.npc_profiles(self.db)
        with self._lock:
            if self._profiles is None or self._profiles[0] != proof.npcs:
                self._profiles = (proof.npcs, store.npc_profiles(self.db))
            return self._profiles[1]

    def known_profiles(self) -> list[dict[str, Any]] | None:
        """The profiles as `profiles(proof)` last proved them current (each recall that expands names does), or
        None: what else the same recall reads of them costs no statement."""
        with self._lock:
            return None if self._profiles is None else self._profiles[1]

    def view(self, npc_id: str, proof: store.Proof | None = None, kind: ViewKind = "hybrid") -> NpcView | None:
        """The NPC's current view for a recall mode, or None when D1 cannot prove one current (the caller reads
        D1 as before). `proof`: one the caller read already, before anything it proves."""
        with self._lock:
            current = proof or self.proof()
            if current is None:
                return None
            revision, counter = current.revision, current.counter
            view = self._views.pop((npc_id, kind), None)
            if view is None:
                view = NpcView.read(self.db, npc_id, revision, counter, kind)
            elif view.revision != revision:
                with view.lock:
                    view.refresh(view.rows_in(self.db, npc_id))
                    view.revision, view.counter = revision, counter
            elif view.counter != counter:
                with view.lock:
                    view.append(store.remembered_after(self.db, npc_id, view.counter))
                    view.counter = counter
            self._views[npc_id, kind] = view
            while len(self._views) > _MAX_VIEWS:
                self._views.popitem(last=False)
            return view
