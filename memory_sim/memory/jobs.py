"""The periodic jobs: consolidate, decay and prune, retry pending embeddings.

Each reads D1, makes a plan with pure functions (scoring.py, summarise.py), then applies it. All are
idempotent for a given `now` (seconds of world time): a second run in the same period finds nothing to do,
which is what lets the schedulers re-run them safely after a restart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_sim.errors import AiError, EmbeddingUnavailable, VectorizeError
from memory_sim.memory import indexing, store
from memory_sim.memory.models import JobReport, ShortTermMemory, WorldTime
from memory_sim.memory.scoring import plan_cap_prune, plan_decay, retry_delay_s
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
        id=f"summary-{npc_id[:40]}-{day}",
        kind="summary",
    )


def consolidate(system: "MemorySystem", now: float) -> JobReport:
    """Condenses each diary at least `consolidate_after_days` old into 1-2 sentences, indexed once."""
    db, config = system.env.DB, system.config
    up_to = WorldTime.from_seconds(now).day - config.consolidate_after_days
    summaries: list[ShortTermMemory] = []
    for row in store.diaries_to_consolidate(db, up_to):
        npc_id, day = row["npc_id"], int(row["day"])
        importance_of = {m.content: m.importance for m in store.memories_of(db, npc_id, day)}
        sentences = diary_sentences(row["text"], importance_of)
        try:
            text = system.summariser.summarise(sentences, config.summary_sentences)
        except AiError:
            continue  # an LLM summariser that fails is retried at the next run: the diary stays unconsolidated
        if text:
            summaries.append(summary_memory(npc_id, day, text, [i for _, i in sentences]))
    if not summaries:
        return JobReport("consolidate")
    system.remember_many(summaries, index_all=True)
    marks = [store.mark_consolidated(db, m.npc_id, m.day, m.id) for m in summaries]
    db.batch(marks + [store.bump(db, "consolidations", len(summaries))])
    return JobReport("consolidate", consolidated=len(summaries), details=[m.id for m in summaries])


def decay_and_prune(system: "MemorySystem", now: float) -> JobReport:
    """Grows decay factors to today; re-embeds important memories past the threshold, drops the rest from
    the index (they stay in D1); then prunes harder if the index is over its cap."""
    db, config = system.env.DB, system.config
    today = WorldTime.from_seconds(now).day
    plan = plan_decay(store.all_memories(db), today, config)
    db.batch(store.set_decay(db, plan.factors, today) + [store.bump(db, "decay_runs")])
    reembedded = _reembed(system, plan.reembed, now)
    system.unindex(plan.unindex, counter="prunes")
    indexed = store.memories_in_state(db, ["indexed"])
    over_cap = plan_cap_prune(indexed, today, 0, config) if len(indexed) > config.index_cap else []
    system.unindex(over_cap, counter="cap_prunes")
    return JobReport(
        "decay_and_prune",
        decayed=len(plan.factors),
        reembedded=reembedded,
        unindexed=len(plan.unindex) + len(over_cap),
    )


def _reembed(system: "MemorySystem", ids: list[str], now: float) -> int:
    if not ids:
        return 0
    db = system.env.DB
    rows = list(store.memories_by_ids(db, ids).values())
    try:
        indexing.embed_and_upsert(system.env, rows)
    except (EmbeddingUnavailable, VectorizeError):
        # The old vector stays searchable; the factor was already reset, so the next run does not retry it.
        return 0
    db.batch(store.set_state(db, [r.id for r in rows], "indexed", now) + [store.bump(db, "reembeds", len(rows))])
    return len(rows)


def retry_pending(system: "MemorySystem", now: float) -> JobReport:
    """Embeds what failed before, once its backoff has passed; failures back off further."""
    db, config = system.env.DB, system.config
    due = store.due_outbox(db, now, config.retry_max_attempts)
    if not due:
        return JobReport("retry_pending")
    rows = list(store.memories_by_ids(db, [r["memory_id"] for r in due]).values())
    system.make_room(len(rows))
    try:
        indexing.embed_and_upsert(system.env, rows)
    except (EmbeddingUnavailable, VectorizeError) as exc:
        statements = [
            store.reschedule(
                db, r["memory_id"], int(r["attempts"]) + 1, now + retry_delay_s(int(r["attempts"]) + 1, config), str(exc)
            )
            for r in due
        ]
        db.batch(statements + [store.bump(db, "embedding_failures", len(due))])
        return JobReport("retry_pending", failed=len(due))
    done = [r.id for r in rows]
    db.batch(
        store.set_state(db, done, "indexed", now)
        + store.dequeue(db, [r["memory_id"] for r in due])
        + [store.bump(db, "retries", len(done))]
    )
    return JobReport("retry_pending", embedded=len(done))
