"""Benchmark: memory_sim's Vectorize on Chroma vs numpy exact search vs raw Chroma, side by side in one run.

    .venv/bin/python scripts/bench_vectorize.py            # 100,000 x 384 (issue 2's figures)
    .venv/bin/python scripts/bench_vectorize.py --quick    # 10,000 x 384 smoke run

The measuring code is memory_sim/bench/vectorize.py (also `memory-sim bench`'s index section).
Writes benchmarks/vectorize[-quick].json and benchmarks/vectorize[-quick].md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_sim.bench.vectorize import markdown, run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 vectors, for a smoke run")
    parser.add_argument("--note", default="", help="a line recorded with the results (e.g. machine load)")
    args = parser.parse_args()
    report = run(10_000, 50, 10) if args.quick else run(100_000, 200, 30)
    report["note"] = args.note
    out = ROOT / "benchmarks"
    out.mkdir(exist_ok=True)
    suffix = "-quick" if args.quick else ""
    (out / f"vectorize{suffix}.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / f"vectorize{suffix}.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
