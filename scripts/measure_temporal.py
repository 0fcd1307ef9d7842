"""hit@3 of questions about time on the temporal villages (memory_sim/eval/temporal.py), per mode and phrasing
family, on the tuning and the held-out half, on real Chroma + DuckDB + MiniLM.

    .venv/bin/python scripts/measure_temporal.py --label before   # on the code before time was read
    .venv/bin/python scripts/measure_temporal.py                  # after: writes benchmarks/temporal.{md,json}

A `--label before` run keeps its figures in benchmarks/temporal_before.json; the default run (label "after")
writes both side by side.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_sim.eval.temporal import MODES, hit_rates, load_village, run_village  # noqa: E402

DATA = ROOT / "tests" / "memory" / "data"
HALVES = {"tuning": DATA / "temporal_tuning.json", "held-out": DATA / "temporal_heldout.json"}
OUT = ROOT / "benchmarks"


def measure(halves: dict[str, Path]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for half, path in halves.items():
        rows = run_village(load_village(path))
        report[half] = {mode: hit_rates(rows[mode]) | {"rows": rows[mode]} for mode in MODES}
    return report


def table(before: dict[str, Any] | None, after: dict[str, Any]) -> list[str]:
    def cell(half: str, mode: str, family: str | None) -> str:
        def one(report: dict[str, Any]) -> str:
            part = report[half][mode]
            return f"{part['overall'] if family is None else part['families'].get(family, 0.0):.3f}"

        return f"{one(before)} -> {one(after)}" if before else one(after)

    lines = []
    for half in HALVES:
        families = list(after[half]["hybrid"]["families"])
        lines += [f"### {half} ({after[half]['hybrid']['questions']} questions)", "",
                  "| family | " + " | ".join(MODES) + " |", "|---|" + "---|" * len(MODES)]
        lines.append("| **overall** | " + " | ".join(cell(half, m, None) for m in MODES) + " |")
        for family in families:
            lines.append(f"| {family} | " + " | ".join(cell(half, m, family) for m in MODES) + " |")
        lines.append("")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", choices=["before", "after"], default="after")
    parser.add_argument("--tuning-only", action="store_true",
                        help="print the tuning half's misses and write nothing (what tuning looks at)")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.tuning_only:
        report = measure({"tuning": HALVES["tuning"]})["tuning"]
        for mode in MODES:
            print(mode, report[mode]["overall"], [r["id"] for r in report[mode]["rows"] if not r["hit"]])
        return 0
    report = measure(HALVES)
    seconds = round(time.perf_counter() - started, 1)
    if args.label == "before":
        (OUT / "temporal_before.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(json.dumps({h: {m: report[h][m]["overall"] for m in MODES} for h in HALVES}))
        return 0
    before_path = OUT / "temporal_before.json"
    before = json.loads(before_path.read_text(encoding="utf-8")) if before_path.exists() else None
    (OUT / "temporal.json").write_text(json.dumps({"before": before, "after": report}, indent=1) + "\n",
                                       encoding="utf-8")
    lines = [
        "# Questions about time: hit@3 (an expected memory in the top 3)",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}; real Chroma + DuckDB + "
        f"sentence-transformers/all-MiniLM-L6-v2; {seconds} s. Villages: tests/memory/data/temporal_tuning.json "
        "(what the time ranking was set on) and temporal_heldout.json (written first, never tuned on). The clock "
        "is set to each question's time; `weighted` is weighted_recall (hybrid candidates, the design's "
        "scoring). " + ("Each cell: before (the code before questions about time were read) -> after." if before
                         else ""),
        "",
        *table(before, report),
    ]
    (OUT / "temporal.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
