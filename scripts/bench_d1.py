"""D1 stand-in benchmarks (issue 3): our DuckDB D1 against raw DuckDB running the already-translated SQL.

    .venv/bin/python scripts/bench_d1.py [--quick]

Writes benchmarks/d1.json and benchmarks/d1.md. Figures are for this machine (see "machine" in the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from memory_sim.local.d1_duckdb import DuckDBDatabase
from memory_sim.local.d1_sqlite import SqliteDatabase
from memory_sim.local.sqlite_dialect import translate
from memory_sim.local.sqlite_values import param_class

TABLE = (
    "CREATE TABLE short_term_memories (id TEXT PRIMARY KEY, npc_id TEXT NOT NULL, content TEXT, importance REAL,"
    " day INTEGER, hour INTEGER, type TEXT, about TEXT, created_at TEXT DEFAULT CURRENT_TIMESTAMP)"
)
INSERT = "INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type) VALUES (?, ?, ?, ?, ?, ?, ?)"
READ = "SELECT id, content, importance, day, hour FROM short_term_memories WHERE npc_id = ? ORDER BY day, hour"
STATEMENTS = [
    ("SELECT count(*) FROM short_term_memories WHERE npc_id = ?", ("npc3",)),
    ("SELECT id, content FROM short_term_memories WHERE id = ?", ("m42",)),
    ("SELECT npc_id, count(*), max(importance) FROM short_term_memories WHERE day < ? GROUP BY npc_id", (3,)),
    ("SELECT id FROM short_term_memories WHERE content LIKE ? ORDER BY day LIMIT 5", ("%FENCE 4%",)),
    ("UPDATE short_term_memories SET importance = importance WHERE id = ?", ("m7",)),
    ("INSERT OR IGNORE INTO short_term_memories (id, npc_id, content, day) VALUES (?, ?, ?, ?)", ("m1", "x", "y", 1)),
]


def rows(n: int, npcs: int) -> list[tuple[Any, ...]]:
    return [(f"m{i}", f"npc{i % npcs}", f"memory about the fence {i}", (i % 100) / 100, i // 50, i % 24, "obs") for i in range(n)]


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def paired(ours: Callable[[], object], raw: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best times of two functions measured alternately, so a load spike on this shared machine hits both."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        a.append(best(ours, 1))
        b.append(best(raw, 1))
    return min(a), min(b)


def filled(n: int, npcs: int) -> DuckDBDatabase:
    db = DuckDBDatabase()
    db.prepare(TABLE).run()
    statement = db.prepare(INSERT)
    data = rows(n, npcs)
    for start in range(0, n, 5000):
        db.batch([statement.bind(*r) for r in data[start : start + 5000]])
    return db


def raw_sql(db: DuckDBDatabase, sql: str, params: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """The DuckDB SQL the engine runs for `sql` bound to `params`, and the values it binds."""
    engine = db._engine  # type: ignore[attr-defined]
    translation = translate(sql, engine._schema, tuple(param_class(v) for v in params))
    return translation.sql, [engine._extra(name, translation, params) for name in translation.extras]


def overhead(db: DuckDBDatabase, repeat: int) -> dict[str, float]:
    raw = db._engine._conn  # type: ignore[attr-defined]
    ours = raws = 0.0
    for sql, params in STATEMENTS:
        translated, values = raw_sql(db, sql, params)
        mine, theirs = paired(
            lambda: db.prepare(sql).bind(*params).all(), lambda: raw.execute(translated, values).fetchall(), repeat
        )
        ours, raws = ours + mine, raws + theirs
    n = len(STATEMENTS)
    return {"d1_ms_per_statement": ours / n * 1000, "raw_ms_per_statement": raws / n * 1000, "ratio": ours / raws}


def batch_insert(n: int, repeat: int = 3) -> dict[str, float]:
    """Best of `repeat` runs, each into a fresh database; binding is timed too (it is part of the caller's cost)."""
    out: dict[str, float] = {}
    data = rows(n, 10)
    for name, cls in (("duckdb", DuckDBDatabase), ("sqlite", SqliteDatabase)):
        seconds = []
        for _ in range(repeat):
            db = cls()
            db.prepare(TABLE).run()
            statement = db.prepare(INSERT)
            started = time.perf_counter()
            db.batch([statement.bind(*r) for r in data])
            seconds.append(time.perf_counter() - started)
            db.close()
        out[f"{name}_rows_per_s"] = n / min(seconds)
    return out


def day_ordered_read(db: DuckDBDatabase, repeat: int) -> dict[str, float]:
    raw = db._engine._conn  # type: ignore[attr-defined]
    translated, values = raw_sql(db, READ, ("npc3",))
    ours, raws = paired(lambda: db.prepare(READ).bind("npc3").all(), lambda: raw.execute(translated, values).fetchall(), repeat)
    count = len(db.prepare(READ).bind("npc3").all().results)
    return {"rows": count, "d1_ms": ours * 1000, "raw_ms": raws * 1000, "ratio": ours / raws}


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
        "overhead": overhead(db, repeat),
        "batch_insert": {"rows": batch_rows, **batch_insert(batch_rows)},
        "day_ordered_read": day_ordered_read(db, repeat),
    }
    db.close()
    out = Path(__file__).resolve().parent.parent / "benchmarks"
    out.mkdir(exist_ok=True)
    (out / "d1.json").write_text(json.dumps(result, indent=2) + "\n")
    o, b, r = result["overhead"], result["batch_insert"], result["day_ordered_read"]
    md = [
        f"# D1 stand-in benchmark ({os.cpu_count()} CPUs, {'quick' if args.quick else 'full'} run, {table_rows:,}-row memory table)",
        "",
        "| measure | D1 on DuckDB | raw DuckDB / sqlite3 | ratio | goal |",
        "|---|---|---|---|---|",
        f"| per statement (mean of {len(STATEMENTS)} kinds) | {o['d1_ms_per_statement']:.3f} ms | {o['raw_ms_per_statement']:.3f} ms | {o['ratio']:.2f}x | <= 1.3x |",
        f"| {b['rows']:,} rows through batch() | {b['duckdb_rows_per_s']:,.0f} rows/s | sqlite3: {b['sqlite_rows_per_s']:,.0f} rows/s | | >= 10,000 rows/s |",
        f"| day-ordered read of one NPC ({r['rows']:,} rows) | {r['d1_ms']:.1f} ms | {r['raw_ms']:.1f} ms | {r['ratio']:.2f}x | <= 1.5x |",
        "",
        f"Shared machine ({os.cpu_count()} CPUs, 1-minute load {result['machine']['load_average_1min']:.1f}): D1 and raw"
        f" DuckDB are timed alternately, best of {repeat}; batch() is the best of 3 runs, binding included.",
        "",
    ]
    (out / "d1.md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
