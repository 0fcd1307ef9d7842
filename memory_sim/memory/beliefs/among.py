"""Supersession among recall's candidates: which of them a later one corrects (detect.py's rule), found when
recall ranks them, with no write. The embedder is asked only for the pairs whose verdict turns on their topic,
and only about memories in the index (its cache answers for them; a memory kept in D1 only is never embedded);
when it cannot answer, for a memory outside the index, and in keyword recall, which embeds nothing, those pairs
are left unlinked."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import EmbeddingUnavailable
from memory_sim.memory.beliefs.detect import Belief, Refine, links, subjects
from memory_sim.memory.models import Recollection, StoredMemory
from memory_sim.memory.rules import HOURS_PER_DAY

Profiles = Callable[[], Sequence[Mapping[str, Any]]]


def beliefs_of(found: Sequence[Recollection], profiles: Profiles) -> list[Belief]:
    """The observations among `found` as the detector reads them; the registry is read only when one of them
    names no NPC in `about` (its subjects then come from the names in its text)."""
    observations = [r for r in found if r.kind == "observation"]
    registry = profiles() if any(not r.about for r in observations) else ()
    return [
        Belief(r.id, r.npc_id, r.type, r.day * HOURS_PER_DAY + r.hour, r.text, subjects(r.about, r.text, registry))
        for r in observations
    ]


def stored_beliefs(memories: Sequence[StoredMemory], profiles: Sequence[Mapping[str, Any]]) -> list[Belief]:
    """An NPC's stored observations as the detector reads them."""
    return [
        Belief(m.id, m.npc_id, m.type, m.day * HOURS_PER_DAY + m.hour, m.content,
               subjects(m.about, m.content, profiles))
        for m in memories if m.kind == "observation"
    ]


def embedded_similarity(
    env: WorkerEnv, embed: bool = True, embeddable: Callable[[Belief], bool] = lambda _: True
) -> Callable[[Sequence[tuple[Belief, Belief]]], list[float]]:
    """Cosine similarity of each pair's texts by the env's embedder; NaN (no topic) when `embed` is False, when
    either memory is not `embeddable`, or when the embedder fails."""

    def similarity(pairs: Sequence[tuple[Belief, Belief]]) -> list[float]:
        if not embed:
            return [float("nan")] * len(pairs)
        asked = [(n, o) for n, o in pairs if embeddable(n) and embeddable(o)]
        if len(asked) < len(pairs):
            scored = dict(zip([(n.id, o.id) for n, o in asked], similarity(asked) if asked else [], strict=True))
            return [scored.get((n.id, o.id), float("nan")) for n, o in pairs]
        texts = sorted({b.text for pair in pairs for b in pair})
        try:
            vectors = dict(zip(texts, env.embedder.embed(texts), strict=True))
        except EmbeddingUnavailable:
            return [float("nan")] * len(pairs)  # NaN passes no threshold: only topic-free verdicts stand
        return [float(np.dot(vectors[n.text], vectors[o.text])) for n, o in pairs]

    return similarity


def superseded_among(
    env: WorkerEnv, found: Sequence[Recollection], profiles: Profiles, *, embed: bool = True,
    refine: Refine | None = None,
) -> dict[str, str]:
    """{stale id: the id of the first later memory among `found` that corrects it}. `embed=False` asks the
    embedder nothing (keyword recall embeds nothing): only the verdicts that need no topic stand. `refine`: a
    chat model's verdicts (chat.py), where one is configured."""
    beliefs = beliefs_of(found, profiles)
    if len(beliefs) < 2:
        return {}
    # only memories in the index: their embeddings exist already (the embedder's cache); one kept in D1 only is
    # never embedded, by design
    indexed = {r.id for r in found if r.source == "vectorize"}
    similarity = embedded_similarity(env, embed, lambda b: b.id in indexed)
    return {stale: later for stale, (later, _) in links(beliefs, similarity, refine).items()}
