"""The differential fuzzer in CI (differential.py): hypothesis-generated queries and writes over a schema of mixed
affinities run on sqlite3 and on the DuckDB engine, with a fixed seed and budget; the test fails on any pair that
differs and is not a refusal. `scripts/fuzz_d1.py` runs it longer and reports the figures (docs/d1.md)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from differential import Tally, apply_writes, new_pair, reads, run, writes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

READS, WRITES = 1200, 120  # about 30 s on two cores
FIXED = {"deadline": None, "derandomize": True, "database": None, "suppress_health_check": list(HealthCheck)}


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[Any, Any]]:
    both = new_pair()
    yield both
    for db in both:
        db.close()


TALLY = Tally()  # a module global, not a module fixture: xdist may interleave other files' tests on this worker,
# and pytest tears a module fixture down (and makes a new one) when the worker moves between files


@pytest.fixture
def tally() -> Tally:
    return TALLY


@settings(max_examples=READS, **FIXED)
@given(data=st.data())
def test_generated_queries_agree_or_are_refused(pair: tuple[Any, Any], tally: Tally, data: st.DataObject) -> None:
    statement = data.draw(reads(), label="query")
    why = tally.record(statement, run(pair[0], statement), run(pair[1], statement))
    assert why is None, f"{statement.sql} {statement.params!r}: {why}"


@settings(max_examples=WRITES, **FIXED)
@given(data=st.data())
def test_generated_writes_agree_or_are_refused(tally: Tally, data: st.DataObject) -> None:
    statements = data.draw(writes(), label="writes")
    fresh = new_pair()
    try:
        why = apply_writes(fresh, statements, tally)
    finally:
        for db in fresh:
            db.close()
    assert why is None, why


def test_most_generated_statements_run(pair: tuple[Any, Any], tally: Tally) -> None:
    """The fuzzer must exercise the engine, not its refusals: most statements run and agree."""
    if tally.ran < READS:  # pytest-xdist ran the generated queries on another worker: run them here, same examples
        test_generated_queries_agree_or_are_refused(pair=pair, tally=tally)
    assert tally.ran >= READS, tally.ran
    assert tally.agreed_rows + tally.agreed_errors >= 0.75 * tally.ran, (tally.ran, tally.refused.most_common(5))
    assert not tally.differences
