"""The demo's memories as D1 holds them, for comparing two versions of the code on the same seed.

    python scripts/demo_memories.py OUT.json [--days 14] [--npcs 8] [--seed 7] [--engine duckdb|sqlite]

Runs `memory-sim demo` in a fresh data folder (the code on PYTHONPATH), then writes every memory's row (ids,
texts, importance, decay factor and day, index state and time, state keys, remember order) and the counters,
sorted by id. Two files written by two versions compare equal when the change left the demo's memories as they
were: `python scripts/demo_memories.py --compare A.json B.json`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

COLUMNS = (
    "id, npc_id, content, importance, day, hour, type, about, kind, decay_factor, decayed_day, index_state,"
    " indexed_at, state_key, key_confidence, key_source, seq, recalled_hour"
)


def memories(db: Any) -> dict[str, Any]:
    """Every memory row and the counters (how many were decayed, pruned, re-embedded...), JSON-ready."""
    rows = db.prepare(f"SELECT {COLUMNS} FROM short_term_memories ORDER BY id").all().results
    counters = db.prepare("SELECT name, value FROM counters ORDER BY name").all().results
    return {"memories": [dict(r) for r in rows], "counters": {r["name"]: r["value"] for r in counters}}


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """What differs between two dumps, column by column (empty: equal)."""
    found = []
    rows_a = {r["id"]: r for r in a["memories"]}
    rows_b = {r["id"]: r for r in b["memories"]}
    if rows_a.keys() != rows_b.keys():
        found.append(f"ids: {len(rows_a.keys() - rows_b.keys())} only in the first, "
                     f"{len(rows_b.keys() - rows_a.keys())} only in the second")
    for column in COLUMNS.split(", "):
        changed = [i for i in rows_a.keys() & rows_b.keys() if rows_a[i][column] != rows_b[i][column]]
        if changed:
            found.append(f"{column}: {len(changed)} rows differ, e.g. {sorted(changed)[0]}")
    if a["counters"] != b["counters"]:
        found.append(f"counters: {a['counters']} != {b['counters']}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, nargs="?")
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--npcs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--engine", choices=("duckdb", "sqlite"), default="duckdb")
    parser.add_argument("--compare", type=Path, nargs=2)
    args = parser.parse_args()
    if args.compare:
        found = differences(*(json.loads(p.read_text("utf-8")) for p in args.compare))
        print("\n".join(found) or f"equal: {len(json.loads(args.compare[0].read_text('utf-8'))['memories'])} memories")
        return 1 if found else 0
    from memory_sim.builder import local_d1_account
    from memory_sim.cli import main as cli

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "demo"
        code = cli(["--d1-engine", args.engine, "--data", str(folder), "demo", "--days", str(args.days),
                    "--npcs", str(args.npcs), "--seed", str(args.seed), "--json"])
        if code != 0:
            return code
        account = local_d1_account(folder, args.engine)
        db = account.get("memory")
        try:
            dump = memories(db)
        finally:
            getattr(db, "close", lambda: None)()
    args.out.write_text(json.dumps(dump, indent=0, sort_keys=True) + "\n", "utf-8")
    print(f"{len(dump['memories'])} memories -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
