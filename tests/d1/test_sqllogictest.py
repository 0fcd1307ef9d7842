"""SQLite's sqllogictest format through the D1 binding (sqllogictest.py), a fixed slice in CI: our own records
(tests/d1/slt/*.test: IN lists and tables, empty IN, aggregates with DISTINCT, views, REPLACE, UPDATE, triggers,
compound SELECTs, NULLs, hashed answers) on raw sqlite3 (the control), the sqlite engine and the DuckDB engine.
Every record passes on every setup; what the DuckDB engine refuses is written `onlyif d1-duckdb` +
`statement error`, and must be a refusal naming the sqlite engine.

Where the public corpus is at hand (SQLITE_SLT_CORPUS, or /tmp/sltcorpus/test: its test/ folder), a small sample
of it runs too (scripts/bench_sqllogictest.py runs the broad one)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqllogictest import SETUPS, Tally, run_file

SLICE = sorted((Path(__file__).parent / "slt").glob("*.test"))
CORPUS = Path(os.environ.get("SQLITE_SLT_CORPUS", "/tmp/sltcorpus/test"))


def test_the_slice_covers_the_constructs() -> None:
    text = "\n".join(path.read_text("utf-8") for path in SLICE).upper()
    for construct in ("IN ()", " IN T2", "DISTINCT", "CREATE VIEW", "REPLACE INTO", "UPDATE", "TRIGGER", "UNION",
                      "INTERSECT", "EXCEPT", "IS NULL", "VALUES HASHING TO", "WITH RECURSIVE", "INDEXED BY"):
        assert construct in text, construct


@pytest.mark.parametrize("path", SLICE, ids=lambda p: p.name)
def test_every_record_passes_on_every_setup(path: Path) -> None:
    tallies: dict[str, Tally] = {}
    run_file(path.read_text("utf-8"), path.name, tallies)
    assert set(tallies) == set(SETUPS)
    for setup, tally in tallies.items():
        assert tally.total >= 20, (setup, tally.total)
        assert tally.outcomes["passed"] == tally.total, (setup, tally.examples)


def _sample(per_dir: int) -> list[Path]:
    by_dir: dict[Path, list[Path]] = {}
    for path in sorted(CORPUS.rglob("*.test")):
        by_dir.setdefault(path.parent, []).append(path)
    return [paths[0] for _, paths in sorted(by_dir.items())][: 40 * per_dir]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the sqllogictest corpus is not at hand (SQLITE_SLT_CORPUS)")
def test_a_sample_of_the_corpus() -> None:
    """The first file of every directory, 150 records each: the DuckDB engine answers otherwise no more often
    than raw sqlite3 does, refuses only in D1's words naming the sqlite engine, and passes 98%."""
    tallies: dict[str, Tally] = {}
    for path in _sample(1):
        run_file(path.read_text("utf-8", "replace"), str(path.relative_to(CORPUS)), tallies, 150)
    control, duck = tallies["raw sqlite3"], tallies["D1 duckdb engine"]
    assert duck.outcomes["differs"] <= control.outcomes["differs"], duck.examples.get("differs")
    assert all("sqlite engine" in why for why in duck.examples.get("refused", [])), duck.examples["refused"]
    assert duck.rate() >= 0.98, (duck.outcomes, duck.examples)
