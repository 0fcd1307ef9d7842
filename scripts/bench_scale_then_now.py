"""The scale benchmark's first days on an old checkout and on this one, side by side: the same world (N NPCs in
seeded hamlets of ten, as `memory-sim bench --scale` lives it), each run in a fresh process over a fresh data
folder on that version's default local stack, old and new alternating (old, new, then new, old, ...).

    python scripts/bench_scale_then_now.py --then ../old-checkout            # 100 NPCs, 5 days, 2 rounds
    python scripts/bench_scale_then_now.py --then ../old --npcs 10 --days 1 --rounds 1 --out /tmp/t
    python scripts/bench_scale_then_now.py --then ../old --days 365 --rounds 1 --first now 2> run.log
    python scripts/bench_scale_then_now.py --from-log run.log --out /tmp/t    # the days both sides have lived

Each run is this script again (`--child`) with PYTHONPATH at one checkout, so `memory_sim` is that version; the
child uses only what both versions have. Timed: the sim days alone (wall clock and the process's CPU time, all
threads), after the Env is open and one text is embedded (the model load is left out). Writes
<out>/scale_then_now.json and .md. A run stopped before its end (a year of old code takes hours) still says
what it measured: `--from-log` reads the progress it printed on stderr and writes <out>/scale_then_now_log.json
and .md, the two sides compared over the days both lived.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

HAMLET = 10  # NPCs of one village, as memory_sim/bench/scale.py
HOURS = 24
DIARY_HOUR = 23
SEED = 7
HERE = Path(__file__).resolve().parents[1]  # the checkout this script belongs to: "now"


# --- the child: one run on whichever memory_sim PYTHONPATH names ------------------------------------------------


def child(days: int, npcs: int, seed: int, folder: Path) -> dict[str, Any]:
    import memory_sim
    from memory_sim.env import Env
    from memory_sim.memory.models import WorldTime
    from memory_sim.memory.system import MemorySystem
    from memory_sim.scheduling import SimScheduler
    from memory_sim.sim.clock import SimClock
    from memory_sim.sim.world import Village

    hamlets = [Village(HAMLET, seed + k) for k in range(npcs // HAMLET)]
    ids = [f"{n.id}-{k}" for k, v in enumerate(hamlets) for n in v.npcs]
    clock = SimClock(WorldTime(0, 0))
    with Env.local(folder / "data", **_env_options()) as env:
        system = MemorySystem(env, clock=clock)
        _register(system, hamlets)
        scheduler = SimScheduler(system)  # each version's own default jobs, as its simulations run them
        env.embedder.embed(["the model loads before the clock starts"])
        per_day: list[list[float]] = []
        made = hashlib.blake2b(digest_size=8)  # the memories' ids, in order: the same world makes the same digest
        started, cpu = time.perf_counter(), time.process_time()
        for day in range(days):
            day_started = time.perf_counter()
            remembered = _live_day(system, hamlets, ids, scheduler, clock, day, made)
            per_day.append([remembered, round(time.perf_counter() - day_started, 3)])
            print(f"  day {day + 1}/{days}: {remembered} memories, {per_day[-1][1]:.1f} s", file=sys.stderr)
        loop_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu
        model = env.embedder.model
        runtime = getattr(env.settings, "embed_runtime", None) or ("torch" if "torch" in sys.modules else None)
    torch = sys.modules.get("torch")
    return {
        "memory_sim": str(Path(memory_sim.__file__).resolve().parents[1]), "model": model, "runtime": runtime,
        "torch_loaded": torch is not None, "torch_threads": torch.get_num_threads() if torch is not None else None,
        "onnxruntime_loaded": "onnxruntime" in sys.modules, "memory_digest": made.hexdigest(),
        "memories": sum(int(m) for m, _ in per_day), "loop_s": round(loop_s, 3), "cpu_s": round(cpu_s, 3),
        "per_day": per_day,  # [memories, seconds] per sim day
        "foreign_modules": _foreign_modules(),
    }


def _has(module: str) -> bool:
    """Whether this checkout has the module. Not a bare import: an editable install of another checkout answers
    for modules this one lacks (its finder comes after PYTHONPATH but still finds them)."""
    import memory_sim

    spec = importlib.util.find_spec(module)
    origin = spec.origin if spec is not None else None
    return origin is not None and Path(origin).resolve().is_relative_to(Path(memory_sim.__file__).resolve().parent)


def _foreign_modules() -> list[str]:
    """memory_sim modules this run loaded from outside its checkout (there must be none)."""
    import memory_sim

    own = Path(memory_sim.__file__).resolve().parent
    files = {name: getattr(m, "__file__", None) for name, m in list(sys.modules.items())}
    return sorted(name for name, file in files.items()
                  if name.startswith("memory_sim.") and file and not Path(file).resolve().is_relative_to(own))


def _env_options() -> dict[str, Any]:
    """The default local stack; the newer Settings can be told not to serve the folder to other processes (the
    older one has no such setting and refuses keys it does not know)."""
    if not _has("memory_sim.settings"):
        return {}
    from memory_sim.settings import Settings

    return {"serve_owner": False} if "serve_owner" in getattr(Settings, "model_fields", {}) else {}


def _register(system: Any, hamlets: Sequence[Any]) -> None:
    if not _has("memory_sim.memory.npcs"):
        return  # the code before NPCs were registered
    from memory_sim.memory import npcs

    rows = [npcs.make(f"{n.id}-{k}", n.name, n.role, (), n.descriptors) for k, v in enumerate(hamlets) for n in v.npcs]
    npcs.register_many(system.env.DB, rows)


def _live_day(
    system: Any, hamlets: Sequence[Any], ids: list[str], scheduler: Any, clock: Any, day: int, made: Any
) -> int:
    """One sim day hour by hour, as memory_sim/bench/scale.py lives it, on whichever API this version has."""
    from memory_sim.memory.models import WorldTime

    background = hasattr(system, "settle")
    remembered = 0
    for hour in range(HOURS):
        when = WorldTime(day, hour)
        clock.advance_to(when)
        scheduler.tick(clock())
        memories = [replace(m, npc_id=f"{m.npc_id}-{k}", about=tuple(f"{a}-{k}" for a in m.about), id="")
                    for k, v in enumerate(hamlets) for m in v.tick(when).memories]
        if background:
            system.remember_many(memories, wait=False)
        else:
            system.remember_many(memories)
        remembered += len(memories)
        for m in memories:
            made.update(m.id.encode())
        if hour == DIARY_HOUR:
            if hasattr(system, "write_diaries"):
                system.write_diaries(ids, day)
            else:
                for npc_id in ids:
                    system.write_diary(npc_id, day)
    if background:
        system.settle()
    return remembered


# --- the parent: alternate the two versions, summarise ----------------------------------------------------------


def run_once(checkout: Path, days: int, npcs: int) -> dict[str, Any]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SIM_")}  # the defaults, not mine
    environ["PYTHONPATH"] = str(checkout)
    with tempfile.TemporaryDirectory(prefix="scale-then-now-") as folder:
        # cwd is the empty folder: no memory_sim.toml of the caller's applies
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", "--days", str(days), "--npcs", str(npcs),
             "--folder", folder], cwd=folder, env=environ, stdout=subprocess.PIPE, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(result["memory_sim"]) != checkout or result["foreign_modules"]:
        raise SystemExit(f"the run of {checkout} imported memory_sim from {result['memory_sim']} "
                         f"(and these modules from elsewhere: {result['foreign_modules']})")
    result["memories_per_s"] = round(result["memories"] / result["loop_s"], 1)
    result["memories_per_cpu_s"] = round(result["memories"] / result["cpu_s"], 1)
    return result


def commit_of(checkout: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True).stdout.strip()

    changed = git("status", "--porcelain", "--untracked-files=no")
    return git("rev-parse", "--short", "HEAD") + (" (with uncommitted changes)" if changed else "")


def summarise(
    runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace, checkouts: dict[str, Path]
) -> dict[str, Any]:
    sys.path.insert(0, str(checkouts["now"]))
    from memory_sim.bench.suite import machine

    median = {side: {unit: round(statistics.median(r[unit] for r in rs), 1)
                     for unit in ("memories_per_s", "memories_per_cpu_s")} for side, rs in runs.items()}
    per_day = {side: [d[0] for d in rs[0]["per_day"]] for side, rs in runs.items()}
    digests = {r["memory_digest"] for rs in runs.values() for r in rs}
    return {
        "machine": machine(), "npcs": args.npcs, "days": args.days, "rounds": args.rounds, "seed": SEED,
        "then": {"path": str(checkouts["then"]), "commit": commit_of(checkouts["then"])},
        "now": {"path": str(checkouts["now"]), "commit": commit_of(checkouts["now"])},
        "median": median,
        "ratio_new_over_old": {unit: round(median["now"][unit] / max(median["then"][unit], 1e-9), 2)
                               for unit in ("memories_per_s", "memories_per_cpu_s")},
        "same_memories": len(digests) == 1, "memories_per_day": per_day,
        "runs": runs,
    }


def markdown(report: dict[str, Any]) -> str:
    r, ratio = report, report["ratio_new_over_old"]
    rows = [f"| {side} ({r[side]['commit']}) | {k + 1} | {run['memories']:,} | {run['loop_s']:.1f} | "
            f"{run['cpu_s']:.1f} | {run['memories_per_s']} | {run['memories_per_cpu_s']} | {run['model']} "
            f"({run['runtime']}) |"
            for side in ("then", "now") for k, run in enumerate(r["runs"][side])]
    counts = r["memories_per_day"]
    same = ("Both versions' worlds make the same memories (the same ids, in the same order)"
            if r["same_memories"] else
            f"The two versions' worlds make different memories (per day, then {counts['then']}, now "
            f"{counts['now']}); memories/s is still the fair unit, each version timed over what it makes")
    return "\n".join([
        f"# Scale benchmark then and now: {r['npcs']} NPCs, first {r['days']} sim days, {r['rounds']} rounds", "",
        f"Machine: {r['machine']}.", "",
        "| version | round | memories | loop s | CPU s | memories/s | memories / CPU s | model (runtime) |",
        "|---|---|---|---|---|---|---|---|", *rows, "",
        f"Median memories/s: then {r['median']['then']['memories_per_s']}, now "
        f"{r['median']['now']['memories_per_s']}: **{ratio['memories_per_s']}x**. Median memories per CPU second: "
        f"then {r['median']['then']['memories_per_cpu_s']}, now {r['median']['now']['memories_per_cpu_s']}: "
        f"**{ratio['memories_per_cpu_s']}x**.", "",
        f"{same}. Each run is a fresh process over a fresh data folder on its version's default local stack "
        "(Chroma, D1 on DuckDB, the default model), the rounds alternating old and new. Timed: the sim days "
        "only (hour by hour: jobs, memories, diaries at 23:00, the day's indexing settled), after the model has "
        "embedded one text; CPU seconds are the process's, all threads.", "",
    ])


# --- a run's stderr, read back: the days both sides lived, even where the run was stopped ------------------------

_ROUND = re.compile(r"round \d+/\d+, (then|now):")
_DAY = re.compile(r"\s+day \d+/\d+: (\d+) memories, ([\d.]+) s")
_DONE = re.compile(r"\s+([\d,]+) memories in ([\d.]+) s \(([\d.]+) CPU s\): ([\d.]+) memories/s")


def read_log(text: str) -> dict[str, Any]:
    """The progress a one-round run printed: each side's [memories, seconds] per day, and its totals where it
    finished."""
    days: dict[str, list[list[float]]] = {}
    totals: dict[str, dict[str, float]] = {}
    side = None
    for line in text.splitlines():
        if found := _ROUND.match(line):
            side = found.group(1)
            days[side] = []
        elif side and (found := _DAY.match(line)):
            days[side].append([int(found.group(1)), float(found.group(2))])
        elif side and (found := _DONE.match(line)):
            totals[side] = {"memories": int(found.group(1).replace(",", "")), "loop_s": float(found.group(2)),
                            "cpu_s": float(found.group(3)), "memories_per_s": float(found.group(4))}
    return {"per_day": days, "finished": totals}


def compare_days(log: dict[str, Any], stretch: int = 30) -> dict[str, Any]:
    """The two sides over the days both lived: memories/s each, the ratio, and by stretches of days."""
    then, now = log["per_day"].get("then", []), log["per_day"].get("now", [])
    both = min(len(then), len(now))
    if both == 0:
        raise SystemExit("the log holds no day that both sides lived")

    def seconds(rows: list[list[float]], lo: int, hi: int) -> float:
        return sum(r[1] for r in rows[lo:hi])

    def span(lo: int, hi: int) -> dict[str, Any]:
        a, b = seconds(then, lo, hi), seconds(now, lo, hi)
        return {"then_s": round(a, 1), "now_s": round(b, 1), "ratio": round(a / b, 2)}

    memories = int(sum(r[0] for r in now[:both]))
    then_s, now_s = seconds(then, 0, both), seconds(now, 0, both)
    marks = sorted({*range(stretch, both, stretch), both})
    return {
        "days_both": both, "days": {"then": len(then), "now": len(now)}, "finished": log["finished"],
        "same_memories_per_day": [r[0] for r in then[:both]] == [r[0] for r in now[:both]],
        "memories": memories, "then_s": round(then_s, 1), "now_s": round(now_s, 1),
        "memories_per_s": {"then": round(memories / then_s, 1), "now": round(memories / now_s, 1)},
        "ratio_new_over_old": round(then_s / now_s, 2),
        "cumulative": [{"days": d, **span(0, d)} for d in marks],
        "stretches": [{"days": f"{lo + 1}-{hi}", **span(lo, hi)}
                      for lo, hi in zip([0, *marks[:-1]], marks, strict=True)],
        "per_day": {"then": then[:both], "now": now[:both]},
    }


def log_markdown(r: dict[str, Any]) -> str:
    rows = [f"| 1-{c['days']} | {c['then_s']:,} | {c['now_s']:,} | {c['ratio']}x |" for c in r["cumulative"]]
    stretches = [f"| {c['days']} | {c['then_s']:,} | {c['now_s']:,} | {c['ratio']}x |" for c in r["stretches"]]
    same = ("the same memories each day on both sides" if r["same_memories_per_day"]
            else "**different memories on the two sides**: compare memories/s only")
    return "\n".join([
        f"# Scale benchmark then and now, read from a run's log: the {r['days_both']} days both sides lived", "",
        f"The run had lived {r['days']['then']} days of the old code and {r['days']['now']} of the new when this "
        f"was read; {same}. Seconds are each side's sim days alone, as printed to one decimal.", "",
        f"{r['memories']:,} memories: then {r['then_s']:,} s ({r['memories_per_s']['then']} memories/s), now "
        f"{r['now_s']:,} s ({r['memories_per_s']['now']} memories/s): **{r['ratio_new_over_old']}x**.", "",
        "| days | then s | now s | now / then |", "|---|---|---|---|", *rows, "",
        "| stretch | then s | now s | now / then |", "|---|---|---|---|", *stretches, "",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--then", type=Path, help="the old checkout (its root: the folder holding memory_sim/)")
    parser.add_argument("--now", type=Path, default=HERE, help="the new checkout (default: this script's)")
    parser.add_argument("--days", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--npcs", type=int, default=100, help=f"a multiple of {HAMLET}")
    parser.add_argument("--first", choices=("then", "now"), default="then",
                        help="the version the first round starts with (the rounds alternate from it)")
    parser.add_argument("--out", type=Path, default=HERE / "benchmarks")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--from-log", type=Path, help="summarise a run from its stderr, finished or not")
    args = parser.parse_args(argv)
    if args.from_log is not None:
        report = compare_days(read_log(args.from_log.read_text("utf-8")))
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "scale_then_now_log.json").write_text(json.dumps(report, indent=1) + "\n", "utf-8")
        (args.out / "scale_then_now_log.md").write_text(text := log_markdown(report), "utf-8")
        print(text)
        return 0
    if args.npcs < HAMLET or args.npcs % HAMLET or args.days < 1 or args.rounds < 1:
        parser.error(f"--npcs must be a multiple of {HAMLET}; --days and --rounds at least 1")
    if args.child:
        print(json.dumps(child(args.days, args.npcs, SEED, args.folder)))
        return 0
    if args.then is None:
        parser.error("--then (the old checkout) is required")
    checkouts = {"then": args.then.resolve(), "now": args.now.resolve()}
    for side, path in checkouts.items():
        if not (path / "memory_sim" / "__init__.py").is_file():
            parser.error(f"--{side} {path} is not a checkout of memory_sim (no memory_sim/__init__.py)")
    runs: dict[str, list[dict[str, Any]]] = {"then": [], "now": []}
    order = ("then", "now") if args.first == "then" else ("now", "then")
    for k in range(args.rounds):
        for side in order if k % 2 == 0 else order[::-1]:
            print(f"round {k + 1}/{args.rounds}, {side}: {args.npcs} NPCs, {args.days} days", file=sys.stderr)
            result = run_once(checkouts[side], args.days, args.npcs)
            runs[side].append(result)
            print(f"  {result['memories']:,} memories in {result['loop_s']:.1f} s ({result['cpu_s']:.1f} CPU s): "
                  f"{result['memories_per_s']} memories/s", file=sys.stderr)
    report = summarise(runs, args, checkouts)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scale_then_now.json").write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    text = markdown(report)
    (args.out / "scale_then_now.md").write_text(text, "utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
