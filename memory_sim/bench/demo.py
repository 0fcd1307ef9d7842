"""The default demo's wall time against its floor: `memory-sim demo` (8 NPCs, 14 days) run as a user runs it, in
a fresh process, with `--timings` saying where its time went.

The floor is the model's own work (tokenise, forward, pool: what no change outside the model can remove);
everything else (starting Python, imports, loading the model, D1, the index, the jobs) is measured against it.
Two parts of the rest are named: the start (the process started, imported, the data folder's D1 and index
open, up to the village's first hour) and the wall time during which a D1 call was in progress, from either
thread (the background indexer's D1 writes may overlap the model's forward).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]


def demo_breakdown(days: int = 14, npcs: int = 8, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """One demo run in a fresh process; its wall time split into the floor (model forward) and the rest."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [*CLI, *extra, "--data", str(Path(tmp) / "demo"), "demo", "--days", str(days), "--npcs", str(npcs),
                   "--timings"]
        started, cpu = time.perf_counter(), _children_cpu()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wall, cpu_s = time.perf_counter() - started, _children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"the demo failed: {done.stderr.strip().splitlines()[-1:]}")
    line = next(line for line in done.stderr.splitlines() if line.startswith("timings "))
    timings = json.loads(line.removeprefix("timings "))
    floor = timings["model_forward_s"]
    memories = max(int(timings["memories"]), 1)
    return {
        "npcs": npcs, "days": days, "wall_s": round(wall, 2), "cpu_s": round(cpu_s, 2),
        "model_load_s": timings["model_load_s"], "floor_model_forward_s": floor,
        "rest_s": round(wall - floor, 2), "rest_over_floor": round((wall - floor) / floor, 2) if floor else None,
        "floor_share": round(floor / wall, 3), "memories": timings["memories"],
        "start_s": round(wall - timings["demo_s"] + timings["open_s"], 2), "d1_s": timings["d1_s"],
        "d1_statements": timings["d1_statements"], "d1_round_trips": timings["d1_round_trips"],
        "d1_statements_per_memory": round(timings["d1_statements"] / memories, 2),
        "d1_round_trips_per_memory": round(timings["d1_round_trips"] / memories, 2),
    }


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def markdown_row(d: dict[str, Any]) -> str:
    return (f"| `memory-sim demo` ({d['npcs']} NPCs x {d['days']} days, {d['memories']} memories), fresh process | "
            f"{d['wall_s']} s wall ({d['cpu_s']} s CPU; model load {d['model_load_s']} s, in the background) | "
            f"floor: model forward {d['floor_model_forward_s']} s ({d['floor_share']:.0%} of wall) | "
            f"rest {d['rest_s']} s = {d['rest_over_floor']}x the floor (the start {d['start_s']} s; in D1 "
            f"{d['d1_s']} s); D1 {d['d1_statements_per_memory']} statements and "
            f"{d['d1_round_trips_per_memory']} round trips a memory |")
