"""The experiment's results: one DuckDB database, `experiment.duckdb`, in the experiment folder.

    experiment        key, value: the spec's name, its TOML text and what decides its results
    runs              one row per finished run: its id, variant, seed, target and every knob as a column
    daily_metrics     per run and sim day: counts, and recall quality means over the day's questions
    question_results  per run, sim day, question and method (plain | weighted): its scores
    measurements      per run and sim day, what the wall clock and the disk say (latency, sizes, seconds)
    failed_runs       runs that failed for good on Ray, with their error; a run that later finishes leaves it

The first four are the same, row for row, whenever the same spec runs (whatever --jobs); `measurements` is apart
because timings and file sizes are not. A run's rows are written in one transaction once it has finished, so
a run cut short leaves nothing behind here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory_sim.errors import ConfigError
from memory_sim.experiments.probes import COUNTS, METHODS, SCORES
from memory_sim.experiments.spec import RunConfig

DATABASE = "experiment.duckdb"
REPRODUCIBLE_TABLES = ("runs", "daily_metrics", "question_results")
TABLES = (*REPRODUCIBLE_TABLES, "measurements")
QUALITY = tuple(f"{m}_{s}" for m in METHODS for s in SCORES)
_TYPES = {bool: "BOOLEAN", int: "BIGINT", float: "DOUBLE", str: "TEXT"}


def knob_columns() -> list[tuple[str, str]]:
    return [(name, _TYPES[type(value)]) for name, value in RunConfig().flat().items()]


def columns() -> dict[str, list[tuple[str, str]]]:
    """Every table's columns and DuckDB types, in order (docs/experiments.md documents them)."""
    return {
        "runs": [("run_id", "TEXT"), ("position", "BIGINT"), ("variant", "TEXT"), ("seed", "BIGINT"),
                 ("target", "TEXT"), ("dataset", "TEXT"), ("conversations", "BIGINT"), *knob_columns()],
        "daily_metrics": [("run_id", "TEXT"), ("day", "BIGINT"), *((c, "BIGINT") for c in COUNTS),
                          ("questions", "BIGINT"), *((q, "DOUBLE") for q in QUALITY)],
        "question_results": [("run_id", "TEXT"), ("day", "BIGINT"), ("question_id", "TEXT"), ("npc_id", "TEXT"),
                             ("category", "TEXT"), ("method", "TEXT"), ("expected", "BIGINT"),
                             *((s, "DOUBLE") for s in SCORES)],
        "measurements": [("run_id", "TEXT"), ("day", "BIGINT"), ("d1_bytes", "BIGINT"), ("index_bytes", "BIGINT"),
                         *((f"{m}_p50_ms", "DOUBLE") for m in METHODS), ("day_s", "DOUBLE")],
    }


KEYS = {"runs": ("run_id",), "daily_metrics": ("run_id", "day"), "measurements": ("run_id", "day"),
        "question_results": ("run_id", "day", "question_id", "method")}


@contextmanager
def connect(folder: Path, read_only: bool = False) -> Iterator[Any]:
    import duckdb

    path = folder / DATABASE
    if read_only and not path.is_file():
        raise ConfigError(f"{folder}: no experiment here (no {DATABASE}); run `memory-sim experiment run` first")
    try:
        db = duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        raise ConfigError(f"{path}: cannot open the results database: {exc}") from exc
    try:
        if not read_only:
            create(db)
        yield db
    finally:
        db.close()


def create(db: Any) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS experiment (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    for table, cols in columns().items():
        body = ", ".join(f"{name} {kind}" for name, kind in cols)
        db.execute(f"CREATE TABLE IF NOT EXISTS {table} ({body}, PRIMARY KEY ({', '.join(KEYS[table])}))")
    db.execute("CREATE TABLE IF NOT EXISTS failed_runs (run_id TEXT PRIMARY KEY, error TEXT NOT NULL)")
    for name, kind in knob_columns():  # a results folder from before a knob existed gains its column
        db.execute(f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {name} {kind}")


def claim(db: Any, name: str, text: str, canonical: str) -> None:
    """Records the spec the folder holds results of; refuses a folder holding another spec's."""
    found = dict(db.execute("SELECT key, value FROM experiment").fetchall())
    if found and found.get("canonical") != canonical:
        raise ConfigError(f"the folder holds the results of another spec ({found.get('name')!r}): give another "
                          "--out, or remove the folder to start again")
    db.executemany("INSERT INTO experiment VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                   [("name", name), ("spec", text), ("canonical", canonical)])


def finished(db: Any) -> set[str]:
    return {row[0] for row in db.execute("SELECT run_id FROM runs").fetchall()}


def save_run(db: Any, rows: dict[str, list[dict[str, Any]]]) -> None:
    """One finished run's rows, all tables in one transaction (any earlier rows of the run replaced)."""
    run_id = rows["runs"][0]["run_id"]
    db.execute("BEGIN TRANSACTION")
    try:
        for table in TABLES:
            db.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
            names = [name for name, _ in columns()[table]]
            values = [[row.get(n) for n in names] for row in rows[table]]
            if values:
                db.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                               values)  # by name: an older folder's runs table has a later knob's column last
        db.execute("DELETE FROM failed_runs WHERE run_id = ?", [run_id])
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def save_failure(db: Any, run_id: str, error: str) -> None:
    """A run that failed for good: its error, in place of any earlier failure of it; it stays unfinished."""
    db.execute("INSERT INTO failed_runs VALUES (?, ?) ON CONFLICT (run_id) DO UPDATE SET error = excluded.error",
               [run_id, error])


def failures(db: Any) -> dict[str, str]:
    return dict(db.execute("SELECT run_id, error FROM failed_runs ORDER BY run_id").fetchall())


def table_rows(db: Any, table: str) -> list[tuple[Any, ...]]:
    """A table's rows in key order: what the reproducibility check compares."""
    return list(db.execute(f"SELECT * FROM {table} ORDER BY {', '.join(KEYS[table])}").fetchall())


def records(db: Any, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    cursor = db.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def spec_of(db: Any) -> dict[str, str]:
    return dict(db.execute("SELECT key, value FROM experiment").fetchall())


def export(folder: Path, fmt: str, to: Path) -> list[Path]:
    """Every table as `<table>.parquet` or `<table>.csv` (with a header) in `to`, by DuckDB's own COPY."""
    if fmt not in ("parquet", "csv"):
        raise ConfigError(f"export format must be parquet or csv, got {fmt!r}")
    to.mkdir(parents=True, exist_ok=True)
    written = []
    with connect(folder, read_only=True) as db:
        for table in (*TABLES, "experiment"):
            path = to / f"{table}.{fmt}"
            options = "(FORMAT parquet)" if fmt == "parquet" else "(FORMAT csv, HEADER)"
            quoted = "'" + str(path).replace("'", "''") + "'"
            db.execute(f"COPY (SELECT * FROM {table}) TO {quoted} {options}")
            written.append(path)
    return written
