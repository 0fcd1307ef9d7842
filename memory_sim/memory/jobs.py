"""The periodic jobs: consolidate, decay and prune, retry pending embeddings.

Each reads D1, makes a plan with pure functions (scoring.py, summarise.py), then applies it. All are
idempotent for a given `now` (seconds of world time): a second run in the same period finds nothing to do,
which is what lets the schedulers re-run them safely after a restart. One NPC's failure holds back only that
NPC (isolation.py): the report counts it (`failed`) and says why (`errors`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memory_sim.errors import AiError
from memory_sim.memory import indexer, store
from memory_sim.memory.isolation import by_npc, each_npc, note_failure
from memory_sim.memory.models import JobReport, ShortTermMemory, WorldTime, summary_id
from memory_sim.memory.scoring import plan_cap_prune, plan_decay
from memory_sim.memory.summarise import Sentence, split_sentences

if TYPE_CHECKING:
    from memory_sim.memory.system import MemorySystem

_ECHO_IMPORTANCE = 0.3  # a diary's "it brought back..." line matters less than the day itself


def diary_sentences(text: str, importance_of: dict[str, float]) -> list[Sentence]:
    """The diary's sentences with the importance of the memory each came from."""
    return [(s, importance_of.get(s, _ECHO_IMPORTANCE)) for s in split_sentences(text)]


def summary_memory(npc_id: str, day: int, text: str, importances: list[float]) -> ShortTermMemory:
    top = sorted(importances, reverse=True)[:3] or [0.5]
    return ShortTermMemory(
        npc_id=npc_id,
        content=text,
        importance=round(sum(top) / len(top), 4),
        world_time=WorldTime(day, 23),
        type="event",
        id=summary_id(npc_id, day),
        kind="summary",
    )


def _summaries_of(system: MemorySystem, npc_id: str, diaries: list[dict[str, Any]]) -> list[ShortTermMemory]:
    db, config = system.env.DB, system.config
    out = []
    for row in diaries:
        day = int(row["day"])
        importance_of = {m.content: m.importance for m in store.memories_of(db, npc_id, day)}
        sentences = diary_sentences(row["text"], importance_of)
        try:
            text = system.summariser.summarise(sentences, config.summary_sentences)
        except AiError:
            continue  # an LLM summariser that fails is retried at the next run: the diary stays unconsolidated
        if text:
            out.append(summary_memory(npc_id, day, text, [i for _, i in sentences]))
    return out


def _save_summaries(system: MemorySystem, summaries: Sequence[ShortTermMemory]) -> None:
    db = system.env.DB
    system.remember_many(summaries, index_all=True)
    marks = [store.mark_consolidated(db, m.npc_id, m.day, m.id) for m in summaries]
    db.batch(marks + [store.bump(db, "consolidations", len(summaries))])


def consolidate(system: MemorySystem, now: float) -> JobReport:
    """Condenses each diary at least `consolidate_after_days` old into 1-2 sentences, indexed once. An NPC whose
    diaries cannot be condensed or saved is reported in `errors` and the others are consolidated."""
    up_to = WorldTime.from_seconds(now).day - system.config.consolidate_after_days
    diaries = by_npc(store.diaries_to_consolidate(system.env.DB, up_to), lambda row: str(row["npc_id"]))
    failed: dict[str, str] = {}
    summaries: list[ShortTermMemory] = []
    for npc_id, rows in diaries.items():
        try:
            summaries += _summaries_of(system, npc_id, rows)
        except Exception as exc:  # noqa: BLE001 - one NPC's diaries never stop the others'
            note_failure("consolidate", npc_id, exc, failed)
    outcome = each_npc("consolidate", summaries, lambda m: m.npc_id, lambda group: _save_summaries(system, group))
    failed.update(outcome.failed)
    return JobReport(
        "consolidate",
        consolidated=len(outcome.done),
        failed=sum(len(diaries[npc_id]) for npc_id in failed),
        details=[m.id for m in outcome.done],
        errors=failed,
    )


def decay_and_prune(system: MemorySystem, now: float) -> JobReport:
    """Grows decay factors to today; re-embeds important memories past the threshold, drops the rest from
    the index (they stay in D1); then prunes harder if the index is over its cap."""
    db, config = system.env.DB, system.config
    today = WorldTime.from_seconds(now).day
    plan = plan_decay(store.all_memories(db), today, config)
    db.batch(store.set_decay(db, plan.factors, today) + [store.bump(db, "decay_runs")])
    reembedded = indexer.index(system.env, config, plan.reembed, now, job="decay_and_prune", counter="reembeds")
    system.unindex(plan.unindex, counter="prunes")
    indexed = store.memories_in_state(db, ["indexed"])
    over_cap = plan_cap_prune(indexed, today, 0, config) if len(indexed) > config.index_cap else []
    system.unindex(over_cap, counter="cap_prunes")
    return JobReport(
        "decay_and_prune",
        decayed=len(plan.factors),
        reembedded=len(reembedded.indexed),
        unindexed=len(plan.unindex) + len(over_cap),
        failed=len(reembedded.postponed),
        errors=reembedded.errors,
    )


def retry_pending(system: MemorySystem, now: float) -> JobReport:
    """Indexes what failed before, once its backoff has passed (and what a dead process left unattempted);
    failures back off further (an NPC whose rows cannot be indexed backs off alone)."""
    due = store.due_outbox(system.env.DB, now, system.config.retry_max_attempts)
    if not due:
        return JobReport("retry_pending")
    ids = [r["memory_id"] for r in due]
    report = indexer.index(system.env, system.config, ids, now, job="retry_pending", counter="retries")
    return JobReport("retry_pending", embedded=len(report.indexed), failed=len(report.postponed), errors=report.errors)
