"""When a key's current memory may take the place its older versions earned (scoring.py's `current_first`).

A wrong inferred key links memories that have nothing to do with each other ("I'm swamped with the kids and
work", "I've been looking into counselling as a career"); handing an older version's place to such a newer memory
puts an unrelated memory first and pushes the answer down, which costs more than a stale version left first. Two
rules keep the hand-over to where it answers the question:

- A question about the past ("What did Ada think of Cole?", "When was Tom ill?": did, was, were) asks what was
  true then, so a key's versions keep the places they earned (the older ones still marked as history).
- For a key the memory system inferred, the current memory must itself answer the question nearly as well as its
  best older version found (cosine similarity at least `ANSWER_SHARE` of it): a real update is about the same
  thing as what it replaces ("I don't trust Cole" -> "Cole has become a friend I rely on"). A key the game gave, or
  an opinion memory the game wrote about one NPC, is trusted as it is ("Tom saved my loom from the fire" is Wren's
  view of Tom now, whatever it shares with the question).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

import numpy as np

from memory_sim.bindings.ai import Embedder
from memory_sim.errors import AiError
from memory_sim.memory.models import Recollection
from memory_sim.memory.scoring import Chains, current_of

ANSWER_SHARE = 0.85  # set on LoCoMo's tuning conversations (conv-26, conv-30) with the labelled tuning pairs' tests
_ASKS_WHAT_WAS = re.compile(r"\b(did|didn't|was|wasn't|were|weren't)\b", re.IGNORECASE)


def asks_what_was(query: str) -> bool:
    """Whether the question is put in the past tense (did, was, were): it asks what was true then."""
    return _ASKS_WHAT_WAS.search(query) is not None


def doubtful(embedder: Embedder, query: str, found: Sequence[Recollection], chains: Chains,
             given: Collection[str] = ()) -> frozenset[str]:
    """The current memories of keys among `found` that keep out of the hand-over in this recall: every one where
    the question asks about the past; else those of inferred keys (not in `given`, the ids whose state the game
    named) that do not answer `query` nearly as well as their best older version among `found`. Where the embedder
    fails, only the past-tense rule applies."""
    current = current_of(chains)
    groups: dict[str, list[str]] = {}
    for r in found:
        if r.id in current:
            groups.setdefault(current[r.id], []).append(r.id)
    if asks_what_was(query):
        return frozenset(groups)
    texts = {r.id: r.text for r in found}
    linked = {head: [i for i in ids if i != head] for head, ids in groups.items()
              if head in texts and head not in given and any(i != head for i in ids)}
    if not linked:
        return frozenset()
    ids = sorted({i for head, older in linked.items() for i in (head, *older)})
    try:
        similarity = embedder.embed([texts[i] for i in ids]) @ embedder.embed([query], query=True)[0]
    except AiError:
        return frozenset()
    of = dict(zip(ids, np.asarray(similarity, dtype=float).tolist(), strict=True))
    return frozenset(head for head, older in linked.items() if of[head] < ANSWER_SHARE * max(of[i] for i in older))
