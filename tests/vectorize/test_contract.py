"""The Vectorize contract (contract §1, §2, §6), run against the oracle, embedded Chroma and a Chroma server."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from memory_sim.bindings.vectorize import Vector, VectorizeAccount, VectorizeIndex
from memory_sim.errors import VectorizeError, VectorizeInputError

from .conftest import FakeClock
from .helpers import DIMS, brute_force, memories_index, vectors

Make = Callable[..., Any]


def test_backends_implement_the_protocols(make_account: Make) -> None:
    account = make_account()
    assert isinstance(account, VectorizeAccount)
    account.create_index("idx", DIMS, "cosine")
    assert isinstance(account.index("idx"), VectorizeIndex)


def test_index_management_round_trips_description(make_account: Make) -> None:
    account = make_account()
    created = account.create_index("memories", DIMS, "euclidean", "model=all-MiniLM-L6-v2")
    assert created.to_json()["config"] == {"dimensions": DIMS, "metric": "euclidean"}
    assert account.get_index("memories").description == "model=all-MiniLM-L6-v2"
    assert [d.name for d in account.list_indexes()] == ["memories"]
    with pytest.raises(VectorizeInputError) as duplicate:  # production's code and words
        account.create_index("memories", DIMS, "cosine")
    assert str(duplicate.value) == 'INDEX_CREATE_ERROR (code = 3002): vectorize.index.duplicate_name - Index name "memories"'
    account.delete_index("memories")
    with pytest.raises(VectorizeError) as missing:
        account.index("memories")
    assert str(missing.value) == 'INDEX_GET_ERROR (code = 3000): vectorize.index.not_found - Index name "memories"'
    assert missing.value.code == 3000 and duplicate.value.code == 3002
    assert account.list_indexes() == []


@pytest.mark.parametrize(
    "name, dims, metric",
    [("Bad_Name", 8, "cosine"), ("ok", 0, "cosine"), ("ok", 1537, "cosine"), ("ok", 8, "manhattan"), ("x" * 65, 8, "cosine")],
)
def test_bad_index_config_is_rejected(make_account: Make, name: str, dims: int, metric: str) -> None:
    account = make_account()
    with pytest.raises(VectorizeInputError, match="^INDEX_CREATE_ERROR"):
        account.create_index(name, dims, metric)
    assert account.list_indexes() == []


def test_insert_keeps_first_and_upsert_replaces_whole_record(make_account: Make) -> None:
    index = memories_index(make_account())
    first = Vector("a", [1.0] * DIMS, {"npcId": "margaret", "day": 1}, "village")
    index.insert([first])
    index.insert([Vector("a", [2.0] * DIMS, {"npcId": "tom"})])
    assert index.get_by_ids(["a"])[0].metadata == {"npcId": "margaret", "day": 1}
    index.upsert([Vector("a", [3.0] * DIMS, {"npcId": "tom"})])
    (got,) = index.get_by_ids(["a"])
    assert got.values == [3.0] * DIMS and got.metadata == {"npcId": "tom"} and got.namespace is None


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dot-product"])
def test_scores_and_order_per_metric(make_account: Make, metric: str) -> None:
    account = make_account()
    account.create_index("idx", DIMS, metric)
    index = account.index("idx")
    data = vectors(40, seed=1)
    index.upsert(data)
    query = vectors(1, seed=99)[0].values
    result = index.query(query, top_k=7)
    assert [m.id for m in result.matches] == brute_force(data, query, metric, 7)
    scores = [m.score for m in result.matches]
    assert scores == sorted(scores, reverse=(metric == "cosine"))
    x = np.asarray(data[[v.id for v in data].index(result.matches[0].id)].values, dtype=np.float64)
    q = np.asarray(query, dtype=np.float32).astype(np.float64)
    expected = {"cosine": x @ q / np.linalg.norm(x) / np.linalg.norm(q), "euclidean": np.linalg.norm(x - q), "dot-product": -(x @ q)}
    assert scores[0] == pytest.approx(expected[metric], rel=1e-5)
    assert result.count == 7 and len(index.query(query).matches) == 5


def test_values_are_stored_as_float32(make_account: Make) -> None:
    index = memories_index(make_account())
    index.upsert([Vector("a", [0.1] * DIMS)])
    assert index.get_by_ids(["a"])[0].values[0] == float(np.float32(0.1))


def test_filters_select_like_the_memory_system_needs(make_account: Make) -> None:
    index = memories_index(make_account())
    data = vectors(60)
    index.upsert(data)
    query = data[0].values
    only_npc = index.query(query, top_k=50, filter={"npcId": "npc1"}, return_metadata="all")
    assert {m.id for m in only_npc.matches} == {v.id for v in data if v.metadata["npcId"] == "npc1"}
    compound = {"npcId": "npc2", "day": {"$gte": 3, "$lte": 9}, "importance": {"$gte": 0.5}}
    expected = {
        v.id for v in data
        if v.metadata["npcId"] == "npc2" and 3 <= v.metadata["day"] <= 9 and v.metadata["importance"] >= 0.5
    }
    assert {m.id for m in index.query(query, top_k=100, filter=compound).matches} == expected
    assert {m.id for m in index.query(query, top_k=100, filter={"npcId": {"$in": ["npc0", "npc3"]}, "day": {"$lt": 2}}).matches} == {
        v.id for v in data if v.metadata["npcId"] in ("npc0", "npc3") and v.metadata["day"] < 2
    }


def test_namespace_applies_before_filter(make_account: Make) -> None:
    index = memories_index(make_account())
    index.upsert(vectors(10, namespace="a") + vectors(10, seed=2, start=10, namespace="b"))
    found = index.query([1.0] * DIMS, top_k=100, filter={"npcId": "npc1"}, namespace="b")
    assert {m.id for m in found.matches} == {"v13", "v17"} and {m.namespace for m in found.matches} == {"b"}


def test_filter_needs_a_metadata_index_and_a_rewrite(make_account: Make) -> None:
    account = make_account()
    account.create_index("idx", DIMS, "cosine")
    index = account.index("idx")
    index.upsert([Vector("old", [1.0] * DIMS, {"type": "event"})])
    with pytest.raises(VectorizeInputError, match="no metadata index"):
        index.query([1.0] * DIMS, filter={"type": "event"})
    index.create_metadata_index("type", "string")
    assert index.query([1.0] * DIMS, filter={"type": "event"}).matches == []
    index.upsert([Vector("old", [1.0] * DIMS, {"type": "event"})])
    assert [m.id for m in index.query([1.0] * DIMS, filter={"type": "event"}).matches] == ["old"]


def test_return_metadata_modes(make_account: Make) -> None:
    index = memories_index(make_account())
    long_npc = "é" * 40  # 80 bytes: the index keeps the first 64
    index.upsert([Vector("a", [1.0] * DIMS, {"npcId": long_npc, "day": 2, "importance": 0.5, "text": "hi"})])
    q = [1.0] * DIMS
    assert index.query(q, return_metadata="none").matches[0].metadata is None
    written = {"npcId": long_npc, "day": 2, "importance": 0.5, "text": "hi"}
    assert index.query(q, return_metadata="all").matches[0].metadata == written
    assert [m.id for m in index.query(q, filter={"npcId": long_npc}).matches] == ["a"]
    assert index.query(q, return_values=True).matches[0].values == [1.0] * DIMS


def test_indexed_numbers_keep_the_type_they_were_written_with(make_account: Make) -> None:
    index = memories_index(make_account())
    index.upsert([Vector("a", [1.0] * DIMS, {"npcId": "ann", "day": 2, "importance": 0.5})])
    q = [1.0] * DIMS
    for mode in ("indexed", "all"):
        metadata = index.query(q, return_metadata=mode).matches[0].metadata
        assert metadata == {"npcId": "ann", "day": 2, "importance": 0.5}
        assert type(metadata["day"]) is int and type(metadata["importance"]) is float, mode  # 2 stays 2, not 2.0
    (got,) = index.get_by_ids(["a"])
    assert type(got.metadata["day"]) is int


def test_return_metadata_booleans_as_the_binding_sends_them(make_account: Make) -> None:
    """workerd's binding converts `true` to 'all' and sends `false` unconverted, which the service refuses."""
    index = memories_index(make_account())
    index.upsert([Vector("a", [1.0] * DIMS, {"npcId": "ann", "day": 2})])
    q = [1.0] * DIMS
    assert index.query(q, return_metadata=True).matches[0].metadata == {"npcId": "ann", "day": 2}
    assert index.query_by_id("a", return_metadata=True).matches[0].metadata == {"npcId": "ann", "day": 2}
    with pytest.raises(VectorizeInputError) as refused:
        index.query(q, return_metadata=False)
    # {"topK":5,"returnValues":false,"returnMetadata":false,"vector":[...]}: the value starts at column 49
    assert str(refused.value) == ("VECTOR_QUERY_ERROR (code = 40026): Failed to parse the request body as JSON: "
                                  "returnMetadata: expected value at line 1 column 49")
    with pytest.raises(VectorizeInputError, match=r"^VECTOR_QUERY_ERROR \(code = 40026\): .*returnMetadata: expected value"):
        index.query_by_id("a", return_metadata=False)
    with pytest.raises(VectorizeInputError) as invalid:  # thrown by the binding itself: no code
        index.query(q, return_metadata="some")
    assert invalid.value.code is None and str(invalid.value) == (
        'VECTOR_QUERY_ERROR: Invalid returnMetadata option. Expected: true, false, "none", "indexed" or "all"; got: some')


def test_query_options_of_the_wrong_type_are_refused_as_the_service_reads_them(make_account: Make) -> None:
    index = memories_index(make_account())
    index.upsert(vectors(3))
    q = [1.0] * DIMS
    with pytest.raises(VectorizeInputError, match=r"\(code = 40026\): .*returnValues: invalid type: string \"yes\", expected a boolean"):
        index.query(q, return_values="yes")
    with pytest.raises(VectorizeInputError, match=r"\(code = 40026\): .*topK: invalid type: floating point `2.5`"):
        index.query(q, top_k=2.5)


def test_query_vector_of_the_wrong_dimension(make_account: Make) -> None:
    index = memories_index(make_account())
    with pytest.raises(VectorizeInputError) as wrong:
        index.query([1.0] * (DIMS - 1))
    assert str(wrong.value) == (f"VECTOR_QUERY_ERROR (code = 40006): invalid query vector, expected {DIMS} dimensions, "
                                f"and got {DIMS - 1} dimensions")


@pytest.mark.parametrize(
    "options, message",
    [
        ({"top_k": 101}, "max top K is 100, but got 101"),
        ({"top_k": 0}, "top K must be at least 1, but got 0"),
        ({"top_k": 51, "return_values": True}, "max top K is 50, but got 51"),
        ({"top_k": 51, "return_metadata": "all"}, "max top K is 50, but got 51"),
        ({"top_k": 51, "return_metadata": True}, "max top K is 50, but got 51"),  # true is 'all'
    ],
)
def test_top_k_caps(make_account: Make, options: dict[str, Any], message: str) -> None:
    index = memories_index(make_account())
    index.upsert(vectors(5))
    with pytest.raises(VectorizeInputError) as refused:
        index.query([1.0] * DIMS, **options)
    assert str(refused.value) == f"VECTOR_QUERY_ERROR (code = 40025): {message}" and refused.value.code == 40025
    assert index.query([1.0] * DIMS, top_k=100, return_metadata="indexed").count == 5
    assert index.query([1.0] * DIMS, top_k=50, return_values=True).count == 5


def _bad_writes() -> list[tuple[str, Any, str]]:
    ok = [0.5] * DIMS
    return [
        ("dims", [Vector("x", [0.5] * (DIMS + 1))],
         rf'\(code = 40012\): invalid vector for id="x", expected {DIMS} dimensions, and got {DIMS + 1} dimensions$'),
        ("id", [Vector("x" * 65, ok)], r"\(code = 40008\): id too long; max is 64 bytes, got 65 bytes$"),
        ("empty id", [Vector("", ok)], "non-empty"),
        ("metadata", [Vector("x", ok, {"blob": "x" * 10_300})], r"\(code = 40016\): metadata too large"),
        ("metadata key", [Vector("x", ok, {"a.b": 1})], "invalid metadata key"),
        ("namespace", [Vector("x", ok, None, "n" * 65)], "namespace"),
        ("nan", [Vector("x", [float("nan")] * DIMS)], "finite"),
        ("batch", [Vector(f"b{i}", ok) for i in range(1000)], "too many vectors: 1001 > 1000"),
        ("empty", [], "no vectors"),
    ]


@pytest.mark.parametrize("case", _bad_writes(), ids=lambda c: c[0])
def test_malformed_writes_raise_and_change_nothing(make_account: Make, case: tuple[str, Any, str]) -> None:
    index = memories_index(make_account())
    index.upsert(vectors(3))
    before = (index.describe(), index.get_by_ids(["v0", "v1", "v2"]))
    _, batch, message = case
    for write in (index.insert, index.upsert):
        with pytest.raises(VectorizeInputError, match=message):
            write(batch + vectors(1, start=50) if batch else batch)
    assert (index.describe(), index.get_by_ids(["v0", "v1", "v2"])) == before
    assert index.get_by_ids(["v50"]) == []


@pytest.mark.parametrize(
    "bad_filter, message",
    [
        ({}, "non-empty object"),
        ({"day": {"$gt": 1, "$gte": 2}}, "only one of"),
        ({"day": {"$eq": 1, "$lt": 3}}, "only one of"),
        ({"npcId": {"$regex": "m"}}, "unsupported operator"),
        ({"npcId": ["a"]}, "use \\$in"),
        ({"$npcId": "a"}, "invalid key"),
        ({"npcId": "x" * 2100}, "2048 bytes"),
        ({"day": {"$lt": True}}, "a string or a number"),
        ({"npcId": {"$in": "a"}}, "takes an array"),
    ],
)
def test_malformed_filters_are_rejected(make_account: Make, bad_filter: Any, message: str) -> None:
    index = memories_index(make_account())
    with pytest.raises(VectorizeInputError, match=message):
        index.query([1.0] * DIMS, filter=bad_filter)


def test_vector_cap_is_enforced(make_account: Make) -> None:
    index = memories_index(make_account(max_vectors=5))
    index.upsert(vectors(4))
    with pytest.raises(VectorizeInputError, match="index is full"):
        index.upsert(vectors(2, start=4))
    assert index.describe().vector_count == 4
    index.upsert(vectors(4) + vectors(1, start=4))  # rewrites of stored ids do not count
    assert index.describe().vector_count == 5


def test_get_delete_and_list_with_cursor(make_account: Make) -> None:
    index = memories_index(make_account())
    index.upsert(vectors(25))
    assert [v.id for v in index.get_by_ids(["v3", "missing", "v1"])] == ["v3", "v1"]
    index.delete_by_ids(["v3", "v4", "missing"])
    assert index.describe().vector_count == 23
    seen, cursor = [], None
    while True:
        page = index.list_vectors(count=10, cursor=cursor)
        seen += page.ids
        assert page.total_count == 23
        if not page.is_truncated:
            break
        cursor = page.next_cursor
    assert seen == sorted(v.id for v in vectors(25) if v.id not in ("v3", "v4"))
    with pytest.raises(VectorizeInputError):
        index.list_vectors(count=1001)
    with pytest.raises(VectorizeInputError, match="too many ids"):
        index.delete_by_ids([f"x{i}" for i in range(1001)])


def test_query_by_id_and_deleted_rows_vanish(make_account: Make) -> None:
    index = memories_index(make_account())
    data = vectors(20)
    index.upsert(data)
    assert index.query_by_id("v5", top_k=3).matches[0].id == "v5"
    index.delete_by_ids(["v5"])
    assert index.query_by_id("v5").matches == []
    assert "v5" not in {m.id for m in index.query(data[5].values, top_k=100).matches}


def test_metadata_index_limits(make_account: Make) -> None:
    index = memories_index(make_account())
    for i in range(7):
        index.create_metadata_index(f"p{i}", "boolean")
    with pytest.raises(VectorizeInputError, match="at most 10"):
        index.create_metadata_index("p7", "string")
    with pytest.raises(VectorizeInputError, match="already exists"):
        index.create_metadata_index("npcId", "string")
    with pytest.raises(VectorizeInputError, match="indexType"):
        index.create_metadata_index("z", "date")
    index.delete_metadata_index("p0")
    assert {m.property_name for m in index.list_metadata_indexes()} == {"npcId", "day", "importance"} | {f"p{i}" for i in range(1, 7)}


def test_visibility_lag_follows_the_injected_clock(make_account: Make) -> None:
    clock = FakeClock()
    index = memories_index(make_account(clock=clock, visibility_lag_s=30.0))
    assert index.list_metadata_indexes() == []
    clock.advance(30)
    assert len(index.list_metadata_indexes()) == 3
    mutation = index.upsert(vectors(5))
    assert index.describe().vector_count == 0 and index.query([1.0] * DIMS).matches == []
    clock.advance(29.9)
    assert index.describe().processed_up_to_mutation != mutation.mutation_id
    clock.advance(0.1)
    info = index.describe()
    assert info.vector_count == 5 and info.processed_up_to_mutation == mutation.mutation_id
    assert info.processed_up_to_datetime is not None and info.processed_up_to_datetime.endswith("Z")
