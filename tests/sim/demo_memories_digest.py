"""The demo village's memories, column by column, as a digest two versions of the code can be compared by:
`python tests/sim/demo_memories_digest.py OUT.json` writes it for the code on PYTHONPATH (8 NPCs, seed 7, 6 days:
decay passes, consolidations and background indexing all happen; the hashing embedder). The file in
tests/sim/data was written by main at 4d11a42, before the memory system's statements became set-based: the
same memories (ids, texts, importance, decay factors and days, index states and times, keys, remember order)
and counters after it say that change left the demo's memories as they were."""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

from memory_sim.env import Env
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from memory_sim.sim.driver import run_village
from memory_sim.sim.world import Village

NPCS, DAYS, SEED = 8, 6, 7
COLUMNS = ("id", "npc_id", "content", "importance", "day", "hour", "type", "about", "kind", "decay_factor",
           "decayed_day", "index_state", "indexed_at", "state_key", "key_confidence", "key_source", "seq",
           "recalled_hour")


def demo_memories(env: Env) -> dict[str, Any]:
    clock = SimClock()
    system = MemorySystem(env, clock=clock)
    run_village(system, Village(NPCS, SEED), clock, DAYS)
    rows = env.DB.prepare(f"SELECT {', '.join(COLUMNS)} FROM short_term_memories ORDER BY id").all().results
    out: dict[str, Any] = {"rows": len(rows)}
    for column in COLUMNS:
        values = json.dumps([r[column] for r in rows])  # floats as their shortest repr: equal means identical
        out[column] = hashlib.sha256(values.encode()).hexdigest()[:16]
    out["counters"] = {r["name"]: r["value"] for r in
                       env.DB.prepare("SELECT name, value FROM counters ORDER BY name").all().results}
    return out


if __name__ == "__main__":
    with Env.in_memory(clock=SimClock()) as env:
        found = demo_memories(env)
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(found, f, indent=1, sort_keys=True)
        f.write("\n")
