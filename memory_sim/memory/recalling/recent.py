"""Recent memories kept in D1 only, searched by keyword and recency: the decision module's short-term memory.

A memory at or below `config.index_threshold` (0.7) never reaches the vector index, so recall by meaning cannot
find it: "Is the road to the mill passable?" misses "The mill road is flooded past the second bridge" (0.6).
`decision_context`, and `recall`/`weighted_recall` with `include_recent=True`, also look at the NPC's last
`RECENT_DAYS` sim days of such memories, without embedding anything:

    score = (share of the query's words the memory holds) / (1 + age_days * RECENCY_RATE)

Words are keyword recall's (memory/recalling/keyword.py: stopwords out, lightly stemmed); the query's words are counted
from the question as asked, and a word recall's name expansion adds (a registered NPC's name or role) counts as
a match too. Scores lie in 0..1, as vector recall's do, so both rank together. Results say `source="d1"`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.memory.ledger import store
from memory_sim.memory.models import Recollection, StoredMemory
from memory_sim.memory.recalling.keyword import tokenize
from memory_sim.memory.recalling.recall import to_recollection

RECENT_DAYS = 7  # how far back short-term memory reaches, in sim days (today included)
RECENCY_RATE = 0.1  # a day-old memory scores 1/1.1 of today's, a week-old one 1/1.7
RECENT_ROWS = 200  # the newest rows read at most: a busy week of one NPC


def score(query_words: Sequence[str], extra_words: Iterable[str], text: str, age_days: int) -> float:
    """Keyword share times recency (module docstring); 0 when the memory holds none of the query's words."""
    if not query_words:
        return 0.0
    words = set(tokenize(text))
    matched = len(set(query_words) & words) + (1 if words & set(extra_words) else 0)
    share = min(1.0, matched / len(set(query_words)))
    return share / (1.0 + max(0, age_days) * RECENCY_RATE)


def recent_candidates(env: WorkerEnv, npc_id: str, query: str, expanded: str, today: int) -> list[Recollection]:
    """The NPC's recent D1-only memories that share a word with the query, scored, labelled `source="d1"`."""
    asked = tokenize(query)
    extra = set(tokenize(expanded)) - set(asked)
    rows: list[StoredMemory] = store.kept_in_d1_only(env.DB, npc_id, today - RECENT_DAYS + 1, RECENT_ROWS)
    found = []
    for m in rows:
        value = score(asked, extra, m.content, today - m.day)
        if value > 0.0:
            found.append(to_recollection(m, value, "d1"))
    return found
