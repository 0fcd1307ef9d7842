"""D1 stand-in benchmarks (issue 3): our DuckDB D1 against raw DuckDB running the already-translated SQL, and
how D1 builds its result rows.

    .venv/bin/python scripts/bench_d1.py [--quick]

Overhead, batch inserts and the day-ordered read are measured by memory_sim/bench/d1.py (also `memory-sim bench`'s
d1 section). Row building: the whole `.all()` call of `SELECT` over 5 columns returning 1, 20, 100, 1,000 and 10,000
rows through the binding on DuckDB, with rows built by an eval-generated dict-display lambda per column set
against plain `dict(zip(columns, row))`, alternately in one run.
Writes benchmarks/d1.json and benchmarks/d1.md. Figures are for this machine (see "machine" in the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from functools import lru_cache
from itertools import starmap
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_sim.bench.d1 import STATEMENTS, batch_insert, day_ordered_read, filled, oltp, overhead  # noqa: E402
from memory_sim.local.d1 import core as d1_core  # noqa: E402
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase  # noqa: E402

ROW_SIZES = (1, 20, 100, 1_000, 10_000)
ROW_TABLE = "CREATE TABLE t (a INTEGER, b TEXT, c DOUBLE, d BIGINT, e TEXT)"
ROW_READ = "SELECT a, b, c, d, e FROM t WHERE a < ?"


@lru_cache(maxsize=256)
def eval_row_maker(columns: tuple[str, ...]) -> Callable[..., dict[str, Any]]:
    """The binding's former maker: a lambda with a dict display, generated with eval per column set."""
    args = ", ".join(f"a{i}" for i in range(len(columns)))
    body = ", ".join(f"{name!r}: a{i}" for i, name in enumerate(columns))
    return eval(f"lambda {args}: {{{body}}}")  # noqa: S307 - built only from repr()'d names


def eval_rows(outcome: d1_core.Outcome) -> list[dict[str, Any]]:
    if not outcome.plain:
        return [{c: d1_core.shape_value(v) for c, v in zip(outcome.columns, row)} for row in outcome.rows]
    make = eval_row_maker(tuple(outcome.columns))
    rows = list(starmap(make, outcome.rows))
    if outcome.tail:
        rows.extend(map(make, *outcome.tail))
    return rows


def zip_rows(outcome: d1_core.Outcome) -> list[dict[str, Any]]:
    if not outcome.plain:
        return [{c: d1_core.shape_value(v) for c, v in zip(outcome.columns, row)} for row in outcome.rows]
    columns = outcome.columns
    rows = [dict(zip(columns, row)) for row in outcome.rows]
    if outcome.tail:
        rows.extend(dict(zip(columns, row)) for row in zip(*outcome.tail))
    return rows


ROW_BUILDERS = {"eval-built maker": eval_rows, "dict(zip(columns, row))": zip_rows}


def per_call_ms(call: Callable[[], object], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - started) * 1000.0 / calls


def row_building(seconds: float) -> list[dict[str, Any]]:
    """Whole `.all()` time per builder and size, call by call in pairs (ABBA order, so load drift hits both
    alike) for about `seconds` per size: medians of each, and the median of the paired ratios. Also the row
    building alone, on one engine result."""
    db = DuckDBDatabase()
    db.prepare(ROW_TABLE).run()
    insert = db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
    db.batch([insert.bind(i, f"memory text {i}", i / 7, i * 1000, "opinion") for i in range(max(ROW_SIZES))])
    shipped = d1_core._dict_rows  # what the binding uses now; restored below
    names = list(ROW_BUILDERS)
    out = []
    try:
        for n in ROW_SIZES:
            statement = db.prepare(ROW_READ).bind(n)
            assert len(statement.all().results) == n
            pairs = max(30, int(seconds / 2 / (per_call_ms(statement.all, 5) / 1000.0)))
            times: dict[str, list[float]] = {name: [] for name in names}
            for pair in range(pairs):
                for name in (names if pair % 2 == 0 else names[::-1]):
                    d1_core._dict_rows = ROW_BUILDERS[name]  # type: ignore[assignment]
                    times[name].append(per_call_ms(statement.all, 1))
            outcome, _ = db._execute(statement)  # one engine result, built into rows by each builder alone
            alone = {name: min(per_call_ms(lambda b=ROW_BUILDERS[name]: b(outcome), 20) for _ in range(5)) for name in names}
            evaluated, zipped = (statistics.median(times[name]) for name in names)
            ratio = statistics.median(z / e for e, z in zip(*(times[name] for name in names)))
            out.append({"rows": n, "pairs": pairs, "eval_maker_ms": round(evaluated, 4), "dict_zip_ms": round(zipped, 4),
                        "gain_of_eval_maker": round(ratio - 1.0, 3), "building_alone_eval_ms": round(alone[names[0]], 4),
                        "building_alone_zip_ms": round(alone[names[1]], 4)})
    finally:
        d1_core._dict_rows = shipped  # type: ignore[assignment]
        db.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    args = parser.parse_args()
    table_rows, npcs, batch_rows, repeat = (20_000, 10, 2_000, 5) if args.quick else (100_000, 10, 10_000, 15)
    db = filled(table_rows, npcs)
    result = {
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_1min": os.getloadavg()[0],  # the machine is shared; figures are noisy under load
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "quick": args.quick,
        "table_rows": table_rows,
        "oltp": oltp(db, 400 if args.quick else 2_000),
        "overhead": overhead(db, repeat),
        "batch_insert": {"rows": batch_rows, **batch_insert(batch_rows)},
        "day_ordered_read": day_ordered_read(db, repeat),
        "row_building": row_building(1.0 if args.quick else 4.0),
    }
    db.close()
    out = ROOT / "benchmarks"
    out.mkdir(exist_ok=True)
    (out / "d1.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "d1.md").write_text(markdown(result, repeat))
    print(markdown(result, repeat))


def markdown(result: dict[str, Any], repeat: int) -> str:
    o, b, r = result["overhead"], result["batch_insert"], result["day_ordered_read"]
    md = [
        f"# D1 stand-in benchmark ({os.cpu_count()} CPUs, {'quick' if result['quick'] else 'full'} run, "
        f"{result['table_rows']:,}-row memory table)",
        "",
        "| measure | D1 on DuckDB | raw DuckDB / sqlite3 | ratio | goal |",
        "|---|---|---|---|---|",
        *[f"| {k['kind']} (median of {k['calls']:,} calls; translated SQL run raw: {k['translated_ms']:.3f} ms) | "
          f"{k['d1_ms']:.3f} ms | {k['raw_ms']:.3f} ms | {k['ratio']:.2f}x | <= 1.3x |" for k in result["oltp"]],
        f"| per statement (mean of {len(STATEMENTS)} kinds) | {o['d1_ms_per_statement']:.3f} ms | {o['raw_ms_per_statement']:.3f} ms | {o['ratio']:.2f}x | <= 1.3x |",
        f"| {b['rows']:,} rows through batch() | {b['duckdb_rows_per_s']:,.0f} rows/s | sqlite3: {b['sqlite_rows_per_s']:,.0f} rows/s | | >= 10,000 rows/s |",
        f"| day-ordered read of one NPC ({r['rows']:,} rows) | {r['d1_ms']:.1f} ms | {r['raw_ms']:.1f} ms | {r['ratio']:.2f}x | <= 1.5x |",
        "",
        f"Shared machine ({os.cpu_count()} CPUs, 1-minute load {result['machine']['load_average_1min']:.1f}): D1 and raw"
        f" DuckDB are timed alternately, best of {repeat}; batch() is the best of 3 runs, binding included. Each OLTP"
        " kind is timed call by call, D1 and raw DuckDB (the statement as written, on the same connection) in"
        " alternation; the translated SQL run raw shows what the dialect's SQL costs apart from the binding.",
        "",
        "Row building: the whole `.all()` call (5 columns, DuckDB), p50 of single calls taken in pairs (ABBA order);",
        "gain = median of the paired time ratios; in brackets the building of the rows alone from one engine result:",
        "",
        "| rows | eval-built maker ms | dict(zip(columns, row)) ms | gain of the eval-built maker |",
        "|---|---|---|---|",
    ]
    md += [f"| {x['rows']:,} | {x['eval_maker_ms']} ({x['building_alone_eval_ms']}) | {x['dict_zip_ms']} "
           f"({x['building_alone_zip_ms']}) | {x['gain_of_eval_maker']:+.1%} |" for x in result["row_building"]]
    return "\n".join(md + [""])


if __name__ == "__main__":
    main()
