"""Correcting a memory's text (`MemorySystem.update_memory`).

One D1 batch writes the new text, queues the memory for the index again when it is there (its vector is
embedded anew; until then recall shows D1's text), rewrites the diaries that quote it, and hides the summaries made
from it (rederive.py): they are made again from their sources, this one as it reads now, exactly as after a forget.
A summary itself is not corrected: the next change to one of its sources would make it again and drop the
correction, so it is refused, and the sources are what to correct.
"""

from __future__ import annotations

from dataclasses import replace

from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import InvalidInput
from memory_sim.memory import rules
from memory_sim.memory.ledger import store
from memory_sim.memory.writing import rederive
from memory_sim.memory.writing.forgetting import one


def correct(env: WorkerEnv, memory_id: str, content: str, now: float) -> list[str]:
    """Writes the new text; returns the ids of the summaries hidden to be made again (and of any forgotten)."""
    text = rules.text("content", content).strip()
    if not text:
        raise InvalidInput("content must not be blank")
    memory = one(env, memory_id)
    if memory.index_state in store.FORGOTTEN_STATES:
        raise InvalidInput(f"memory {memory_id!r} is forgotten")
    if memory.kind == "summary":  # it is made again from its sources whenever one changes: a correction would go
        raise InvalidInput(f"memory {memory_id!r} is a consolidation summary, made from its sources (see "
                           "`lineage`); correct or forget those, and the summary is made again from them")
    if text == memory.content:
        return []
    db = env.DB
    reach = rederive.plan(db, [], [(memory, text)])
    statements = [store.rewrite_memory(db, replace(memory, content=text)), store.bump_revision(db)]
    if memory.index_state in ("indexed", "pending"):
        statements += store.set_state(db, [memory_id], "pending") + store.enqueue_many(db, [memory_id], now)
    db.batch(statements + reach.statements(db, now))
    return reach.hidden()
