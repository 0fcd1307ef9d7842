"""The sqllogictest sample on two checkouts, side by side: runs alternate (base, new, base, new, ...) so that both
see the same machine load, each in its own process with PYTHONPATH at its checkout, through this checkout's
harness (scripts/bench_sqllogictest.py, tests/d1/sqllogictest.py). Wall and CPU seconds per setup, medians over
the rounds, and the load average around each run.

    .venv/bin/python scripts/compare_sqllogictest.py --base /tmp/base --corpus test/ [--rounds 2]

`--base`: a checkout of the code before the change (`git worktree add /tmp/base <commit>`). Writes
benchmarks/sqllogictest_sample.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks"
SETUPS = ("raw sqlite3", "D1 sqlite engine", "D1 duckdb engine")


def run_once(checkout: Path, corpus: Path, files_per_dir: int, max_records: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as out:
        load_before = os.getloadavg()[0]
        subprocess.run(
            ["nice", "-n", "10", sys.executable, str(ROOT / "scripts" / "bench_sqllogictest.py"), "--corpus",
             str(corpus), "--files-per-dir", str(files_per_dir), "--max-records", str(max_records), "--out", out],
            env={**os.environ, "PYTHONPATH": str(checkout)}, check=True, capture_output=True, timeout=1800,
        )
        report = json.loads(Path(out, "sqllogictest.json").read_text())
    if Path(report["code"]).resolve() != checkout.resolve():
        raise SystemExit(f"the run read memory_sim from {report['code']}, not from {checkout}")
    report["load"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--files-per-dir", type=int, default=1)
    parser.add_argument("--max-records", type=int, default=200)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for n in range(args.rounds):
        for label, checkout in (("before", args.base), ("after", ROOT)):
            runs[label].append(run_once(checkout, args.corpus, args.files_per_dir, args.max_records))
            print(f"round {n + 1} {label}: " + ", ".join(
                f"{s} {runs[label][-1]['setups'][s]['seconds']} s" for s in SETUPS), file=sys.stderr)
    report = {
        "machine": f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}, "
                   f"{os.cpu_count()} CPUs",
        "base": str(args.base), "rounds": args.rounds, "files_per_dir": args.files_per_dir,
        "max_records": args.max_records, "files": runs["after"][0]["files"],
        "setups": {setup: summary(runs, setup) for setup in SETUPS},
        "loads": {label: [r["load"] for r in rs] for label, rs in runs.items()},
    }
    OUT.joinpath("sqllogictest_sample.json").write_text(json.dumps(report, indent=2) + "\n")
    OUT.joinpath("sqllogictest_sample.md").write_text(markdown(report))
    print(markdown(report))


def summary(runs: dict[str, list[dict[str, Any]]], setup: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, rs in runs.items():
        s = [r["setups"][setup] for r in rs]
        out[label] = {"seconds": [x["seconds"] for x in s], "cpu_seconds": [x["cpu_seconds"] for x in s],
                      "passed": [x["outcomes"]["passed"] for x in s], "records": s[0]["records"]}
    for key in ("seconds", "cpu_seconds"):
        before, after = (statistics.median(out[label][key]) for label in ("before", "after"))
        out[f"{key}_change"] = round(after / before - 1, 3) if before else None
    return out


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# SQLite's sqllogictest, a small sample, before and after (side by side)",
        "",
        f"{report['files']} files (the first of each directory of the corpus, by name), up to "
        f"{report['max_records']} records each; {report['machine']}. {report['rounds']} rounds, each running the "
        "code before the change and then after it in turn, through the same harness; medians over the rounds. "
        "Written by scripts/compare_sqllogictest.py.",
        "",
        "| setup | passed before | passed after | seconds before | seconds after | change | CPU s before | "
        "CPU s after | change |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for setup, s in report["setups"].items():
        b, a = s["before"], s["after"]
        lines.append(
            f"| {setup} | {min(b['passed']):,} / {b['records']:,} | {min(a['passed']):,} / {a['records']:,} | "
            f"{statistics.median(b['seconds'])} | {statistics.median(a['seconds'])} | "
            f"{100 * s['seconds_change']:+.1f} % | "
            f"{statistics.median(b['cpu_seconds'])} | {statistics.median(a['cpu_seconds'])} | "
            f"{100 * s['cpu_seconds_change']:+.1f} % |")
    loads = "; ".join(f"{label}: " + ", ".join(f"{x[0]}-{x[1]}" for x in ls) for label, ls in report["loads"].items())
    lines += ["", f"Load average (1 min) at the start and end of each run: {loads}.",
              "CPU seconds are the process's (all its threads, DuckDB's too): they move less with the load than the "
              "wall-clock seconds."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
