"""D1 on DuckDB against raw DuckDB running the already-translated SQL (`memory-sim bench`'s d1 section;
scripts/bench_d1.py writes it on its own): per-statement overhead, batch inserts, a day-ordered read.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any, cast

from memory_sim.bindings.d1 import D1Value
from memory_sim.local.d1.dialect.statements import translate
from memory_sim.local.d1.dialect.values import param_class
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase, DuckDBEngine
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

TABLE = (
    "CREATE TABLE short_term_memories (id TEXT PRIMARY KEY, npc_id TEXT NOT NULL, content TEXT, importance REAL,"
    " day INTEGER, hour INTEGER, type TEXT, about TEXT, created_at TEXT DEFAULT CURRENT_TIMESTAMP)"
)
INSERT = (
    "INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
READ = "SELECT id, content, importance, day, hour FROM short_term_memories WHERE npc_id = ? ORDER BY day, hour"
STATEMENTS: list[tuple[str, tuple[D1Value, ...]]] = [
    ("SELECT count(*) FROM short_term_memories WHERE npc_id = ?", ("npc3",)),
    ("SELECT id, content FROM short_term_memories WHERE id = ?", ("m42",)),
    ("SELECT npc_id, count(*), max(importance) FROM short_term_memories WHERE day < ? GROUP BY npc_id", (3,)),
    ("SELECT id FROM short_term_memories WHERE content LIKE ? ORDER BY day LIMIT 5", ("%FENCE 4%",)),
    ("UPDATE short_term_memories SET importance = importance WHERE id = ?", ("m7",)),
    ("INSERT OR IGNORE INTO short_term_memories (id, npc_id, content, day) VALUES (?, ?, ?, ?)", ("m1", "x", "y", 1)),
]


def rows(n: int, npcs: int) -> list[tuple[Any, ...]]:
    return [
        (f"m{i}", f"npc{i % npcs}", f"memory about the fence {i}", (i % 100) / 100, i // 50, i % 24, "obs")
        for i in range(n)
    ]


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


def raw_sql(db: DuckDBDatabase, sql: str, params: tuple[D1Value, ...]) -> tuple[str, list[Any]]:
    """The DuckDB SQL the engine runs for `sql` bound to `params`, and the values it binds ($1, $2, ...: the
    user's values, or views of them such as a text's numeric value)."""
    engine = cast(DuckDBEngine, db._engine)
    translation = translate(sql, engine._schema, tuple(param_class(v) for v in params))
    return translation.sql, [engine._extra(name, translation, params) for name in translation.extras]


def overhead(db: DuckDBDatabase, repeat: int) -> dict[str, float]:
    raw = db._engine._conn  # type: ignore[attr-defined]
    ours = raws = 0.0
    for sql, params in STATEMENTS:
        translated, values = raw_sql(db, sql, params)
        mine, theirs = paired(  # the lambdas run inside paired(), in this iteration
            lambda: db.prepare(sql).bind(*params).all(),  # noqa: B023
            lambda: raw.execute(translated, values).fetchall(),  # noqa: B023
            repeat,
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
    ours, raws = paired(
        lambda: db.prepare(READ).bind("npc3").all(), lambda: raw.execute(translated, values).fetchall(), repeat
    )
    count = len(db.prepare(READ).bind("npc3").all().results)
    return {"rows": count, "d1_ms": ours * 1000, "raw_ms": raws * 1000, "ratio": ours / raws}


# OLTP statement kinds, each timed on its own: (kind, SQL, the values of call i; `tag` keeps inserted ids apart).
OLTP: list[tuple[str, str, Callable[[int, str], tuple[D1Value, ...]]]] = [
    ("point select by key", "SELECT id, content, importance, day, hour FROM short_term_memories WHERE id = ?",
     lambda i, tag: (f"m{i * 7919 % 1000}",)),
    ("single-row insert", INSERT,
     lambda i, tag: (f"{tag}{i}", f"npc{i % 10}", f"a new memory {i}", 0.5, 9_999, i % 24, "obs")),
    ("single-row update", "UPDATE short_term_memories SET importance = ? WHERE id = ?",
     lambda i, tag: ((i % 100) / 100, f"m{i * 7919 % 1000}")),
    ("an NPC's latest 20 by day",
     "SELECT id, content, importance, day, hour FROM short_term_memories WHERE npc_id = ? "
     "ORDER BY day DESC, hour DESC LIMIT 20",
     lambda i, tag: (f"npc{i % 10}",)),
]


def oltp(db: DuckDBDatabase, calls: int) -> list[dict[str, Any]]:
    """Per statement kind: the median call through the D1 binding (`.all()`/`.run()`), raw DuckDB running the
    statement as written on the same connection, and raw DuckDB running the SQL the dialect translated it to;
    calls alternate (ABBA) so load drift hits all alike."""
    raw = db._engine._conn  # type: ignore[attr-defined]
    out = []
    for kind, sql, values in OLTP:
        translated, _ = raw_sql(db, sql, values(0, "t"))
        times: dict[str, list[float]] = {"d1": [], "raw": [], "translated": []}
        runs: dict[str, Callable[[int], object]] = {
            "d1": lambda i: db.prepare(sql).bind(*values(i, "d")).all(),  # noqa: B023 - run within this iteration
            "raw": lambda i: raw.execute(sql, list(values(i, "r"))).fetchall(),  # noqa: B023
            "translated": lambda i: raw.execute(translated, raw_sql(db, sql, values(i, "x"))[1]).fetchall(),  # noqa: B023
        }
        order = ["d1", "raw", "translated"]
        for i in range(calls):
            for name in order if i % 2 == 0 else order[::-1]:
                started = time.perf_counter()
                runs[name](i)
                times[name].append(time.perf_counter() - started)
        medians = {name: statistics.median(t) * 1000 for name, t in times.items()}
        out.append({"kind": kind, "calls": calls, "d1_ms": round(medians["d1"], 4),
                    "raw_ms": round(medians["raw"], 4), "translated_ms": round(medians["translated"], 4),
                    "ratio": round(medians["d1"] / medians["raw"], 2)})
    return out
