"""What a commit costs on a database file, by journal mode and synchronous level, side by side in one run.

Raw sqlite3 in the three modes (the rollback journal with FULL was the sqlite engine's default before WAL), then the
D1 sqlite engine in its two settings (`d1_sqlite_synchronous` normal and full): `--commits` one-row INSERTs, each
its own transaction (as D1 runs every statement), then as many two-statement batches.

    nice -n 19 .venv/bin/python scripts/bench_sqlite_durability.py --out benchmarks/sqlite_durability.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import tempfile
import time
from pathlib import Path

from memory_sim.builder import local_d1_account

RAW_MODES = (("DELETE", "FULL"), ("WAL", "FULL"), ("WAL", "NORMAL"))


def raw(folder: Path, journal: str, sync: str, commits: int) -> float:
    path = folder / f"raw-{journal}-{sync}.sqlite"
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.execute(f"PRAGMA synchronous = {sync}")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT)")
    started = time.perf_counter()
    for i in range(commits):
        conn.execute("BEGIN")
        conn.execute("INSERT INTO t (note) VALUES (?)", (f"n{i}",))
        conn.execute("COMMIT")
    for i in range(commits):
        conn.execute("BEGIN")
        conn.execute("INSERT INTO t (note) VALUES (?)", (f"b{i}",))
        conn.execute("UPDATE t SET note = note || '!' WHERE id = last_insert_rowid()")
        conn.execute("COMMIT")
    seconds = time.perf_counter() - started
    conn.close()
    return seconds


def engine(folder: Path, synchronous: str, commits: int) -> float:
    db = local_d1_account(folder / synchronous, "sqlite", sqlite_synchronous=synchronous).create("bench")
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT)")
    insert = db.prepare("INSERT INTO t (note) VALUES (?)")
    update = db.prepare("UPDATE t SET note = note || '!' WHERE id = last_insert_rowid()")
    started = time.perf_counter()
    for i in range(commits):
        insert.bind(f"n{i}").run()
    for i in range(commits):
        db.batch([insert.bind(f"b{i}"), update])
    seconds = time.perf_counter() - started
    db.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=500)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/sqlite_durability.md"))
    parser.add_argument("--dir", type=Path, default=None, help="where the files go (default: a temporary folder)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(tmp)
        for journal, sync in RAW_MODES:
            seconds = raw(folder, journal, sync, args.commits)
            rows.append((f"raw sqlite3, journal {journal}, synchronous {sync}", seconds))
        for synchronous in ("normal", "full"):
            rows.append((f"D1 sqlite engine, d1_sqlite_synchronous={synchronous} (WAL)",
                         engine(folder, synchronous, args.commits)))
    load = os.getloadavg()
    lines = [
        "# What a commit costs on the sqlite engine, by journal mode and synchronous level",
        "",
        f"{args.commits} one-row INSERTs (each its own transaction) then {args.commits} two-statement batches, on "
        f"{platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}, load average "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, files in {(args.dir or Path(tempfile.gettempdir())).resolve()}. "
        "Written by scripts/bench_sqlite_durability.py.",
        "",
        "| setup | seconds | ms per commit |",
        "|---|---|---|",
        *(f"| {name} | {seconds:.2f} | {1000 * seconds / (2 * args.commits):.2f} |" for name, seconds in rows),
        "",
    ]
    args.out.write_text("\n".join(lines), "utf-8")
    args.out.with_suffix(".json").write_text(json.dumps({"commits": args.commits, "load": load,
                                                         "seconds": dict(rows)}, indent=1) + "\n", "utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
