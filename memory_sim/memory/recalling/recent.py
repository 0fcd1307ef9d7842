"""Recent memories kept in D1 only, for the decision module: which join recall's candidates, and on what scale.
Pure: no I/O (recall.py reads the rows and embeds them).

A memory the index rule keeps out (memory/index_rule.py: an observation at importance 0.7 or below) is not in the
vector index, so recall by meaning cannot find it: "Is the road to the mill passable?" misses "The mill road is
flooded past the second bridge" (0.6). `decision_context`, and `recall`/`weighted_recall` with
`include_recent=True`, also rank the NPC's such memories of the last `RECENT_DAYS` sim days that share a word with
the question (at most `RECENT_LIMIT`, those holding most of its words first).

They are scored on the same scale as the indexed memories, as they would be were they in the index: each is
embedded at recall time (as recall does for rows the index may not show yet) and its cosine joins the vector
scores, and in hybrid mode the keyword and neighbour terms run over one corpus holding both. Nothing is added on
top: age and importance enter only where weighted recall's formula puts them, once, for every memory alike. (Scored
apart, by keyword share times recency, and then weighted by importance and age again, a 0.4 warning about the
road the NPC is taking ranked under an unrelated festival memory.) Results say `source="d1"`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory_sim.memory.models import StoredMemory
from memory_sim.memory.recalling.keyword import tokenize

RECENT_DAYS = 7  # how far back short-term memory reaches, in sim days (today included)
RECENT_ROWS = 200  # the newest rows read at most: a busy week of one NPC
RECENT_LIMIT = 32  # the most of them embedded for one recall


def first_day(today: int) -> int:
    """The first sim day short-term memory reaches back to."""
    return today - RECENT_DAYS + 1


def word_share(query_words: Sequence[str], text: str) -> float:
    """Share of the query's words (keyword.tokenize's) the text holds."""
    wanted = set(query_words)
    return len(wanted & set(tokenize(text))) / len(wanted) if wanted else 0.0


def sharing_words(rows: Sequence[StoredMemory], query: str, limit: int = RECENT_LIMIT) -> list[StoredMemory]:
    """The rows holding at least one of the query's words (the query as recall expands it: a named NPC's role
    counts), most of its words first, then newest; at most `limit`. Which rows are ranked, not how."""
    words = tokenize(query)
    shares = {m.id: word_share(words, m.content) for m in rows}
    matching = [m for m in rows if shares[m.id] > 0.0]
    return sorted(matching, key=lambda m: (-shares[m.id], -m.day, -m.hour, m.id))[:limit]


def as_if_indexed(indexed: Mapping[str, float], recent: Mapping[str, float]) -> dict[str, float]:
    """Vector scores with the recent memories' cosines joined as the index would have returned them: hybrid
    recall scales the index's best N between their lowest and highest, so one below the lowest would not have
    been among them (it scores 0 there, as any indexed memory outside the N does) and is left out; one above the
    highest raises the top, as it would had it been indexed."""
    if not indexed:
        return dict(recent)
    low = min(indexed.values())
    return {**indexed, **{i: s for i, s in recent.items() if s >= low and i not in indexed}}
