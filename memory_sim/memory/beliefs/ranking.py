"""The newest state of a belief ranks above the stale one (pure, no I/O).

Given a ranking and which memory supersedes which (detect.py), each stale memory keeps its place in the history
but its correction goes first: the newest memory of the chain takes the stale one's place, then the one it
corrected, and so on back to the stale one. A correction answers the same question as what it corrects, so its
score is lifted to the stale one's where lower; the ranking stays highest score first. Nothing else moves.

Recall returns the first `window` (its top k): a correction ranked below them trades places with the stale one
it corrects, rather than pushing out a memory that answers the question; the stale one then heads the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from memory_sim.memory.models import Recollection

Score = Callable[[Recollection], float]
Lift = Callable[[Recollection, float], Recollection]


def by_score(r: Recollection) -> float:
    return r.score


def lift_score(r: Recollection, floor: float) -> Recollection:
    return r if r.score >= floor else replace(r, score=floor)


def by_effective_score(r: Recollection) -> float:
    return r.effective_score or 0.0


def lift_effective_score(r: Recollection, floor: float) -> Recollection:
    return r if by_effective_score(r) >= floor else replace(r, effective_score=floor)


def newest_first(
    ranked: Sequence[Recollection], superseded_by: Mapping[str, str], score: Score = by_score,
    lift: Lift = lift_score, window: int | None = None,
) -> list[Recollection]:
    """`ranked` (best first) with each stale memory's corrections among them placed just before it, newest first,
    and every recollection that a later memory supersedes marked with that memory's id (`superseded_by`), whether
    or not the correction is in the ranking. With a `window`, a stale memory in the first `window` whose newest
    correction ranks below them trades places with it."""
    if window is None or window >= len(ranked):
        return _inserted(ranked, superseded_by, score, lift)
    top, rest = list(ranked[:window]), list(ranked[window:])
    for i, stale in enumerate(list(top)):
        newest = _newest(stale.id, superseded_by, {r.id for r in ranked})
        below = next((r for r in rest if r.id == newest), None)
        if below is not None:
            top[i] = lift(below, score(stale))
            rest.remove(below)
            rest.insert(0, stale)
    return _inserted(top, superseded_by, score, lift) + [_marked(r, superseded_by) for r in rest]


def _newest(memory_id: str, superseded_by: Mapping[str, str], present: set[str]) -> str | None:
    """The last correction of `memory_id`'s chain present in the ranking (None when none is)."""
    seen, newest, at = {memory_id}, None, memory_id
    while (later := superseded_by.get(at)) is not None and later not in seen:
        seen.add(later)
        newest = later if later in present else newest
        at = later
    return newest


def _inserted(
    ranked: Sequence[Recollection], superseded_by: Mapping[str, str], score: Score, lift: Lift
) -> list[Recollection]:
    by_id = {r.id: r for r in ranked}
    out: list[Recollection] = []
    placed: set[str] = set()
    for r in ranked:
        if r.id in placed:
            continue
        chain = [r]  # r, what corrects it, what corrects that...
        while (later := superseded_by.get(chain[-1].id)) in by_id and later not in placed and later not in {
                c.id for c in chain}:
            chain.append(by_id[later])
        floor = score(r)
        for item in reversed(chain):
            out.append(_marked(lift(item, floor), superseded_by))
            placed.add(item.id)
    return out


def _marked(r: Recollection, superseded_by: Mapping[str, str]) -> Recollection:
    later = superseded_by.get(r.id)
    return r if later is None or r.superseded_by == later else replace(r, superseded_by=later)
