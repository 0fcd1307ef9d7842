"""What a seeded village leaves behind, in a form two versions of the code can be compared by: a digest of each
D1 table's rows and the recall answers of three NPCs. `python tests/sim/village_digest.py OUT.json` writes it for
the code on PYTHONPATH (tests/sim/data/village_6x5.json was written so by the code before D1 writes were
batched, and written again when a query naming an NPC's role began to reach memories naming the NPC: that changed
the diaries' "brought back" lines and the answers to "the baker"; without it the digest was unchanged; and again
when weighted recall began to record each memory's last access, `recalled_hour`: only schema_version and
short_term_memories changed, every answer stayed the same; and again when recall began to rank a correction
above the belief it corrects: Margaret's "the baker" (vector) answer put day 4's "It galls me how the blacksmith
struts about..." above day 3's "The man at the forge did me a real kindness...", which it supersedes (her opinion
of Tom turned cold), at the stale one's score: the same five memories, every table unchanged; and again when
consolidation began to group a day's memories by topic, one summary a topic (summaries, lineage, diaries' links
and the counters changed, and the answers with them: a summary now says one thing, so the vector answers hold
topic summaries where a day's glued summary was), and recall stopped expanding a query with the recalling NPC's
own name and role (its memories say "I"), which changed Tom's answers to "What do I think of Tom?"); and again
when memories gained state keys (schema 8: schema_version and short_term_memories' new columns changed, every
other table stayed the same) and recall began to rank a key's current memory first by one score: Margaret's
weighted top answer, shown at weighted 0.77079 over score 0.76442 before (above score x importance), now shows the
score that gives it (1.05587), the older versions of her opinion after it; one of Tom's vector answers changed); and again
when consolidation's link to a day of one memory stopped indexing it below the index rule's threshold
(memory/index_rule.py): 3 fewer vectors, those memories' index state, the diaries' "brought back" lines (they
recall from the index) and the counters changed; every answer stayed the same); and again when the village began
to move opinions through events with inertia (sim/opinions.py): a new village, every table and answer changed);
and again when the state branch's keys (schema 8), inferred keys and time reading met on one main: the same 211
memories, short_term_memories' key columns, the diaries' "brought back" lines and some answers' order (a key's
current memory first) changed; and again when the village began to say what state its memories set (schema 9,
`state_value`: its opinions set `opinion:<other>` warm or cold, its chats and events between two NPCs no state):
schema_version, short_term_memories' key columns and the answers changed (a chat or an event is no longer a
version of an opinion, so recall hands no opinion's place to it); every other table stayed the same; and again
when the remember counter became the highest `seq` (schema 10): only schema_version and sequences changed (its
`memories` row no longer moves), every memory and answer stayed the same."""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

from memory_sim.env import Env
from memory_sim.memory.ledger import store
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from memory_sim.sim.driver import run_village
from memory_sim.sim.world import Village

NPCS, DAYS, SEED = 6, 5, 7
# job_runs records when each job last ran: the sim scheduler no longer records an hourly retry that had nothing
# to do, so only that bookkeeping row may differ
SKIPPED = ("job_runs",)


def run(env: Env, npcs: int = NPCS, days: int = DAYS) -> MemorySystem:
    clock = SimClock()
    system = MemorySystem(env, clock=clock)
    run_village(system, Village(npcs, SEED), clock, days)
    return system


def digest(env: Env, system: MemorySystem) -> dict[str, Any]:
    db = env.DB
    tables = sorted(r["name"] for r in db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().results)
    out: dict[str, Any] = {}
    for table in tables:
        if table in SKIPPED:
            continue
        rows = sorted(json.dumps(r, sort_keys=True) for r in db.prepare(f'SELECT * FROM "{table}"').all().results)
        out[table] = f"{len(rows)} rows, sha256 {hashlib.sha256(chr(10).join(rows).encode()).hexdigest()[:16]}"
    answers: dict[str, Any] = {}
    for npc in ("margaret", "tom", "rose"):
        if not store.has_memories(db, npc) and store.npc_profile(db, npc) is None:  # not in a 6-NPC village:
            answers[npc], answers[f"{npc} (vector)"] = [], []  # recall refuses it now; the digest says [] as before
            continue
        weighted = system.weighted_recall(npc, "What do I think of Tom?", system.today(), top_k=5)
        answers[npc] = [[r.id, round(r.score, 5), round(r.effective_score or 0.0, 5)] for r in weighted]
        vector = system.recall(npc, "the baker", top_k=5, mode="vector")
        answers[f"{npc} (vector)"] = [[r.id, round(r.score, 5)] for r in vector]
    out["answers"] = answers
    out["vectors"] = system.stats()["vectors"]
    return out


if __name__ == "__main__":
    with Env.in_memory(clock=SimClock()) as env:
        found = digest(env, run(env))
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(found, f, indent=1, sort_keys=True)
        f.write("\n")
