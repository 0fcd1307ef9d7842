"""Ranking by a question's time (memory/recalling/when.py): pure, no I/O.

A `TimeFrame` is a question's time focus placed among one NPC's memories: the sim days (and hours) it names, or
the memory of the event it names with the memories just before or after it, or "the last/first time". Each
recalled memory then scores

    score = relevance share + time boost

where the relevance share is the mode's score (or weighted recall's effective score) divided by the best
candidate's (0..1, negative scores count as 0); a memory added for its time, not found by the mode (placing.py),
has its keyword share instead (BM25 over the NPC's memories, divided by the best match's). And the time
boost (`TimeWeights`) is:
- a span: `span` for a memory of those days (and hours, when named), `off_hours` for one of those days at other
  hours, `slack` for one of the days next to them (`DaySpan.slack`), 0 otherwise; a span of more than `wide_days`
  (a month) is a loose frame: `wide_span` inside, `wide_slack` beside, so a much better match just outside it
  (told the week after) can still lead;
- an event: for "after" ("before"), `near` for the next memory after it (the last one before it), `step` less for
  each further one of the few right beside it, `side` for the others on that side; for "since", `since` for every
  memory after it; the event's own memory, and those that mention it nearly as well (`placing.MENTION_SHARE`), get
  `event`, less than `near`: "after the trip" asks for what followed it, yet people often say both in one breath
  ("after the accident I saw what family means");
- "the last (first) time": memories whose share is at least `matches` count as the matter; the newest (oldest)
  of them gets `ordinal`, the others less by their place in time, so time orders them.
A memory from after the asker's moment gets no boost. The score shown is the score that ordered the list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from memory_sim.memory.models import Recollection
from memory_sim.memory.recalling.when import DaySpan, Ordinal, Relation
from memory_sim.memory.rules import HOURS_PER_DAY


@dataclass(frozen=True, slots=True)
class TimeWeights:
    """The time boosts (module docstring). A share is at most 1, so boosts a whole 1 apart rank strictly: a memory
    of the span's days and hours above one of its days at other hours, above one of the days beside it, above the
    rest; the few memories right beside an event above the others on its side."""

    span: float = 3.0
    off_hours: float = 2.0
    slack: float = 1.0
    near: float = 2.0
    step: float = 0.5
    side: float = 0.5
    event: float = 0.9
    since: float = 1.0
    wide_days: int = 14
    wide_span: float = 1.0
    wide_slack: float = 0.5
    ordinal: float = 2.0
    matches: float = 0.75


@dataclass(frozen=True, slots=True)
class TimeFrame:
    """A time focus placed among an NPC's memories. `now_hours`: the asker's moment (sim hours since day 0).
    `anchor_id`/`anchor_hours`: the memory of the named event and when it happened; `near_ids`, the memories
    right beside it on the `relation`'s side, the nearest first."""

    now_hours: int
    span: DaySpan | None = None
    relation: Relation | None = None
    anchor_id: str | None = None
    anchor_hours: int = 0
    near_ids: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()  # other memories that match the event nearly as well as its own
    ordinal: Ordinal | None = None


def hours_of(memory: Recollection) -> int:
    return memory.day * HOURS_PER_DAY + memory.hour


def span_boost(span: DaySpan, day: int, hour: int, weights: TimeWeights) -> float:
    wide = span.last - span.first + 1 > weights.wide_days  # "in May": a loose frame, relevance leads within it
    if span.holds(day, hour):
        return weights.wide_span if wide else weights.span
    if span.first <= day <= span.last:
        return weights.off_hours
    if span.first - span.slack <= day <= span.last + span.slack:
        return weights.wide_slack if wide else weights.slack
    return 0.0


def anchor_boost(frame: TimeFrame, memory: Recollection, weights: TimeWeights) -> float:
    if frame.anchor_id is None:
        return 0.0
    if memory.id == frame.anchor_id or memory.id in frame.mentions:  # below the memory right beside it, above
        return weights.event  # the rest: people say the event and what followed in one breath
    at = hours_of(memory)
    if frame.relation == "since":  # all that followed, alike: relevance orders it
        return weights.since if at >= frame.anchor_hours else 0.0
    if memory.id in frame.near_ids:  # the nearest first: "just after" the event is the next thing remembered
        return weights.near - weights.step * frame.near_ids.index(memory.id)
    on_side = at < frame.anchor_hours if frame.relation == "before" else at >= frame.anchor_hours
    return weights.side if on_side else 0.0


def ordinal_boosts(frame: TimeFrame, shares: Sequence[float], memories: Sequence[Recollection],
                   weights: TimeWeights) -> list[float]:
    """The memories of the matter (share >= `matches`, not after now) by their place in time: the newest ("last")
    or oldest ("first") gets `ordinal`, the far end half of it."""
    matter = [i for i, (s, m) in enumerate(zip(shares, memories, strict=True))
              if s >= weights.matches and hours_of(m) <= frame.now_hours]
    in_time = sorted(matter, key=lambda i: (hours_of(memories[i]), memories[i].id), reverse=frame.ordinal == "last")
    boosts = [0.0] * len(memories)
    for place, i in enumerate(in_time):
        boosts[i] = weights.ordinal * (1.0 - 0.5 * place / max(1, len(in_time) - 1))
    return boosts


def time_boosts(frame: TimeFrame, shares: Sequence[float], memories: Sequence[Recollection],
                weights: TimeWeights) -> list[float]:
    boosts = ordinal_boosts(frame, shares, memories, weights) if frame.ordinal else [0.0] * len(memories)
    for i, memory in enumerate(memories):
        if hours_of(memory) > frame.now_hours:
            boosts[i] = 0.0
            continue
        if frame.span is not None:
            boosts[i] += span_boost(frame.span, memory.day, memory.hour, weights)
        boosts[i] += anchor_boost(frame, memory, weights)
    return boosts


def relevance_shares(scores: Sequence[float]) -> list[float]:
    best = max((s for s in scores), default=0.0)
    return [max(0.0, s) / best if best > 0 else 0.0 for s in scores]


def rank_in_time(ranked: Sequence[Recollection], frame: TimeFrame, *, weighted: bool,
                 pulled: Mapping[str, float] | None = None, weights: TimeWeights = TimeWeights()) -> list[Recollection]:
    """`ranked` (already scored by the mode, or by weighted recall when `weighted`) re-scored as the module
    docstring says and sorted by that score, highest first; ties keep the earlier order. `pulled`: the shares of
    the memories added for their time rather than found by the mode (their keyword share, placing.py)."""
    pulled = pulled or {}
    own = [r for r in ranked if r.id not in pulled]
    best = relevance_shares([(r.effective_score or 0.0) if weighted else r.score for r in own])
    share_of = {r.id: s for r, s in zip(own, best, strict=True)} | dict(pulled)
    shares = [share_of[r.id] for r in ranked]
    boosts = time_boosts(frame, shares, ranked, weights)
    timed = [share + boost for share, boost in zip(shares, boosts, strict=True)]
    rescored = [replace(r, effective_score=t) if weighted else replace(r, score=t)
                for r, t in zip(ranked, timed, strict=True)]
    order = sorted(range(len(rescored)), key=lambda i: -timed[i])
    return [rescored[i] for i in order]
