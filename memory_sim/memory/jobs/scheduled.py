"""The periodic jobs: consolidate, decay and prune, retry pending embeddings.

Each reads D1, makes a plan with pure functions (scoring.py, condense.py), then applies it. All are
idempotent for a given `now` (seconds of world time): a second run in the same period finds nothing to do,
which is what lets the schedulers re-run them safely after a restart. One NPC's failure holds back only that
NPC (isolation.py): the report counts it (`failed`) and says why (`errors`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_sim.errors import AiError, VectorizeError
from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.consolidation.condense import DayPlan, Topics, plan_day
from memory_sim.memory.consolidation.summarise import Sentence
from memory_sim.memory.consolidation.topics import Names, group_by_topic
from memory_sim.memory.index_rule import reaches_index
from memory_sim.memory.jobs.host import MemoryHost
from memory_sim.memory.jobs.staged_reembed import fetch
from memory_sim.memory.ledger import store
from memory_sim.memory.models import JobReport, StoredMemory, WorldTime
from memory_sim.memory.scoring import plan_cap_prune, plan_decay
from memory_sim.memory.writing import indexer
from memory_sim.memory.writing.isolation import by_npc, each_npc, note_failure


def _topics(system: MemoryHost, names: Names) -> Topics:
    """Groups a day's memories by topic with the NPC registry's names and, for those already indexed, the vectors
    the index holds (read back, never embedded again: no model call, and a run killed here has queued nothing).
    Memories without a vector, or all of them when the index cannot answer, are compared by their words
    (consolidation/topics.py)."""

    def topics(memories: Sequence[StoredMemory]) -> list[tuple[StoredMemory, ...]]:
        indexed = [m.id for m in memories if m.index_state == "indexed"]
        vectors: dict[str, np.ndarray] = {}
        if len(indexed) > 1:
            try:
                vectors = {v.id: np.asarray(v.values, dtype=np.float32) for v in fetch(system.env.VECTORIZE, indexed)}
            except VectorizeError:
                vectors = {}
        return group_by_topic(memories, names, vectors)

    return topics


def names_of(system: MemoryHost) -> Names:
    """The registered NPCs' names, aliases and roles, as memories name them."""
    profiles = store.npc_profiles(system.env.DB)
    return Names.of([(str(p["npc_id"]), [str(p.get("name") or ""), *str(p.get("aliases") or "").split(","),
                                          str(p.get("role") or "")]) for p in profiles])


def _plans_of(
    system: MemoryHost, npc_id: str, diaries: list[dict[str, Any]], read: list[StoredMemory] | None,
    names: Names,
) -> list[DayPlan]:
    """The NPC's day plans from its memories of those days (`read`: already read with every NPC's)."""
    db, config = system.env.DB, system.config

    def summarise(sentences: list[Sentence]) -> str:
        return system.summariser.summarise(sentences, config.summary_sentences)

    days = [int(row["day"]) for row in diaries]
    found = store.memories_of_days(db, npc_id, days) if read is None else read
    memories = by_npc(found, lambda m: str(m.day))
    topics = _topics(system, names)
    plans = []
    for day in days:
        try:
            plans.append(plan_day(npc_id, day, memories.get(str(day), []), summarise, topics))
        except AiError:
            continue  # a summariser that fails (with no fallback) is retried at the next run: the diary waits
    return plans


def _save_plans(system: MemoryHost, plans: Sequence[DayPlan], now: float, wait: bool) -> None:
    """The summaries (the index rule admits every summary), then in one batch their lineage and the diaries'
    links. A linked memory (a day of one memory) is indexed only as the rule says (memory/index_rule.py: by its
    own importance, never because its day had nothing else), so `to_index` holds one only where the rule admits
    a memory that is not in the index yet (its importance raised since); behind, with the summaries, unless
    `wait`."""
    db = system.env.DB
    summaries = [made.summary for p in plans for made in p.made]
    system.remember_many(summaries, wait=False)  # embedded behind the rest of the job and the hour
    linked = store.memories_by_ids(db, [p.link for p in plans if p.summary is None and p.link])
    threshold = system.config.index_threshold
    to_index = sorted(i for i, m in linked.items() if m.index_state == "none" and reaches_index(m, threshold))
    lineage = store.put_sources(db, [(made.summary.id, s) for p in plans for made in p.made for s in made.sources])
    marks = store.mark_consolidated(db, [(p.npc_id, p.day, p.link) for p in plans])
    queued = store.set_state(db, to_index, "pending") + store.enqueue_many(db, to_index, now) if to_index else []
    db.batch(lineage + marks + queued + [store.bump(db, "consolidations", len(summaries))])
    if to_index:
        system.index_memories(to_index, wait=wait)  # a failure leaves them in the outbox for retry_pending


def _read_days(system: MemoryHost, diaries: dict[str, list[dict[str, Any]]]) -> dict[str, list[StoredMemory]] | None:
    """Every NPC's memories of its diaries' days, one read per day; None when that fails (each NPC then reads
    its own, so one NPC's failure stays its own)."""
    by_day: dict[int, list[str]] = {}
    for npc_id, rows in diaries.items():
        for row in rows:
            by_day.setdefault(int(row["day"]), []).append(npc_id)
    found: dict[str, list[StoredMemory]] = {}
    try:
        for day, npc_ids in sorted(by_day.items()):
            for npc_id, memories in store.memories_of_day(system.env.DB, npc_ids, day).items():
                found.setdefault(npc_id, []).extend(memories)
    except Exception:  # noqa: BLE001 - read again NPC by NPC, where a failure is that NPC's alone
        return None
    return found


def consolidate_up_to(now: float, config: MemoryConfig) -> int:
    """The last diary day a consolidation at `now` condenses (days at least `consolidate_after_days` old)."""
    return WorldTime.from_seconds(now).day - config.consolidate_after_days


def consolidate(system: MemoryHost, now: float, wait: bool = True) -> JobReport:
    """`consolidate_all`'s report."""
    return consolidate_all(system, now, wait)[0]


def consolidate_all(system: MemoryHost, now: float, wait: bool = True) -> tuple[JobReport, bool]:
    """Condenses each diary's day at least `consolidate_after_days` old into one summary a topic, each 1-2 of its
    memories' sentences, indexed once with its lineage; a day of one memory is linked to it
    (consolidation/condense.py, topics.py). An NPC whose
    days cannot be condensed or saved is reported in `errors` and the others are consolidated. Also says whether
    every diary day up to `consolidate_up_to` is consolidated now (none held back by a failure)."""
    up_to = consolidate_up_to(now, system.config)
    diaries = by_npc(store.diaries_to_consolidate(system.env.DB, up_to), lambda row: str(row["npc_id"]))
    failed: dict[str, str] = {}
    plans: list[DayPlan] = []
    read = _read_days(system, diaries)
    names = names_of(system) if diaries else Names({})
    for npc_id, rows in diaries.items():
        try:
            plans += _plans_of(system, npc_id, rows, None if read is None else read.get(npc_id, []), names)
        except Exception as exc:  # noqa: BLE001 - one NPC's diaries never stop the others'
            note_failure("consolidate", npc_id, exc, failed)
    outcome = each_npc("consolidate", plans, lambda p: p.npc_id, lambda group: _save_plans(system, group, now, wait))
    failed.update(outcome.failed)
    made = [made.summary.id for p in outcome.done for made in p.made]
    report = JobReport(
        "consolidate",
        consolidated=len(made),
        linked=sum(1 for p in outcome.done if p.summary is None and p.link),
        failed=sum(len(diaries[npc_id]) for npc_id in failed),
        details=made,
        errors=failed,
    )
    return report, len(outcome.done) == sum(len(rows) for rows in diaries.values())


def decay_and_prune(system: MemoryHost, now: float) -> JobReport:
    """Grows decay factors to today; re-embeds important memories past the threshold, drops the rest from
    the index (they stay in D1); then prunes harder if the index is over its cap."""
    db, config = system.env.DB, system.config
    today = WorldTime.from_seconds(now).day
    rows, indexed = store.decaying(db, today)
    plan = plan_decay(rows, today, config)
    db.batch(store.set_decay(db, plan.factors, today) + [store.bump(db, "decay_runs")])
    reembedded = indexer.index(system.env, config, plan.reembed, now, job="decay_and_prune", counter="reembeds")
    dropped = system.unindex(plan.unindex, counter="prunes")
    over_cap: list[str] = []  # counted, then read, only when the count before the pass allows it to be over
    # re-embedding writes rows already indexed (and may drop some for room): the count can only have fallen
    may_be_over = indexed is None or indexed - dropped > config.index_cap
    if may_be_over and store.count_memories(db, "index_state = 'indexed'") > config.index_cap:
        over_cap = plan_cap_prune(store.memories_in_state(db, ["indexed"]), today, 0, config)
    system.unindex(over_cap, counter="cap_prunes")
    return JobReport(
        "decay_and_prune",
        decayed=len(plan.factors),
        reembedded=len(reembedded.indexed),
        unindexed=len(plan.unindex) + len(over_cap),
        failed=len(reembedded.postponed),
        errors=reembedded.errors,
    )


def retry_pending(system: MemoryHost, now: float) -> tuple[JobReport, bool]:
    """Indexes what failed before, once its backoff has passed (and what a dead process left unattempted);
    failures back off further (an NPC whose rows cannot be indexed backs off alone). Also says whether the
    outbox is empty now (nothing left to retry, due or not)."""
    waiting = store.live_outbox(system.env.DB, system.config.retry_max_attempts)
    due = [r for r in waiting if r["next_attempt_at"] <= now or int(r["attempts"]) == 0]
    if not due:
        return JobReport("retry_pending"), not waiting
    ids = [r["memory_id"] for r in due]
    done = indexer.index(system.env, system.config, ids, now, job="retry_pending", counter="retries")
    report = JobReport("retry_pending", embedded=len(done.indexed), failed=len(done.postponed), errors=done.errors)
    return report, len(due) == len(waiting) and not done.postponed
