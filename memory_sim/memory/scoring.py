"""Pure scoring, decay and pruning: no I/O, no clock. Jobs call these to make a plan, then apply it.

The design's weighted recall:  effective = score * importance / (1 + (current_day - day) * decayFactor).
Decay factors grow daily, more slowly for important memories; past `forget_threshold` a memory is re-embedded
(if important: rehearsal resets its factor) or dropped from the index (it stays in D1).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from memory_sim.memory.models import Recollection, StoredMemory

if TYPE_CHECKING:
    from memory_sim.memory.config import MemoryConfig  # read by attribute: the scoring never builds or checks one


def weighted_score(score: float, importance: float, current_day: int, day: int, decay_factor: float) -> float:
    """The seed's formula; a memory from the future (clock skew) counts as from today."""
    age = max(0, current_day - day)
    return score * importance / (1.0 + age * decay_factor)


def retention_value(importance: float, current_day: int, day: int, decay_factor: float) -> float:
    """What a memory is worth keeping in the index, independent of any query (score taken as 1)."""
    return weighted_score(1.0, importance, current_day, day, decay_factor)


def daily_decay_rate(importance: float, config: MemoryConfig) -> float:
    """Linear between `decay_rate` (importance 0) and `decay_rate_floor` (importance 1)."""
    return config.decay_rate_floor + (config.decay_rate - config.decay_rate_floor) * (1.0 - importance)


def grow_decay(decay_factor: float, importance: float, days: int, config: MemoryConfig) -> float:
    return round(min(1.0, decay_factor + daily_decay_rate(importance, config) * max(0, days)), 6)


@dataclass(frozen=True, slots=True)
class DecayPlan:
    """What `decay_and_prune` will do: new factors for all, and which indexed memories to refresh or drop."""

    factors: dict[str, float] = field(default_factory=dict)
    reembed: list[str] = field(default_factory=list)
    unindex: list[str] = field(default_factory=list)


class Decaying(Protocol):
    """What decay reads of a memory (a `StoredMemory`, or the narrower row a decay pass reads)."""

    @property
    def id(self) -> str: ...
    @property
    def importance(self) -> float: ...
    @property
    def decay_factor(self) -> float: ...
    @property
    def decayed_day(self) -> int: ...
    @property
    def index_state(self) -> str: ...


def plan_decay(memories: Sequence[Decaying], current_day: int, config: MemoryConfig) -> DecayPlan:
    plan = DecayPlan()
    for memory in memories:
        days = current_day - memory.decayed_day
        if days <= 0:
            continue  # already decayed for this day: running the job twice changes nothing
        factor = grow_decay(memory.decay_factor, memory.importance, days, config)
        if memory.index_state == "indexed" and factor >= config.forget_threshold:
            if memory.importance >= config.keep_importance:
                plan.reembed.append(memory.id)
                factor = config.initial_decay  # rehearsal: an important memory is refreshed, not forgotten
            else:
                plan.unindex.append(memory.id)
        plan.factors[memory.id] = factor
    return plan


def plan_cap_prune(
    indexed: Sequence[StoredMemory], current_day: int, incoming: int, config: MemoryConfig
) -> list[str]:
    """Ids to drop from the index, lowest retention value first, when `incoming` more would pass the cap.

    Prunes down to `cap_headroom` of the cap so the next writes do not hit it again at once.
    """
    if len(indexed) + incoming <= config.index_cap:
        return []
    target = max(0, math.floor(config.index_cap * config.cap_headroom) - incoming)
    ranked = sorted(
        indexed, key=lambda m: (retention_value(m.importance, current_day, m.day, m.decay_factor), m.day, m.id)
    )
    return [m.id for m in ranked[: max(0, len(indexed) - target)]]


def retry_delay_s(attempts: int, config: MemoryConfig) -> float:
    """Exponential backoff for failed embeddings: base, 2*base, 4*base ... capped."""
    return min(config.retry_max_s, config.retry_base_s * (2 ** max(0, attempts - 1)))


def rank_weighted(recollections: Sequence[Recollection], top_k: int) -> list[Recollection]:
    """Highest effective score first, summaries capped by their sources (`capped_by_sources`); ties broken by raw
    score, then a memory before a summary, then id, so ranking is deterministic."""
    ordered = sorted(capped_by_sources(recollections),
                     key=lambda r: (-(r.effective_score or 0.0), -r.score, r.kind == "summary", r.id))
    return ordered[:top_k]


def capped_by_sources(recollections: Sequence[Recollection]) -> list[Recollection]:
    """Each summary's effective score capped at the best of its sources' among the same candidates.

    A summary stands in for its sources (`distinct` keeps one of them), so it is worth no more than the best
    of them. Uncapped, it pairs one sentence's relevance with an importance averaged over all its sources and
    outranks the memory that made it relevant, or others that answer. Only sources among the candidates count
    (scored for the same query); a summary with none of them there (they left the index, or match less) keeps
    its own score: there it is the best evidence of its day."""
    effective = {r.id: r.effective_score for r in recollections}
    out = []
    for r in recollections:
        best = [e for e in (effective.get(i) for i in r.sources) if e is not None]
        if r.effective_score is not None and best and max(best) < r.effective_score:
            r = replace(r, effective_score=max(best))
        out.append(r)
    return out


def rank_by_score(recollections: Sequence[Recollection], top_k: int) -> list[Recollection]:
    """Highest score first; on a tie a memory before a summary (`distinct` then keeps the memory, which answers
    as well and says only that), then by id."""
    return sorted(recollections, key=lambda r: (-r.score, r.kind == "summary", r.id))[:top_k]


_WORD = re.compile(r"\w+")


def text_key(text: str) -> str:
    """What makes two texts the same: their words, case and punctuation aside."""
    return " ".join(_WORD.findall(text.casefold()))


def yield_to_sources(ranked: Sequence[Recollection], share: float) -> list[Recollection]:
    """`ranked` without each summary that one of its sources there nearly matches: a source scoring at least
    `share` of the summary's score (a positive one). Order is kept.

    BM25 adds up a query's words over a whole text, so a topic summary whose one sentence names a person by their
    role and whose next names them outright outscores either sentence alone, though neither answers better. Kept,
    it would fill one slot for its sources and push them out (`distinct` keeps the better-ranked of the two); the
    source answers as well and says only that, as on a tie (`rank_by_score`). A summary that leads clearly, or
    whose sources are not among the candidates, stays."""
    score_of = {r.id: r.score for r in ranked}
    return [
        r for r in ranked
        if r.kind != "summary" or r.score <= 0.0
        or not any(score_of.get(s, -math.inf) >= share * r.score for s in r.sources)
    ]


def distinct(ranked: Sequence[Recollection]) -> list[Recollection]:
    """A ranking with repeats collapsed: of recollections with the same text, and of a summary and a memory it
    was made from (`sources`), the first (the better-ranked) stays. Order is kept; callers rank more than they
    return so the top k stays full."""
    kept: list[Recollection] = []
    texts: set[str] = set()
    kept_ids: set[str] = set()
    in_kept_summaries: set[str] = set()
    for r in ranked:
        key = text_key(r.text)
        if key in texts or r.id in in_kept_summaries or kept_ids.intersection(r.sources):
            continue
        kept.append(r)
        texts.add(key)
        kept_ids.add(r.id)
        in_kept_summaries.update(r.sources)
    return kept


def _min_max(values: Sequence[float]) -> list[float]:
    low, high = min(values), max(values)
    if math.isclose(low, high):
        return [0.5] * len(values)  # as Generative Agents does when all are equal
    return [(v - low) / (high - low) for v in values]


def generative_agents_scores(
    recollections: Sequence[Recollection],
    current_hours: int,
    hours_of: dict[str, int],
    decay: float = 0.995,
    weights: tuple[float, float, float] = (0.5, 3.0, 2.0),
) -> list[float]:
    """Recency x relevance x importance as in Generative Agents (weights as its code: 0.5, 3, 2), each term
    min-max normalised over the candidates; recency decays per game hour (not by rank, as its code does)."""
    if not recollections:
        return []
    recency = _min_max([decay ** max(0, current_hours - hours_of.get(r.id, current_hours)) for r in recollections])
    relevance = _min_max([r.score for r in recollections])
    importance = _min_max([r.importance for r in recollections])
    w_rec, w_rel, w_imp = weights
    return [w_rec * a + w_rel * b + w_imp * c for a, b, c in zip(recency, relevance, importance, strict=True)]


# --- current state first: the newest memory of an NPC under a state key ranks above its older versions ---------

STALE_MARGIN = 0.01  # a stale version scores at least this share (of the current one's size) below it

Chains = Mapping[str, Sequence[str]]  # state key -> the NPC's memory ids under it, oldest first


def next_newer(chains: Chains) -> dict[str, str]:
    """{stale id: the id of the next newer memory under the same key}; a key's newest memory is in no entry."""
    return {older: newer for ids in chains.values() for older, newer in itertools.pairwise(ids)}


def current_of(chains: Chains) -> dict[str, str]:
    """{memory id: the id of its key's current (newest) memory}, for every memory under a key."""
    return {i: ids[-1] for ids in chains.values() if ids for i in ids}


def current_first(
    found: Sequence[Recollection], chains: Chains, *, weighted: bool = False, unearned: Collection[str] = (),
    keep: Collection[str] = (),
) -> list[Recollection]:
    """The scores a key's versions earned among `found`, handed round so its current memory holds the best of them
    and the older versions the rest, in their own order, the best of those `STALE_MARGIN` below the current one
    (`stale_values`): a key takes no more places in the ranking than its versions earned, and its current state
    takes the first of them. `unearned`: ids whose own score earned nothing (a current memory pulled in from D1);
    where one is, the lowest older version drops a margin below the rest. By `score`, or with `weighted` by
    `effective_score`, the `score` scaled by the same factor (the design's formula is linear in the score, so the
    weighted score still follows it; a version with a weighted score of 0 keeps it). Each older version is marked
    `superseded_by` the next newer memory under its key. `keep`: current ids whose versions keep the scores they
    earned (recalling/handover.py: the current memory does not answer the question, so its key is doubtful here);
    they are still marked. Nothing else changes."""
    current, later = current_of(chains), next_newer(chains)
    groups: dict[str, list[Recollection]] = {}
    for r in found:
        if r.id in current and (not weighted or _value(r, weighted) != 0):
            groups.setdefault(current[r.id], []).append(r)
    new: dict[str, float] = {}
    for head, versions in groups.items():
        if head in keep or head not in {v.id for v in versions} or len(versions) < 2:
            continue
        values = sorted((_value(v, weighted) for v in versions if v.id not in unearned), reverse=True)
        while len(values) < len(versions):  # the lowest older version yields its place to the current one
            values.append(stale_values(values[-1:], values[-1])[0])
        stale = sorted((v for v in versions if v.id != head), key=lambda v: -_value(v, weighted))
        new[head] = values[0]
        new.update(zip([v.id for v in stale], stale_values(values[1:], values[0]), strict=True))
    out = []
    for r in found:
        if r.id in new and new[r.id] != _value(r, weighted):
            r = _valued(r, new[r.id], weighted)
        if r.id in later and r.superseded_by != later[r.id]:
            r = replace(r, superseded_by=later[r.id])
        out.append(r)
    return out


def borrow_score(found: Sequence[Recollection], chains: Chains, pulled: Collection[str]) -> list[Recollection]:
    """Each current memory in `pulled` (brought in from D1, no score of its own) given the best score of its older
    versions among `found`, so that weighted recall can weigh it; `current_first` counts that score as unearned."""
    current = current_of(chains)
    best: dict[str, float] = {}
    for r in found:
        if r.id in current and r.id not in pulled:
            best[current[r.id]] = max(best.get(current[r.id], -math.inf), r.score)
    return [replace(r, score=best[r.id]) if r.id in pulled and r.id in best else r for r in found]


def stale_values(values: Sequence[float], current: float) -> list[float]:
    """Stale versions' scores: at least `STALE_MARGIN` of the current one's size below the current's. Where the
    best of them is above that cap, all are scaled by one factor (their order kept, no new ties); scores at or below
    zero are capped instead."""
    cap = current - max(STALE_MARGIN * abs(current), 1e-6)
    best = max(values, default=-math.inf)
    if best <= cap:
        return list(values)
    if best > 0 and cap > 0:
        return [v * cap / best for v in values]
    return [min(v, cap) for v in values]


def _value(r: Recollection, weighted: bool) -> float:
    return (r.effective_score or 0.0) if weighted else r.score


def _valued(r: Recollection, new: float, weighted: bool) -> Recollection:
    """`r` with score `new`; weighted: the weighted score `new`, and the score that gives it by the same weight."""
    if not weighted:
        return replace(r, score=new)
    old = r.effective_score or 0.0
    return replace(r, effective_score=new, score=r.score * new / old if old != 0 else r.score)
