"""Recall's candidate generation, kept apart from ranking (scoring.py) so a mode is one parameter.

Three sources, merged by id:
- the vector index, filtered to the NPC (`filter={"npcId": ...}`), its matches checked against D1 (the ledger
  decides: a match D1 owns for another NPC, or has since dropped from the index, is discarded);
- D1 rows the index may not show yet (in the outbox, or upserted within the visibility window), scored by
  embedding them here, so a memory remembered moments ago is found;
- when the index fails or answers nothing: D1's short-term memories, scored by word overlap, marked
  `source="short_term"` (hybrid recall answers from its BM25 side then, marked `source="keyword"`); the
  `Candidates` say why (`cause`), and the memory system says it where it happens, in one line.
Each recollection is labelled with what answered it: "vectorize" (the index), "keyword" (BM25 over D1, the
keyword mode or hybrid's keyword side), "short_term" (D1 without the index: the fallback, or a memory the index
has not caught up with yet).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

import numpy as np

from memory_sim.bindings.vectorize_codes import UNINDEXED
from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import EmbeddingUnavailable, VectorizeError, VectorizeUnavailable
from memory_sim.memory.ledger import store
from memory_sim.memory.ledger.schema import natural_key  # noqa: F401  (re-exported: LoCoMo ids' turn order)
from memory_sim.memory.models import DEFAULT_RECALL_MODE, RecallMode, Recollection, Source, StoredMemory
from memory_sim.memory.recalling.cues import query_cues
from memory_sim.memory.recalling.hybrid import HybridParams
from memory_sim.memory.recalling.recall_cache import NpcView, RecallCache
from memory_sim.memory.recalling.recent import RECENT_ROWS, as_if_indexed, sharing_words

if TYPE_CHECKING:
    from memory_sim.memory.config import MemoryConfig

_WORD = re.compile(r"[a-z0-9']+")
_RECENT_LIMIT = 32
NOTHING_INDEXED = "the index holds none of this NPC's memories (none above the index threshold yet, or all pruned)"


@dataclass(frozen=True, slots=True)
class Candidates:
    recollections: list[Recollection]
    fell_back: bool  # True when the index failed or answered nothing and D1 answered instead
    cause: str = ""  # why it fell back, in one line ("" when it did not)
    view: NpcView | None = None  # the NPC's view the candidates were ranked from, proved current (hybrid)


def to_recollection(memory: StoredMemory, score: float, source: Source) -> Recollection:
    return Recollection(
        id=memory.id,
        npc_id=memory.npc_id,
        text=memory.content,
        importance=memory.importance,
        day=memory.day,
        type=memory.type,
        score=float(score),
        source=source,
        decay_factor=memory.decay_factor,
        kind=memory.kind,
        hour=memory.hour,
        about=memory.about,
        state_key=memory.state_key,
    )


def with_sources(env: WorkerEnv, recollections: Sequence[Recollection]) -> list[Recollection]:
    """Summaries carry the ids of the memories they were made from (D1's `memory_sources`); one read, and none
    when no summary was recalled."""
    summaries = [r.id for r in recollections if r.kind == "summary"]
    if not summaries:
        return list(recollections)
    lineage = store.sources_of(env.DB, summaries)
    return [replace(r, sources=lineage[r.id]) if r.id in lineage else r for r in recollections]


def overlap_score(query: str, text: str) -> float:
    """Share of the query's words found in the text: the fallback's relevance when no vector is available."""
    wanted = set(_WORD.findall(query.lower()))
    if not wanted:
        return 0.0
    return len(wanted & set(_WORD.findall(text.lower()))) / len(wanted)


def expand_query(query: str, profiles: Sequence[dict[str, str]], asker: str | None = None) -> str:
    """Adds who a named NPC is ("Tom: the blacksmith, the smith at the forge") to the query: memories often
    name people by role, and an NPC knows who Tom is even when the embedding model does not. Both ways: a query
    naming the role ("the blacksmith") gets the same note, so it reaches memories that say "Tom". Never the
    `asker`'s own profile (the NPC whose memories are searched): they say "I", and its own role in them names
    someone else ("the miller from Eastbrook", to the miller asking whether he was ever ill)."""
    text = " ".join(_WORD.findall(query.lower()))
    known = [p for p in profiles if p["npc_id"] != asker and any(_names(text, n) for n in _known_as(p))]
    notes = [f"{p['name']}: {p['role']}, {p['description']}".rstrip(", ").replace(": , ", ": ") for p in known]
    return " ".join([query, *notes])


def _known_as(profile: dict[str, str]) -> list[str]:
    """What a query may call a registered NPC: its id, name, aliases ("Old Tom", "the smith") and role."""
    aliases = str(profile.get("aliases") or "").split(",")
    return [n for n in (profile["npc_id"], profile["name"], *aliases, str(profile.get("role") or "")) if n]


def _names(words: str, name: str) -> bool:
    """The query's words hold the name's words in a row (a name of several words must appear whole)."""
    wanted = " ".join(_WORD.findall(name.lower()))
    return bool(wanted) and f" {wanted} " in f" {words} "


def vector_matches(env: WorkerEnv, npc_id: str, query_vector: np.ndarray, k: int) -> list[tuple[str, float]]:
    result = env.VECTORIZE.query([float(x) for x in query_vector], top_k=k, filter={"npcId": npc_id})
    return [(m.id, m.score) for m in result.matches]


def from_index(env: WorkerEnv, npc_id: str, matches: Sequence[tuple[str, float]]) -> list[Recollection]:
    return from_rows(npc_id, matches, store.memories_by_ids(env.DB, [i for i, _ in matches]))


def from_rows(npc_id: str, matches: Sequence[tuple[str, float]], rows: dict[str, StoredMemory]) -> list[Recollection]:
    out = []
    for memory_id, score in matches:
        row = rows.get(memory_id)
        # D1 is the ledger: ignore vectors it does not know, owns for another NPC, or has dropped from the index.
        if row is None or row.npc_id != npc_id or row.index_state == "unindexed":
            continue
        out.append(to_recollection(row, score, "vectorize"))
    return out


def best_sentence_caps(env: WorkerEnv, query_vector: np.ndarray, summary_ids: Sequence[str]) -> dict[str, float]:
    """Each summary's best sentence's similarity to the query: the most relevant memory it was made from (cosine
    on unit vectors; the sources' embeddings come from the embedder's cache). Summaries without lineage are
    left out."""
    if not summary_ids:
        return {}
    lineage = store.sources_of(env.DB, summary_ids)
    rows = store.memories_by_ids(env.DB, sorted({i for ids in lineage.values() for i in ids}))
    texts = sorted({m.content for m in rows.values()})
    if not texts:
        return {}
    similarity = dict(zip(texts, (env.embedder.embed(texts) @ query_vector).tolist(), strict=True))
    return {
        summary: max(similarity[rows[i].content] for i in ids if i in rows)
        for summary, ids in lineage.items()
        if any(i in rows for i in ids)
    }


def by_best_sentence(env: WorkerEnv, query_vector: np.ndarray, found: list[Recollection]) -> list[Recollection]:
    """Vector scores of summaries capped at their best sentence's: one vector for a day's unrelated sentences
    ("a fire at the forge" + "Agnes struts about") can match a query none of them answers, and would push out the
    memories that do. A summary is no more relevant than the most relevant memory it was made from."""
    caps = best_sentence_caps(env, query_vector, [r.id for r in found if r.kind == "summary"])
    return [replace(r, score=min(r.score, caps[r.id])) if r.id in caps else r for r in found]


def not_yet_visible(
    env: WorkerEnv, npc_id: str, query_vector: np.ndarray, now: float, config: MemoryConfig, seen: set[str]
) -> list[Recollection]:
    rows = [
        m
        for m in store.not_yet_visible(env.DB, npc_id, now - config.visibility_window_s, _RECENT_LIMIT)
        if m.id not in seen
    ]
    if not rows:
        return []
    vectors = env.embedder.embed([m.content for m in rows])
    scores = vectors @ query_vector.astype(np.float32)
    return [to_recollection(m, float(s), "short_term") for m, s in zip(rows, scores, strict=True)]


def short_term_fallback(env: WorkerEnv, npc_id: str, query: str, config: MemoryConfig) -> list[Recollection]:
    rows = store.recent_short_term(env.DB, npc_id, config.fallback_limit)
    return [to_recollection(m, overlap_score(query, m.content), "short_term") for m in rows]


def short_term_fallback_rows(rows: Sequence[StoredMemory], query: str) -> list[Recollection]:
    return [to_recollection(m, overlap_score(query, m.content), "short_term") for m in rows]


def keyword_candidates(
    env: WorkerEnv, npc_id: str, query: str, k: int, cache: RecallCache | None = None, proof: store.Proof | None = None
) -> list[Recollection]:
    """BM25 over the NPC's memories in D1 (keyword.py); scores divided by the best, so 1.0 tops; ties in
    `store.memories_of` order. With a `cache` (the MemorySystem's), the NPC's keyword view is reused while D1
    proves it current (`proof`: the cache's proof when the caller read it already); else one is built for this
    call. Results are the same."""
    view = cache.view(npc_id, proof, "keyword") if cache is not None else None
    found = (view or NpcView.read(env.DB, npc_id, kind="keyword")).keyword_top(query, k)
    best = found[0][1] if found else 1.0
    return [to_recollection(m, score / best, "keyword") for m, score in found]


def remembered_in_order(env: WorkerEnv, npc_id: str) -> list[StoredMemory]:
    """The NPC's memories in remember order: `short_term_memories.seq`, numbered at remember time from a
    counter in D1 (schema migration 3; rows from before it numbered by day, hour and natural id order)."""
    return store.remembered_in_order(env.DB, npc_id)


def hybrid_candidates(
    env: WorkerEnv, npc_id: str, query: str, query_vector: np.ndarray, k: int, cache: RecallCache | None = None,
    proof: store.Proof | None = None, cue_query: str | None = None, day_zero: date | None = None,
    recent: Sequence[StoredMemory] = (),
) -> Candidates:
    """The vector index's top 100 fused with BM25 over D1 and neighbour context (memory/recalling/hybrid.py, computed
    over arrays by hybrid_arrays.py); episodes are sim days. Raises VectorizeUnavailable like the vector
    path. With a `cache` (the MemorySystem's), the NPC's rows, keyword index and timeline are reused while D1
    proves them current (`proof`: the cache's proof when the caller read it already); results are the same.
    `cue_query`: the question as asked, whose cues (recalling/cues.py; dates against `day_zero`, the date of sim
    day 0) lift the memories matching them; None: no cues. `recent`: memories kept in D1 only that join the
    candidates (recent.py), ranked over a view built for this call."""

    params = HybridParams()
    # D1 first: a D1 read right after the index's matrix product waits for BLAS threads still spinning (DuckDB:
    # 1.7 ms against 0.6 ms)
    view = (cache.view(npc_id, proof) if cache is not None else None) or NpcView.read(env.DB, npc_id)
    indexed = dict(vector_matches(env, npc_id, query_vector, params.vector_candidates))
    indexed = {i: s for i, s in indexed.items() if i in view.by_id}  # the ledger decides, as above
    vector, d1 = indexed, {m.id for m in recent}
    if recent:  # ranked with the indexed ones, over one corpus, as if they were in the index (recent.py)
        view = view_with(env, npc_id, d1)
        vector = as_if_indexed(indexed, recent_cosines(env, recent, query_vector))
    rows, by_id = view.rows, view.by_id
    cues = query_cues(cue_query, view.subjects(), day_zero) if cue_query is not None else None
    ranked = view.rank(query, vector, k, params, cues)
    found = [to_recollection(by_id[i], s, _source(i, indexed, d1)) for i, s in ranked]
    if not indexed:  # the index answered nothing: keywords alone, counted as a fallback like the vector path's
        return Candidates(found or short_term_fallback_rows(rows, query), True, NOTHING_INDEXED, view)
    return Candidates(found, False, view=view)


def _source(memory_id: str, indexed: Mapping[str, float], d1: set[str]) -> Source:
    return "d1" if memory_id in d1 else "vectorize" if memory_id in indexed else "keyword"


def recent_rows(env: WorkerEnv, npc_id: str, query: str, since_day: int) -> list[StoredMemory]:
    """The NPC's memories kept in D1 only from `since_day` on that share a word with the (expanded) query, most
    of its words first (recent.py)."""
    return sharing_words(store.kept_in_d1_only(env.DB, npc_id, since_day, RECENT_ROWS), query)


def recent_cosines(env: WorkerEnv, rows: Sequence[StoredMemory], query_vector: np.ndarray) -> dict[str, float]:
    """Each row's cosine to the query, embedded now as the index would have embedded it; none when the model
    cannot answer (the rows then rank by their keyword and neighbour terms alone)."""
    try:
        vectors = env.embedder.embed([m.content for m in rows])
    except EmbeddingUnavailable:
        return {}
    scores = vectors @ query_vector.astype(np.float32)
    return {m.id: float(s) for m, s in zip(rows, scores, strict=True)}


def view_with(env: WorkerEnv, npc_id: str, extra: set[str]) -> NpcView:
    """A view of the NPC's semantic memories and the `extra` ones kept in D1 only, in remember order, built for
    one recall (the cached views hold the semantic ones alone). The extra ones share the keyword corpus but
    neither lend nor borrow neighbour context: the semantic memories keep the context plain recall gives them,
    and a warning remembered the same day never lifts an unrelated memory beside it (recent.py)."""
    view = NpcView(kind="keyword", loose=frozenset(extra))  # keeps every row it is given
    view.refresh([m for m in store.remembered_in_order(env.DB, npc_id)
                  if m.index_state in store.SEMANTIC_STATES or m.id in extra])
    return view


def gather(
    env: WorkerEnv,
    npc_id: str,
    query: str,
    k: int,
    now: float,
    config: MemoryConfig,
    mode: RecallMode = DEFAULT_RECALL_MODE,
    cache: RecallCache | None = None,
    recent_since: int | None = None,
) -> Candidates:
    """Candidates for `recall` / `weighted_recall`: the index first, D1 when it cannot answer. `recent_since`: a
    sim day; the NPC's memories kept in D1 only from then on that share a word with the query join the
    candidates, scored as the mode scores indexed ones (recent.py; keyword mode already ranks every memory)."""
    # One D1 read proves the cached NPC profiles and the NPC's view current (DuckDB: ~0.5 ms a statement)
    proof = cache.proof() if cache is not None and (config.expand_npc_names or mode != "vector") else None
    asked = query  # cues are read from the question as asked, not from the notes expansion adds
    if config.expand_npc_names:
        profiles = cache.profiles(proof) if cache is not None else store.npc_profiles(env.DB)
        query = expand_query(query, profiles, npc_id)
    recent = [] if recent_since is None else recent_rows(env, npc_id, query, recent_since)
    if mode == "keyword":  # BM25 already ranks every memory: the recent D1-only ones are only labelled
        d1 = {m.id for m in recent}
        found = keyword_candidates(env, npc_id, query, k, cache, proof)
        return Candidates([replace(r, source="d1") if r.id in d1 else r for r in found], False)
    try:
        query_vector = env.embedder.embed([query], query=True)[0]
    except EmbeddingUnavailable as exc:
        cause = f"the query could not be embedded: {exc}"
        return Candidates(short_term_fallback(env, npc_id, query, config), True, cause)
    try:
        if mode == "hybrid":
            return hybrid_candidates(env, npc_id, query, query_vector, k, cache, proof,
                                     asked if config.query_cues else None, config.day_zero, recent)
        matches = vector_matches(env, npc_id, query_vector, k)
    except VectorizeUnavailable as exc:
        return Candidates(short_term_fallback(env, npc_id, query, config), True, f"the index failed: {exc}")
    except VectorizeError as exc:
        if exc.code != UNINDEXED:
            raise
        # the index lost the metadata index recall filters by: D1 answers, and the cause says how to repair it
        cause = f"{exc}; `memory-sim check --repair` restores the metadata index"
        return Candidates(short_term_fallback(env, npc_id, query, config), True, cause)
    found = from_index(env, npc_id, matches)
    with contextlib.suppress(EmbeddingUnavailable):  # the recent rows stay for the fallback below
        found += not_yet_visible(env, npc_id, query_vector, now, config, {r.id for r in found})
        found = by_best_sentence(env, query_vector, found)
    cosines = recent_cosines(env, recent, query_vector) if recent else {}
    found += [to_recollection(m, cosines[m.id], "d1") for m in recent if m.id in cosines]
    if found:
        return Candidates(found, False)
    return Candidates(short_term_fallback(env, npc_id, query, config), True, NOTHING_INDEXED)
