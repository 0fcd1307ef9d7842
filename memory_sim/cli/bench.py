"""`memory-sim bench [--quick] [--json]`: every benchmark side by side in one run (memory_sim/bench/suite.py).

Writes bench.json, bench.md and PNG plots into --out (./memory-sim-bench by default, in the working directory).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("memory-sim-bench")


def register(sub: Any) -> None:
    from memory_sim.cli import arguments

    bench = sub.add_parser("bench", help="benchmarks side by side: index, embeddings, D1, end to end; plots")
    bench.add_argument("--quick", action="store_true", help="10k vectors only, small samples (about 1-2 minutes)")
    bench.add_argument("--json", action="store_true", help="print the report as JSON")
    bench.add_argument(
        "--sizes",
        type=arguments.index_sizes,
        default=None,
        help="index sizes, comma-separated (default 10000,100000,300000)",
    )
    bench.add_argument("--out", type=arguments.folder, default=DEFAULT_OUT,
                       help=f"output folder (default: ./{DEFAULT_OUT} in the working directory)")
    bench.add_argument("--demo", action="store_true",
                       help="only the demo row: `memory-sim demo` wall time against the model's forward time")
    scale = bench.add_argument_group("scale", "--scale: a world of many NPCs for a sim year")
    scale.add_argument("--scale", action="store_true", help="run (or go on with) the scale run instead")
    scale.add_argument("--npcs", type=arguments.whole("npcs", 10, 10_000), default=100, help="default 100")
    scale.add_argument("--days", type=arguments.whole("days", 1, 3650), default=365, help="sim days, default 365")
    scale.add_argument("--run", type=arguments.folder, default=None,
                       help="the run folder, resumed when it holds a run (default: scale-run in --out)")
    scale.add_argument("--for", dest="budget_s", type=arguments.whole("for", 1, 10**7), default=None,
                       help="stop after this many seconds of the loop (run again to go on)")
    bench.set_defaults(handler=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from memory_sim.errors import ConfigError

    if args.scale:
        return _scale(args)
    if args.demo:
        return _demo(args)

    if importlib.util.find_spec("psutil") is None:
        raise ConfigError("memory-sim bench needs psutil: pip install psutil")
    from memory_sim.bench.suite import markdown, plot, run_all

    report = run_all(quick=args.quick, sizes=args.sizes, progress=lambda m: print(m, file=sys.stderr, flush=True))
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    name = "bench-quick" if args.quick else "bench"
    if importlib.util.find_spec("matplotlib") is None:
        print(
            "memory-sim: plots skipped: matplotlib is not installed (pip install matplotlib)", file=sys.stderr
        )
        report["plots"] = []
    else:
        report["plots"] = [p.name for p in plot(report, out, name)]
    (out / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    table = markdown(report)
    (out / f"{name}.md").write_text(table)
    print(json.dumps(report, indent=2) if args.json else table)
    return 0


def _scale(args: argparse.Namespace) -> int:
    from memory_sim.bench.scale import markdown, run_scale

    out = args.out
    settings = args.settings  # the model and D1 engine chosen (flags, environment, memory_sim.toml)
    report = run_scale(args.run or out / "scale-run", npcs=args.npcs, days=args.days, budget_s=args.budget_s,
                       progress=lambda m: print(m, file=sys.stderr, flush=True), embed_model=settings.embed_model,
                       d1_engine=settings.d1_engine, embed_runtime=settings.embed_runtime)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scale.json").write_text(json.dumps(report, indent=2) + "\n")
    table = markdown(report)
    (out / "scale.md").write_text(table)
    print(json.dumps(report, indent=2) if args.json else table)
    return 0


def _demo(args: argparse.Namespace) -> int:
    from memory_sim.bench.demo import demo_breakdown, markdown_row
    from memory_sim.bench.suite import machine

    report = {"machine": machine(), **demo_breakdown()}
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "demo.json").write_text(json.dumps(report, indent=2) + "\n")
    table = "\n".join(["# memory-sim bench --demo", "", f"Machine: {report['machine']}.", "",
                       "| run | wall | floor | the rest |", "|---|---|---|---|", markdown_row(report), ""])
    (out / "demo.md").write_text(table)
    print(json.dumps(report, indent=2) if args.json else table)
    return 0
