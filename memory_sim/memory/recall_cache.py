"""Per-NPC state for hybrid recall, kept in the MemorySystem's process and proved current against D1.

Without it, every hybrid recall reads all of the NPC's semantic memories from D1 and rebuilds BM25 from their
texts: ~0.4 s at 10,000 memories. With it, a recall first reads two numbers from D1 (`store.revisions`):
- both unchanged: the NPC's rows, BM25 index and timeline are reused as they are;
- only the remember counter moved: the rows remembered since (`seq` above the counter we saw) are appended, in
  remember order, exactly as a rebuild would place them;
- the revision moved (a memory entered or left the indexed/pending set, or decay factors changed): the NPC's
  rows are read again and the index rebuilt, reusing the token counts of unchanged texts.
D1 stays the source of truth: another process writing it moves the same numbers (store.set_state,
store.set_decay and store.insert_memories move them in the writing batch).
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from memory_sim.bindings.d1 import D1Database
from memory_sim.memory import store
from memory_sim.memory.hybrid import Timeline
from memory_sim.memory.keyword import BM25Index, tokenize
from memory_sim.memory.models import StoredMemory

_MAX_NPCS = 256  # least recently recalled NPCs are dropped beyond this


@dataclass
class NpcView:
    """One NPC's semantic memories (indexed or pending) in remember order, with what hybrid recall needs."""

    revision: int
    counter: int
    rows: list[StoredMemory] = field(default_factory=list)
    by_id: dict[str, StoredMemory] = field(default_factory=dict)
    index: BM25Index = field(default_factory=BM25Index)
    days: dict[int, list[str]] = field(default_factory=dict)
    episode_of: dict[int, int] = field(default_factory=dict)
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)  # every id read, semantic or not (appends never repeat one)
    tokens: dict[str, tuple[str, Counter[str]]] = field(default_factory=dict)  # id -> (text, its term counts)
    _timeline: Timeline | None = None

    @classmethod
    def read(
        cls, db: D1Database, npc_id: str, revision: int = 0, counter: int = 0,
        reuse: dict[str, tuple[str, Counter[str]]] | None = None,
    ) -> NpcView:
        """The NPC's view built from D1 (reusing token counts of unchanged texts from `reuse`)."""
        view = cls(revision, counter)
        view.append(store.remembered_in_order(db, npc_id), reuse or {})
        return view

    def timeline(self) -> Timeline:
        if self._timeline is None:
            self._timeline = Timeline.of(list(self.days.values()))
        return self._timeline

    def append(self, memories: list[StoredMemory], reuse: dict[str, tuple[str, Counter[str]]]) -> None:
        for m in memories:
            if m.id in self.seen:
                continue
            self.seen.add(m.id)
            if m.index_state not in store.SEMANTIC_STATES:
                continue
            cached = reuse.get(m.id)
            counts = cached[1] if cached and cached[0] == m.content else Counter(tokenize(m.content))
            self.tokens[m.id] = (m.content, counts)
            self.index.add_counts(m.id, counts, counted=m.kind != "summary")  # a summary repeats its sources' words
            self.rows.append(m)
            self.by_id[m.id] = m
            number = self.episode_of.setdefault(m.day, len(self.episode_of))  # days in order of first memory
            episode = self.days.setdefault(m.day, [])
            self.positions[m.id] = (number, len(episode))
            episode.append(m.id)
            self._timeline = None


class RecallCache:
    """NPC id -> NpcView, for one D1 database. Thread-safe (the scheduler's thread may recall too)."""

    def __init__(self, db: D1Database) -> None:
        self.db = db
        self._views: OrderedDict[str, NpcView] = OrderedDict()
        self._lock = threading.Lock()
        store.ensure_revision(db)

    def view(self, npc_id: str) -> NpcView | None:
        """The NPC's current view, or None when D1 cannot prove one current (the caller reads D1 as before)."""
        with self._lock:
            current = store.revisions(self.db)  # read before the rows: a write in between only costs a rebuild
            if current is None:
                return None
            revision, counter = current
            old = self._views.pop(npc_id, None)
            if old is not None and old.revision == revision:
                if old.counter != counter:
                    old.append(store.remembered_after(self.db, npc_id, old.counter), {})
                    old.counter = counter
                view = old
            else:
                view = NpcView.read(self.db, npc_id, revision, counter, old.tokens if old else None)
            self._views[npc_id] = view
            while len(self._views) > _MAX_NPCS:
                self._views.popitem(last=False)
            return view
