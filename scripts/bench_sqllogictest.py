"""SQLite's own sqllogictest corpus through the D1 binding, on both engines, with raw sqlite3 as the control.

    .venv/bin/python scripts/bench_sqllogictest.py --corpus PATH [--files-per-dir 2] [--max-records 1500]

PATH is the `test/` folder of a checkout of the sqllogictest corpus (sqlite.org/sqllogictest, public domain; its
GitHub mirrors hold the same files). From every directory that holds .test files, the first `--files-per-dir`
files (by name) are taken, each up to `--max-records` records, hash-threshold records included. Every record runs
on raw sqlite3, on the D1 sqlite engine and on the D1 DuckDB engine (tests/d1/sqllogictest.py). Writes
benchmarks/sqllogictest.json and benchmarks/sqllogictest.md: per setup, records passed, answered differently,
refused by rule (D1Unsupported; counted by rule) and failed, with examples of each.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "d1"))
from sqllogictest import OUTCOMES, SETUPS, Tally, run_file  # noqa: E402

import memory_sim  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "benchmarks"


def sample(corpus: Path, per_dir: int) -> list[Path]:
    by_dir: dict[Path, list[Path]] = defaultdict(list)
    for path in corpus.rglob("*.test"):
        by_dir[path.parent].append(path)
    return [path for folder in sorted(by_dir) for path in sorted(by_dir[folder])[:per_dir]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--files-per-dir", type=int, default=2)
    parser.add_argument("--max-records", type=int, default=1500)
    parser.add_argument("--out", type=Path, default=OUT, help="folder for sqllogictest.json and .md")
    args = parser.parse_args()
    files = sample(args.corpus, args.files_per_dir)
    if not files:
        raise SystemExit(f"no .test files under {args.corpus}: give the corpus's test/ folder")
    tallies: dict[str, Tally] = {}
    started = time.perf_counter()
    for n, path in enumerate(files, 1):
        run_file(path.read_text("utf-8", "replace"), str(path.relative_to(args.corpus)), tallies, args.max_records)
        print(f"[{n}/{len(files)}] {path.relative_to(args.corpus)}", file=sys.stderr)
    report = {
        "machine": f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}",
        "code": str(Path(memory_sim.__file__).resolve().parent.parent),  # the checkout that ran
        "files": len(files),
        "directories": len({p.parent for p in files}),
        "max_records_per_file": args.max_records,
        "seconds": round(time.perf_counter() - started, 1),
        "setups": {name: {"outcomes": {o: t.outcomes[o] for o in OUTCOMES}, "records": t.total,
                          "pass_rate": round(t.rate(), 4), "seconds": round(t.seconds, 1),
                          "cpu_seconds": round(t.cpu_seconds, 1),
                          "refused_by_rule": dict(t.rules.most_common()),
                          "examples": t.examples} for name, t in tallies.items()},
    }
    args.out.joinpath("sqllogictest.json").write_text(json.dumps(report, indent=2) + "\n")
    args.out.joinpath("sqllogictest.md").write_text(markdown(report))
    print(markdown(report))


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# SQLite's sqllogictest through the D1 binding",
        "",
        f"{report['files']} files from {report['directories']} directories of the corpus, up to "
        f"{report['max_records_per_file']} records each; {report['seconds']} s on {report['machine']}. "
        "Written by scripts/bench_sqllogictest.py.",
        "",
        "| setup | records | passed | answered differently | refused (one line, by rule) | failed | pass rate | "
        "seconds | CPU seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in SETUPS:
        s = report["setups"][name]
        o = s["outcomes"]
        lines.append(f"| {name} | {s['records']} | {o['passed']} | {o['differs']} | {o['refused']} | {o['failed']} | "
                     f"{100 * s['pass_rate']:.2f} % | {s['seconds']} | {s.get('cpu_seconds', '')} |")
    for name in SETUPS:
        rules = report["setups"][name]["refused_by_rule"]
        if rules:
            lines += ["", f"{name}, refusals by rule:", "", "| records | rule |", "|---|---|"]
            lines += [f"| {count} | {rule.replace('|', '/')} |" for rule, count in rules.items()]
    for name in SETUPS:
        for outcome, examples in report["setups"][name]["examples"].items():
            lines += ["", f"{name}, {outcome}:", ""] + [f"- `{e.replace('`', '')}`" for e in examples]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
