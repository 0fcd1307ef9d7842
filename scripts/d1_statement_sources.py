"""Where the demo's D1 statements come from: `memory-sim demo` run in this process with every statement and
round trip tallied by the memory-system function that asked for it and by the statement's shape.

    python scripts/d1_statement_sources.py [--days 14] [--npcs 8] [--engine duckdb|sqlite] [--json OUT]

Prints one line per (caller, statement shape): statements and round trips, then the totals per memory.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory_sim.bench import d1_count
from memory_sim.bindings.d1 import D1PreparedStatement, D1Result

_SKIP = ("memory_sim/bench/", "memory_sim/memory/ledger/store.py", "memory_sim/local/", "memory_sim/bindings/")


def _caller() -> str:
    """The innermost memory-system (or sim) function above the ledger and the binding."""
    for frame in reversed(traceback.extract_stack()[:-3]):
        name = frame.filename.replace("\\", "/")
        if "memory_sim/" in name and not any(s in name for s in _SKIP):
            return f"{name.split('memory_sim/', 1)[1].removesuffix('.py')}:{frame.name}"
    return "?"


def _shape(sql: str) -> str:
    words = re.sub(r"\s+", " ", sql.strip()).split(" ")
    head = " ".join(words[:4])
    return re.sub(r"\(.*", "", head)[:60]


class TallyingD1(d1_count.CountingD1):
    """CountingD1 that also tallies each statement by (caller, shape) and each round trip by caller."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.by_source: Counter[tuple[str, str]] = Counter()
        self.trips_by_caller: Counter[str] = Counter()
        self.seconds_by_caller: Counter[str] = Counter()  # wall seconds in the call, per caller (threads overlap)
        self._sql: dict[int, str] = {}

    def prepare(self, sql: str) -> D1PreparedStatement:
        prepared = super().prepare(sql)
        return _Tallied(self, prepared, sql)  # type: ignore[return-value]

    def batch(self, statements: Sequence[Any]) -> list[D1Result]:
        caller = _caller()
        self.trips_by_caller[caller] += 1
        for s in statements:
            self.by_source[(caller, _shape(s.sql) if isinstance(s, _Tallied) else "?")] += 1
        inner = [s.counted if isinstance(s, _Tallied) else s for s in statements]
        started = time.perf_counter()
        try:
            return super().batch(inner)
        finally:
            self.seconds_by_caller[caller] += time.perf_counter() - started


class _Tallied:
    def __init__(self, owner: TallyingD1, counted: Any, sql: str) -> None:
        self.owner, self.counted, self.sql = owner, counted, sql

    def bind(self, *values: Any) -> _Tallied:
        return _Tallied(self.owner, self.counted.bind(*values), self.sql)

    @contextmanager
    def _one(self) -> Iterator[None]:
        caller = _caller()
        self.owner.trips_by_caller[caller] += 1
        self.owner.by_source[(caller, _shape(self.sql))] += 1
        started = time.perf_counter()
        try:
            yield
        finally:
            self.owner.seconds_by_caller[caller] += time.perf_counter() - started

    def first(self, column: str | None = None) -> Any:
        with self._one():
            return self.counted.first(column)

    def all(self) -> D1Result:
        with self._one():
            return self.counted.all()

    def run(self) -> D1Result:
        with self._one():
            return self.counted.run()

    def raw(self, column_names: bool = False) -> list[list[Any]]:
        with self._one():
            return self.counted.raw(column_names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--npcs", type=int, default=8)
    parser.add_argument("--engine", choices=("duckdb", "sqlite"), default=None)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    made: list[TallyingD1] = []

    def tallying(inner: Any) -> TallyingD1:
        made.append(TallyingD1(inner))
        return made[-1]

    d1_count.CountingD1 = tallying  # type: ignore[misc,assignment]  # what `demo --timings` wraps D1 in
    from memory_sim.cli import main as cli

    with tempfile.TemporaryDirectory() as tmp:
        extra = ["--d1-engine", args.engine] if args.engine else []
        code = cli([*extra, "--data", str(Path(tmp) / "demo"), "demo", "--days", str(args.days), "--npcs",
                    str(args.npcs), "--timings"])
    if code != 0 or not made:
        return code or 1
    db = made[0]
    rows = sorted(db.by_source.items(), key=lambda kv: -kv[1])
    for (caller, shape), n in rows:
        print(f"{n:6d}  {caller:55s}  {shape}", file=sys.stderr)
    print("round trips and seconds by caller:", file=sys.stderr)
    for caller, n in db.trips_by_caller.most_common():
        print(f"{n:6d}  {db.seconds_by_caller[caller]:7.3f} s  {caller}", file=sys.stderr)
    print(f"total {db.statements} statements, {db.round_trips} round trips, D1 busy {db.busy_seconds:.2f} s",
          file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({
            "statements": db.statements, "round_trips": db.round_trips, "d1_s": db.busy_seconds,
            "by_source": [[c, s, n] for (c, s), n in rows], "trips_by_caller": dict(db.trips_by_caller),
            "seconds_by_caller": {c: round(v, 4) for c, v in db.seconds_by_caller.items()},
        }, indent=1) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
