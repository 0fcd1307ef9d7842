"""One NPC's failure holds back only that NPC.

A job step runs on every NPC's items at once (one D1 batch, one embedding call: the common, fast path). When that
fails for a reason other than an outage, it runs once per NPC, so a row that can never be written (a legacy id
too long for Vectorize, a text a provider refuses, a summariser that chokes on one diary) fails alone, and the
job reports it instead of stopping for everyone. Outages (`EmbeddingUnavailable`, `VectorizeUnavailable`) are
raised: every NPC would fail the same way, and the callers already postpone all of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from memory_sim.errors import EmbeddingUnavailable, VectorizeUnavailable

log = logging.getLogger(__name__)

OUTAGES = (EmbeddingUnavailable, VectorizeUnavailable)
T = TypeVar("T")


@dataclass
class Outcome(Generic[T]):
    done: list[T] = field(default_factory=list)
    held_back: list[T] = field(default_factory=list)  # the items of the NPCs that failed
    failed: dict[str, str] = field(default_factory=dict)  # NPC id -> why its items failed


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def by_npc(items: Sequence[T], npc_of: Callable[[T], str]) -> dict[str, list[T]]:
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(npc_of(item), []).append(item)
    return groups


def note_failure(job: str, npc_id: str, error: BaseException, failed: dict[str, str]) -> None:
    log.warning("%s: NPC %r failed and was skipped (the others went on): %s", job, npc_id, describe(error))
    failed[npc_id] = describe(error)


def each_npc(
    job: str, items: Sequence[T], npc_of: Callable[[T], str], action: Callable[[Sequence[T]], None]
) -> Outcome[T]:
    """`action(items)`; if it fails (not an outage), `action` once per NPC's items. Returns what was done and,
    per NPC, why the rest failed. An outage met while going NPC by NPC fails the NPCs not yet done."""
    if not items:
        return Outcome()
    try:
        action(items)
        return Outcome(list(items))
    except OUTAGES:
        raise
    except Exception as exc:  # noqa: BLE001 - a job's boundary: any one NPC's failure is reported, not raised
        first = exc
    groups = by_npc(items, npc_of)
    outcome: Outcome[T] = Outcome()
    if len(groups) == 1:
        note_failure(job, next(iter(groups)), first, outcome.failed)
        outcome.held_back = list(items)
        return outcome
    outage: BaseException | None = None
    for npc_id, group in groups.items():
        if outage is not None:
            outcome.failed[npc_id] = describe(outage)
            outcome.held_back.extend(group)
            continue
        try:
            action(group)
            outcome.done.extend(group)
            continue
        except OUTAGES as exc:
            outage = exc
            outcome.failed[npc_id] = describe(exc)
        except Exception as exc:  # noqa: BLE001
            note_failure(job, npc_id, exc, outcome.failed)
        outcome.held_back.extend(group)
    return outcome
