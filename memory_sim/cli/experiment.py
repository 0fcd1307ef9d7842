"""`memory-sim experiment run|report|export`: parameter sweeps over the memory system (memory_sim/experiments).

    memory-sim experiment run SPEC.toml [--out DIR] [--jobs N | --ray [ADDRESS]] [--yes]
    memory-sim experiment report DIR [--to REPORT_DIR]
    memory-sim experiment export DIR [--format parquet|csv] [--to EXPORT_DIR]

The experiment's folder (default: results/<spec name> beside the spec) holds experiment.duckdb and each run's
data folder; the global --data folder is not touched.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from memory_sim.cli.output import json_flag, say


def register(sub: Any) -> None:
    from memory_sim.cli import arguments

    group = sub.add_parser("experiment", help="parameter sweeps: run a spec, report its results, export them")
    verbs = group.add_subparsers(dest="experiment_command", metavar="EXPERIMENT", required=True)
    run = verbs.add_parser("run", help="run a spec's runs not finished yet (results in DIR/experiment.duckdb)")
    run.add_argument("spec", type=arguments.input_file, help="the experiment spec (TOML)")
    run.add_argument("--out", type=arguments.folder, default=None,
                     help="the experiment folder (default: results/<spec name> beside the spec)")
    run.add_argument("--jobs", type=arguments.whole("jobs", 1, 64), default=1, help="runs at once, one process each")
    run.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                     help="each run a Ray task: no ADDRESS starts a local Ray; 'auto' or ray://host:port joins a "
                          "cluster (default: $MEMORY_SIM_RAY_ADDRESS; needs pip install 'memory-sim[ray]')")
    run.add_argument("--ray-cpus", type=arguments.whole("ray-cpus", 1, 4096), default=None,
                     help="CPUs of the local Ray (default: all of this machine's)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("--yes", action="store_true", help="run a spec of more than 1,000 runs")
    json_flag(run)
    run.set_defaults(handler=cmd_run)
    report = verbs.add_parser("report", help="Markdown tables and PNG plots of an experiment's results")
    report.add_argument("folder", type=arguments.existing_folder, help="the experiment folder")
    report.add_argument("--to", type=arguments.folder, default=None, help="where to write (default: DIR/report)")
    json_flag(report)
    report.set_defaults(handler=cmd_report)
    export = verbs.add_parser("export", help="the results tables as Parquet or CSV files")
    export.add_argument("folder", type=arguments.existing_folder, help="the experiment folder")
    export.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="default parquet")
    export.add_argument("--to", type=arguments.folder, default=None, help="where to write (default: DIR/export)")
    json_flag(export)
    export.set_defaults(handler=cmd_export)


def cmd_run(args: argparse.Namespace) -> int:
    from memory_sim.experiments.on_ray import RayTarget
    from memory_sim.experiments.runner import run_experiment
    from memory_sim.experiments.spec import load_spec

    spec = load_spec(args.spec, confirm_runs=args.yes)
    out = args.out or Path(args.spec).parent / "results" / spec.name
    address = args.ray if args.ray is not None else args.settings.ray_address
    ray = None if address is None else RayTarget(address, args.ray_cpus)
    outcome = run_experiment(spec, out, args.jobs, progress=not args.quiet, ray=ray)
    for run_id, error in outcome.failed.items():
        print(f"memory-sim: run {run_id} failed: {error}", file=sys.stderr)
    failed = f", {len(outcome.failed)} failed (run the spec again to retry them)" if outcome.failed else ""
    say(args, f"{len(outcome.ran)} runs done, {len(outcome.skipped)} finished before{failed}; results in {out}",
        {"ran": len(outcome.ran), "finished_before": len(outcome.skipped), "failed": outcome.failed,
         "results": str(out)})
    return 1 if outcome.failed else 0


def cmd_report(args: argparse.Namespace) -> int:
    import importlib.util

    from memory_sim.experiments.report import write_report

    if importlib.util.find_spec("matplotlib") is None:
        print("memory-sim: plots skipped: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
    path = write_report(args.folder, args.to)
    plots = sorted(p.name for p in path.parent.glob("*.png"))
    say(args, str(path), {"report": str(path), "plots": plots})
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from memory_sim.experiments.store import export

    paths = [str(p) for p in export(args.folder, args.format, args.to or args.folder / "export")]
    say(args, "\n".join(paths), {"files": paths})
    return 0
