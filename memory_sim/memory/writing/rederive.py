"""What was made from a memory follows it when it is forgotten or corrected: the summaries that drew on it (the
lineage in `memory_sources`) and the diaries that quote it.

    reach = rederive.plan(db, gone={...}, changed={...})    # reads D1; writes nothing
    db.batch(<the forget's or correction's statements> + reach.statements(db, ...))   # one transaction
    forgetting.finish(env, ids)                              # vectors deleted; recorded forgets marked forgotten
    rederive.finish(env, summariser, config, now)            # the hidden summaries made again from what remains

Hidden at once, made again after. In the same D1 batch that forgets (or corrects) a memory, every summary that
drew on it is marked `forgetting` with its text erased, so every reader skips it from that moment; a summary
with no source left also gets a `forgotten` record ("its sources were forgotten") and stays forgotten. The
others have no record: once their vectors are deleted, `finish` condenses the sources they still have into new
text and queues the row for the index under its own id. Diaries quoting a forgotten memory lose the quote (a
corrected one's quote is replaced) in that same batch. A crash anywhere leaves `forgetting` rows, which the next
`retry_pending` finishes: everything is read again from D1, nothing is held in a process.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memory_sim.bindings.d1 import D1Database, D1PreparedStatement
from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import AiError, VectorizeError
from memory_sim.memory.consolidation.condense import dominant_type, joint_about
from memory_sim.memory.consolidation.summarise import Sentence
from memory_sim.memory.ledger import store
from memory_sim.memory.models import StoredMemory
from memory_sim.memory.writing import indexer, indexing

if TYPE_CHECKING:
    from memory_sim.memory.config import MemoryConfig

ORPHANED = "its sources were forgotten"  # the `forgotten` reason of a summary with no source left
Summarise = Callable[[list[Sentence]], str]


@dataclass(frozen=True, slots=True)
class Reach:
    """The summaries a forget or correction reaches: `orphaned` ones have no source left (forgotten with them),
    `stale` ones keep some (hidden, then made again); `diaries` are (npc, day, new text) rewrites."""

    orphaned: tuple[StoredMemory, ...] = ()
    stale: tuple[str, ...] = ()
    diaries: tuple[tuple[str, int, str], ...] = ()

    def hidden(self) -> list[str]:
        return sorted([m.id for m in self.orphaned] + list(self.stale))

    def statements(self, db: D1Database, now: float) -> list[D1PreparedStatement]:
        """Hides the reached summaries (erasing their text), records the orphaned ones as forgotten, and rewrites
        the diaries."""
        hidden = self.hidden()
        out = store.set_state(db, hidden, "forgetting") + store.erase_content(db, hidden) if hidden else []
        out += store.dequeue(db, hidden) + store.record_forgets(db, self.orphaned, ORPHANED, now)
        return out + [store.set_diary_text(db, npc, day, text) for npc, day, text in self.diaries]


def plan(db: D1Database, gone: Sequence[StoredMemory], changed: Sequence[tuple[StoredMemory, str]] = ()) -> Reach:
    """What forgetting `gone` and correcting `changed` (memory, new text) reaches: summaries drawing on them,
    through summaries of summaries, and the diaries quoting them."""
    out_ids = {m.id for m in gone}
    reached: dict[str, StoredMemory] = {}
    orphaned: list[StoredMemory] = []
    frontier = sorted(out_ids | {m.id for m, _ in changed})
    while frontier:
        pairs = store.drawing_on(db, frontier)
        summaries = store.memories_by_ids(db, sorted({s for s, _ in pairs} - set(reached) - out_ids))
        lineage = store.sources_of(db, sorted(summaries))
        live = store.memories_by_ids(db, sorted({i for ids in lineage.values() for i in ids}))
        frontier = []
        for summary_id, summary in sorted(summaries.items()):
            reached[summary_id] = summary
            if not [i for i in lineage.get(summary_id, ()) if i in live and i not in out_ids]:
                orphaned.append(summary)
                out_ids.add(summary_id)
            frontier.append(summary_id)
    quoted = [(m, "") for m in gone] + list(changed) + [(m, "") for m in reached.values()]
    stale = tuple(sorted(set(reached) - out_ids))
    return Reach(tuple(orphaned), stale, _diary_rewrites(db, quoted))


def _diary_rewrites(db: D1Database, quoted: Sequence[tuple[StoredMemory, str]]) -> tuple[tuple[str, int, str], ...]:
    """Each diary of these memories' NPCs that quotes one of them, with the quote (and a "brought back" line
    echoing it) taken out or replaced."""
    texts = [(m.npc_id, m.content.strip(), new.strip()) for m, new in quoted if m.content.strip()]
    if not texts:
        return ()
    out = []
    for row in store.diaries_of(db, sorted({npc for npc, _, _ in texts})):
        text = str(row["text"])
        for npc, old, new in texts:
            if npc == row["npc_id"]:
                text = _requote(text, old, new)
        if text != row["text"]:
            out.append((str(row["npc_id"]), int(row["day"]), text))
    return tuple(out)


def _requote(diary: str, old: str, new: str) -> str:
    whole = re.escape(old)
    if not new:
        diary = re.sub(rf"It brought back day \d+: {whole}(?!\S)", "", diary)
    diary = re.sub(rf"(?<!\S){whole}(?!\S)", lambda _: new, diary)
    return re.sub(r"\s{2,}", " ", diary).strip()


def finish(env: WorkerEnv, summarise: Summarise, config: MemoryConfig, now: float) -> bool:
    """Makes every hidden, unrecorded summary again from the sources it still has (after `forgetting.finish`
    deleted its vector) and indexes it; one whose sources are all gone by now is forgotten. Returns True when
    none is left hidden (a summariser that fails leaves its summary hidden for the next run)."""
    db = env.DB
    hidden = [m.id for m in store.memories_in_state(db, ["forgetting"])]
    todo = sorted(set(hidden) - store.recorded_forgets(db, hidden))
    if not todo:
        return True
    try:  # their old vectors go first (again, if forgetting.finish did it): none may outlive its old text
        indexing.delete_vectors(env, todo)
    except VectorizeError:
        return False
    lineage = store.sources_of(db, todo)
    live = store.memories_by_ids(db, sorted({i for ids in lineage.values() for i in ids}))
    rows = store.memories_by_ids(db, todo, forgotten=True)
    remade: list[StoredMemory] = []
    orphaned: list[StoredMemory] = []
    left = False
    for summary_id in todo:
        sources = sorted((live[i] for i in lineage.get(summary_id, ()) if i in live),
                         key=lambda m: (m.day, m.hour, m.id))
        if not sources:
            orphaned.append(rows[summary_id])
            continue
        try:
            remade.append(remake(rows[summary_id], sources, summarise))
        except AiError:
            left = True  # the summariser is down: the summary stays hidden until the next run
    _save(env, remade, orphaned, now)
    if remade:
        indexer.index(env, config, [m.id for m in remade], now)  # a failure leaves them queued for retry
    return not left


def remake(summary: StoredMemory, sources: Sequence[StoredMemory], summarise: Summarise) -> StoredMemory:
    """The summary made again from `sources`, as consolidation makes one (condense.py): their condensed text, the
    mean of the top three importances, the dominant type, the union of what they are about."""
    text = summarise([(m.content.strip(), m.importance) for m in sources]).strip()
    top = sorted((m.importance for m in sources), reverse=True)[:3]
    return replace(summary, content=text or " ".join(m.content.strip() for m in sources),
                   importance=round(sum(top) / len(top), 4), type=dominant_type(sources), about=joint_about(sources))


def _save(env: WorkerEnv, remade: Sequence[StoredMemory], orphaned: Sequence[StoredMemory], now: float) -> None:
    db = env.DB
    ids = [m.id for m in remade]
    statements = [store.rewrite_memory(db, m) for m in remade]
    statements += store.set_state(db, ids, "pending") + store.enqueue_many(db, ids, now) if ids else []
    if orphaned:
        gone = [m.id for m in orphaned]
        statements += store.record_forgets(db, orphaned, ORPHANED, now) + store.set_state(db, gone, "forgotten")
    if statements:
        db.batch(statements + [store.bump_revision(db)])
