"""The D1 differential fuzzer, run longer than CI does (tests/d1/test_differential.py): generated queries and writes
over a schema of mixed affinities, each on sqlite3 (D1's engine) and on the DuckDB engine.

    .venv/bin/python scripts/fuzz_d1.py [--reads N] [--writes N] [--seed S] [--quick]

Writes benchmarks/d1_fuzz.json and benchmarks/d1_fuzz.md: statements run, those that agreed (same rows, or the
same error), those the DuckDB engine refused (by rule) and any difference, which would be a bug to fix.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as with_seed
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "d1"))
from differential import Tally, apply_writes, new_pair, reads, run, writes  # noqa: E402

# What this fuzzer found while the DuckDB engine's SQLite layer was built, each fixed (docs/d1.md).
FOUND_AND_FIXED = [
    "unaliased result columns such as `NOT r`, `a IS b`, `x BETWEEN y AND z` were named by DuckDB's SQL, not SQLite's",
    "a blob literal made SQLite's program listing (the mirror's compile check) undecodable as text",
    "DuckDB 2.0 returned a REAL as an INTEGER (3.5 as 4) for a CASE of mixed types after a full sort: values of "
    "mixed type now leave DuckDB as typed fields",
    "a text holding NUL, folded at translation time, broke the numbering of bound values",
    "UNION of mixed types kept 0 and 0.0 apart (SQLite merges them): refused",
    "a TEXT column compared with a DATETIME column (NUMERIC affinity) compared as text; SQLite converts the TEXT "
    "side's numbers",
    "`x BETWEEN a = b AND c`: the lower bound may hold comparisons and LIKE/GLOB",
    "text that is not UTF-8 (a blob read as text) was folded with replacement characters: refused",
    "DuckDB's own REFERENCES fired on INSERT OR REPLACE and DELETE: foreign keys are now the engine's",
    "errors carried SQLite's extended codes on one engine (SQLITE_CONSTRAINT_FOREIGNKEY): both now the primary code",
    "a NULL bound value in a CASE branch was typed as text (a binder error)",
    "ORDER BY NULL and ORDER BY an alias inside an expression failed on DuckDB",
    "likely(s) kept the column's affinity (SQLite's likely() is a call: it has none)",
    "a comparison or arithmetic with NULL dropped its other operand, and with it the error SQLite raises there "
    "(a malformed JSON path); so did a comparison of values of different types, answered without evaluating them",
    "CAST(NULL AS TEXT) cast again AS BLOB crashed the translation",
    "`x IN (SELECT r ...)` with r REAL: SQLite looks an INTEGER x up as a REAL (9007199254740993 finds "
    "9007199254740992.0), unlike `x = r`",
    "an INSERT of several rows numbered rows without an id by position; SQLite gives each one more than the largest "
    "rowid so far, counting ids earlier rows gave (and a largest rowid below zero was taken as 0)",
    "INSERT OR IGNORE of a NULL into a NOT NULL column failed (SQLite skips the row); INSERT OR REPLACE of one failed "
    "(SQLite stores the DEFAULT); an upsert of one answered when it conflicted (SQLite fails)",
    "an upsert whose rows repeat a key kept the first row (SQLite updates it with the second): refused",
    "several-row INSERT OR IGNORE / ON CONFLICT into a rowid table numbered skipped rows: refused unless ids given",
]


def fuzz(n_reads: int, n_writes: int, seed: int | None) -> Tally:
    tally = Tally()
    pair = new_pair()
    base = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck),
            "derandomize": seed is None}

    @settings(max_examples=n_reads, **base)
    @given(data=st.data())
    def queries(data: st.DataObject) -> None:
        statement = data.draw(reads())
        tally.record(statement, run(pair[0], statement), run(pair[1], statement))

    @settings(max_examples=n_writes, **base)
    @given(data=st.data())
    def changes(data: st.DataObject) -> None:
        fresh = new_pair()
        try:
            apply_writes(fresh, data.draw(writes()), tally)
        finally:
            for db in fresh:
                db.close()

    for test in (queries, changes):
        (with_seed(seed)(test) if seed is not None else test)()
    for db in pair:
        db.close()
    return tally


def report(tally: Tally, args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    refused = sum(tally.refused.values())
    return {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "settings": {"reads": args.reads, "writes": args.writes, "seed": args.seed or "derandomized"},
        "seconds": round(seconds, 1),
        "statements_run": tally.ran,
        "agreed_rows": tally.agreed_rows,
        "agreed_errors": tally.agreed_errors,
        "refused": refused,
        "refused_by_rule": dict(tally.refused.most_common()),
        "differences": tally.differences,
        "found_and_fixed": FOUND_AND_FIXED,
    }


def markdown(data: dict[str, Any]) -> str:
    ran = data["statements_run"]

    def share(n: int) -> str:
        return f"{n} ({100 * n / ran:.1f}%)" if ran else str(n)

    lines = [
        "# D1 differential fuzz (sqlite3 vs the DuckDB engine)",
        "",
        f"`scripts/fuzz_d1.py` with {data['settings']['reads']} generated queries and {data['settings']['writes']} "
        f"generated write sequences (seed: {data['settings']['seed']}), {data['seconds']} s on "
        f"{data['machine']['platform']}.",
        "",
        "| statements run | same rows | same error | refused by the DuckDB engine | differences |",
        "|---|---|---|---|---|",
        f"| {ran} | {share(data['agreed_rows'])} | {share(data['agreed_errors'])} | {share(data['refused'])} | "
        f"{len(data['differences'])} |",
        "",
        "## Refused, by rule",
        "",
        "| statements | rule (the refusal's message, values left out) |",
        "|---|---|",
        *[f"| {n} | {rule} |" for rule, n in data["refused_by_rule"].items()],
        "",
        "## Differences",
        "",
        *([f"- `{d['sql']}` {d['params']}: {d['why']}" for d in data["differences"]] or ["None."]),
        "",
        "## Found by this fuzzer and fixed",
        "",
        *[f"- {item}" for item in data["found_and_fixed"]],
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=10000)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=None, help="a hypothesis seed; default: derandomized")
    parser.add_argument("--quick", action="store_true", help="1,000 queries and 100 write sequences")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "benchmarks")
    args = parser.parse_args()
    if args.quick:
        args.reads, args.writes = 1000, 100
    started = time.perf_counter()
    tally = fuzz(args.reads, args.writes, args.seed)
    data = report(tally, args, time.perf_counter() - started)
    name = "d1_fuzz-quick" if args.quick else "d1_fuzz"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
    (args.out / f"{name}.md").write_text(markdown(data))
    print(markdown(data))
    return 1 if tally.differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
