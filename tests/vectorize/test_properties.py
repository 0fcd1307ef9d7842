"""Generated filters and data: Chroma's planner returns exactly the ids the pure reference evaluator accepts."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_sim.bindings.filters import indexed_values, matches, parse_filter
from memory_sim.bindings.vectorize import Vector
from memory_sim.local.vectorize.chroma import ChromaAccount
from memory_sim.local.vectorize.oracle import OracleAccount

INDEXES = {"npcId": "string", "day": "number", "flag": "boolean", "place.room": "string"}
names = st.sampled_from(["anna", "bob", "cara", "dan", "é"])
days = st.integers(min_value=0, max_value=5)
scalars = st.one_of(names, days, st.booleans(), st.none())


@st.composite
def metadata(draw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["npcId"] = draw(st.one_of(names, days))  # sometimes the wrong type: not indexed
    if draw(st.booleans()):
        out["day"] = draw(st.one_of(days, st.floats(0, 5, allow_nan=False)))
    if draw(st.booleans()):
        out["flag"] = draw(st.booleans())
    if draw(st.booleans()):
        out["place"] = {"room": draw(names)}
    return out


def condition(key: str) -> st.SearchStrategy[Any]:
    ranged = names if key in ("npcId", "place.room") else days
    lower, upper = st.sampled_from(["$gt", "$gte"]), st.sampled_from(["$lt", "$lte"])
    return st.one_of(
        scalars,
        st.builds(lambda op, v: {op: v}, st.sampled_from(["$eq", "$ne"]), scalars),
        st.builds(lambda op, v: {op: v}, st.sampled_from(["$in", "$nin"]), st.lists(scalars, max_size=3)),
        st.builds(lambda op, v: {op: v}, st.one_of(lower, upper), ranged),
        st.builds(lambda lo, a, hi, b: {lo: a, hi: b}, lower, ranged, upper, ranged),
    )


filters = st.dictionaries(st.sampled_from(list(INDEXES)), st.just(None), min_size=1, max_size=3).flatmap(
    lambda keys: st.fixed_dictionaries({k: condition(k) for k in keys})
)


@pytest.fixture(scope="module")
def chroma_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    account = ChromaAccount(tmp_path_factory.mktemp("prop") / "chroma")
    account.create_index("prop", 4, "euclidean")
    index = account.index("prop")
    for prop, kind in INDEXES.items():
        index.create_metadata_index(prop, kind)
    yield index
    account.close()


_counter = itertools.count()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(metadata(), min_size=1, max_size=25), filter=filters, namespace=st.sampled_from([None, "a"]))
def test_chroma_filter_ids_equal_reference_evaluator(chroma_index: Any, data: list[dict[str, Any]], filter: dict[str, Any], namespace: Any) -> None:
    batch = [Vector(f"p{next(_counter)}", [float(i), 0.0, 1.0, 0.0], md, "a" if i % 2 else None) for i, md in enumerate(data)]
    chroma_index.delete_by_ids(chroma_index.list_vectors(count=1000).ids)
    chroma_index.upsert(batch)
    conditions = parse_filter(filter)
    expected = {
        v.id for v in batch
        if (namespace is None or v.namespace == namespace) and matches(conditions, indexed_values(v.metadata, INDEXES))
    }
    got = chroma_index.query([0.0] * 4, top_k=100, filter=filter, namespace=namespace).matches
    assert {m.id for m in got} == expected
    oracle = OracleAccount()
    oracle.create_index("o", 4, "euclidean")
    for prop, kind in INDEXES.items():
        oracle.index("o").create_metadata_index(prop, kind)
    oracle.index("o").upsert(batch)
    assert [m.id for m in got] == [m.id for m in oracle.index("o").query([0.0] * 4, top_k=100, filter=filter, namespace=namespace).matches]


def test_reference_evaluator_semantics() -> None:
    conditions = parse_filter({"npcId": {"$ne": "anna"}, "day": {"$gte": 1, "$lt": 3}})
    assert matches(conditions, {"day": 2.0})  # missing npcId passes $ne
    assert not matches(conditions, {"npcId": "anna", "day": 2.0})
    assert not matches(conditions, {"day": 3.0})
    assert not matches(parse_filter({"day": 1}), {"day": True})  # a boolean is not the number 1
    assert matches(parse_filter({"day": {"$eq": None}}), {})
