"""Scoring presets for weighted recall: pure functions from candidates to scores, no I/O, no clock.

- "design" (the default): the design's formula, `score * importance / (1 + age_days * decay_factor)`.
- "generative-agents-paper": Generative Agents' retrieval as its paper states it: recency, importance and
  relevance, each min-max normalised over the candidates, summed with weights 1/1/1; recency is
  `0.995 ** hours` since the memory happened (game hours, `day * 24 + hour`).
- "generative-agents-code": as its released code weights it: 0.5 recency, 3 relevance, 2 importance, decay
  0.99 per game hour since the memory was last recalled (or since it happened, when never recalled).

The released code decays by the rank of last access, not by hours (`0.99 ** i` over the candidates sorted by
last access); hours are kept here so a memory recalled a week ago and one recalled an hour ago stay apart by
more than one step. Relevance is the recall mode's score; importance the memory's (0-1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from memory_sim.errors import InvalidInput
from memory_sim.memory.models import Recollection
from memory_sim.memory.rules import HOURS_PER_DAY
from memory_sim.memory.scoring import generative_agents_scores, weighted_score

Scoring = Literal["design", "generative-agents-paper", "generative-agents-code"]
SCORINGS: tuple[str, ...] = get_args(Scoring)
DEFAULT_SCORING: Scoring = "design"

PAPER_DECAY = 0.995
PAPER_WEIGHTS = (1.0, 1.0, 1.0)  # recency, relevance, importance
CODE_DECAY = 0.99
CODE_WEIGHTS = (0.5, 3.0, 2.0)  # recency, relevance, importance


@dataclass(frozen=True, slots=True)
class Moment:
    """When a memory happened (`hours`: game hours since day 0) and when weighted recall last returned it
    (`recalled`: game hours, None when never)."""

    hours: int
    recalled: int | None = None


def check_scoring(value: object) -> Scoring:
    if value not in SCORINGS:
        shown = repr(value) if isinstance(value, str) else type(value).__name__
        raise InvalidInput(f"scoring must be one of {', '.join(SCORINGS)}, got {shown}")
    return value  # type: ignore[return-value]


def needs_moments(scoring: Scoring) -> bool:
    """Whether the preset reads hours and last access (from D1); the design's formula needs neither."""
    return scoring != "design"


def design_scores(recollections: Sequence[Recollection], current_day: int) -> list[float]:
    return [weighted_score(r.score, r.importance, current_day, r.day, r.decay_factor) for r in recollections]


def paper_scores(
    recollections: Sequence[Recollection], now_hours: int, moments: Mapping[str, Moment]
) -> list[float]:
    hours = {r.id: _happened(r, moments) for r in recollections}
    return generative_agents_scores(recollections, now_hours, hours, PAPER_DECAY, PAPER_WEIGHTS)


def code_scores(
    recollections: Sequence[Recollection], now_hours: int, moments: Mapping[str, Moment]
) -> list[float]:
    hours = {r.id: _last_access(r, moments) for r in recollections}
    return generative_agents_scores(recollections, now_hours, hours, CODE_DECAY, CODE_WEIGHTS)


def preset_scores(
    scoring: Scoring,
    recollections: Sequence[Recollection],
    current_day: int,
    now_hours: int,
    moments: Mapping[str, Moment] | None = None,
) -> list[float]:
    """Each candidate's score under the preset, in the candidates' order (higher is better)."""
    if scoring == "design":
        return design_scores(recollections, current_day)
    if scoring == "generative-agents-paper":
        return paper_scores(recollections, now_hours, moments or {})
    return code_scores(recollections, now_hours, moments or {})


def _happened(r: Recollection, moments: Mapping[str, Moment]) -> int:
    moment = moments.get(r.id)
    return moment.hours if moment is not None else r.day * HOURS_PER_DAY  # hour unknown: the day's start


def _last_access(r: Recollection, moments: Mapping[str, Moment]) -> int:
    moment = moments.get(r.id)
    if moment is None or moment.recalled is None:
        return _happened(r, moments)
    return max(moment.recalled, moment.hours)
