"""How long `memory-sim --help` takes, side by side in one run with a bare `python -c pass` and `import memory_sim`
(results: benchmarks/help.json and benchmarks/help.md).

Each command runs `--runs` times in a fresh process, the three interleaved so that a change in the machine's load
touches all three alike; wall time per run, median and 90th percentile. The load average before and after is
recorded: on a shared machine it moves the absolute figures, not the ratios. Also recorded: whether `--help`
loaded numpy, torch, chromadb or duckdb (it should load none).

    .venv/bin/python scripts/bench_help.py [--runs 30] [--out benchmarks]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("numpy", "torch", "chromadb", "duckdb", "onnxruntime")
CLI = shutil.which("memory-sim", path=str(Path(sys.executable).parent)) or "memory-sim"
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import memory_sim": [sys.executable, "-c", "import memory_sim"],
    "memory-sim --help": [CLI, "--help"],
}


def _once(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def _heavy_loaded_by_help() -> list[str]:
    code = ("import sys; from memory_sim.cli import build_parser; build_parser().format_help(); "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    return [m for m in out.split(",") if m]


def measure(runs: int) -> dict[str, object]:
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():
        _once(command)  # warm the file cache once; not counted
    for _ in range(runs):
        for name, command in COMMANDS.items():
            times[name].append(_once(command))
    load_after = os.getloadavg()
    rows = {name: {"median_s": round(statistics.median(t), 3),
                   "p90_s": round(statistics.quantiles(t, n=10)[-1], 3), "runs": len(t)} for name, t in times.items()}
    return {"rows": rows, "heavy_modules_loaded_by_help": _heavy_loaded_by_help(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after], "cpus": os.cpu_count(),
            "machine": f"{platform.machine()}, Python {platform.python_version()}",
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def markdown(result: dict[str, object]) -> str:
    rows = result["rows"]
    assert isinstance(rows, dict)
    lines = ["# `memory-sim --help`, measured", "",
             f"{result['machine']}, {result['cpus']} CPUs, load average {result['load_average_before']} before and "
             f"{result['load_average_after']} after ({result['measured_at']}). Fresh process each run, the three "
             "commands interleaved.", "",
             "| command | median | p90 | runs |", "|---|---|---|---|"]
    lines += [f"| `{name}` | {r['median_s']:.3f} s | {r['p90_s']:.3f} s | {r['runs']} |" for name, r in rows.items()]
    heavy = result["heavy_modules_loaded_by_help"]
    lines += ["", f"Heavy libraries `--help` loads: {', '.join(heavy) if heavy else 'none'}.", ""]  # type: ignore[arg-type]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--out", type=Path, default=Path("benchmarks"))
    args = parser.parse_args()
    result = measure(args.runs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "help.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "help.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
