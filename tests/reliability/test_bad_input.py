"""Hypothesis-generated bad input to the three contracts: a clear error in Cloudflare's wording, nothing else
raised, stored data unchanged; names cannot reach outside the data folder."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memory_sim.bindings.filters import indexed_values, matches, parse_filter
from memory_sim.bindings.vectorize import Vector
from memory_sim.errors import AiError, D1Error, VectorizeError, VectorizeInputError

DIMS = 8
BOUNDED = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

INJECTIONS = ["x' OR '1'='1", "'); DROP TABLE canary; --", "\" OR 1=1 --", "$or", "$eq", "../../etc/passwd",
              "%00", "\x00", "npcId\x00", "Robert'); DELETE FROM canary;--", "\u202e\u0645\u0631\u062d\u0628\u0627",
              "\ud7ff\ue000\U0010ffff", "a" * 70, "👩‍👩‍👧‍👦" * 20]
odd_text = st.one_of(st.sampled_from(INJECTIONS), st.text(max_size=80))
floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10), st.booleans(), st.text(max_size=3))


@pytest.fixture
def index() -> Iterator[Any]:
    from memory_sim.local.vectorize.oracle import OracleAccount

    account = OracleAccount()
    account.create_index("bad-input", DIMS, "cosine")
    index = account.index("bad-input")
    index.create_metadata_index("npcId", "string")
    index.upsert([Vector(f"keep-{i}", [float(i + 1)] + [0.5] * (DIMS - 1), {"npcId": f"npc-{i % 3}"}) for i in range(9)])
    yield index


def snapshot(index: Any) -> list[tuple[str, tuple[float, ...], Any]]:
    ids = index.list_vectors(1000).ids
    return [(v.id, tuple(v.values), v.metadata) for v in index.get_by_ids(ids)]


vectors = st.builds(
    lambda id_, values, meta, ns: {"id": id_, "values": values, "metadata": meta, "namespace": ns},
    odd_text,
    st.one_of(st.lists(floats, min_size=0, max_size=DIMS + 2), st.just([math.nan] * DIMS), st.just([math.inf] * DIMS)),
    st.one_of(st.none(), st.dictionaries(odd_text, st.one_of(odd_text, floats), max_size=4),
              st.just({"blob": "x" * 11_000})),
    st.one_of(st.none(), odd_text),
)


def is_valid_vector(v: dict[str, Any]) -> bool:
    values = v["values"]
    return (
        len(values) == DIMS
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in values)
        and 0 < len(v["id"].encode("utf-8", "surrogatepass")) <= 64
    )


@BOUNDED
@given(batch=st.lists(vectors, min_size=1, max_size=3))
def test_vectorize_upsert_rejects_bad_vectors_and_keeps_data(index: Any, batch: list[dict[str, Any]]) -> None:
    before = snapshot(index)
    try:
        index.upsert([Vector(v["id"], v["values"], v["metadata"], v["namespace"]) for v in batch])
    except VectorizeInputError as exc:
        assert str(exc).startswith("VECTOR_UPSERT_ERROR"), str(exc)
        assert snapshot(index) == before  # a rejected batch changes nothing
        return
    assert all(is_valid_vector(v) for v in batch)  # anything accepted was valid
    index.delete_by_ids([v["id"] for v in batch if not v["id"].startswith("keep-")])


filters = st.recursive(
    st.one_of(odd_text, st.integers(), st.floats(), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(odd_text, inner, max_size=3)),
    max_leaves=6,
)


@BOUNDED
@given(filter_=st.one_of(filters, st.dictionaries(st.sampled_from(["npcId", "$or", "npcId.x", ""]), filters, max_size=2)))
def test_vectorize_filters_built_to_inject_are_rejected_or_exact(index: Any, filter_: Any) -> None:
    before = snapshot(index)
    try:
        result = index.query([1.0] * DIMS, top_k=20, filter=filter_, return_metadata="all")
    except VectorizeInputError as exc:
        assert str(exc).startswith("VECTOR_QUERY_ERROR"), str(exc)
    else:  # accepted: exactly what the pure reference evaluator says matches (an empty filter: everything)
        if filter_ is None or filter_ == {}:
            want = {i for i, _, _ in before}
        else:
            conditions = parse_filter(filter_)
            want = {i for i, _, meta in before if matches(conditions, indexed_values(meta, {"npcId": "string"}))}
        assert {m.id for m in result.matches} == want
    assert snapshot(index) == before


@pytest.fixture(params=["duckdb", "sqlite"])
def db(request: pytest.FixtureRequest) -> Iterator[Any]:
    from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
    from memory_sim.local.d1.sqlite_engine import SqliteDatabase

    database = DuckDBDatabase(":memory:") if request.param == "duckdb" else SqliteDatabase()
    database.prepare("CREATE TABLE canary (id TEXT PRIMARY KEY, body TEXT)").run()
    database.batch([database.prepare("INSERT INTO canary VALUES (?, ?)").bind(f"c{i}", f"body {i}") for i in range(5)])
    yield database
    database.close()


def rows(db: Any) -> list[dict[str, Any]]:
    return db.prepare("SELECT id, body FROM canary ORDER BY id").all().results


params = st.one_of(odd_text, st.integers(-(2**70), 2**70), st.floats(), st.none(), st.booleans(),
                   st.lists(st.integers(0, 255), max_size=4), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@BOUNDED
@given(value=params)
def test_d1_parameters_are_data_never_sql(db: Any, value: Any) -> None:
    before = rows(db)
    try:
        found = db.prepare("SELECT id FROM canary WHERE body = ?1 OR id = ?1").bind(value).all().results
    except D1Error as exc:
        assert str(exc).startswith(("D1_TYPE_ERROR", "D1_ERROR")), str(exc)
    else:  # a string matches rows literally; any other value matches none of these text columns
        expected = [{"id": r["id"]} for r in before if isinstance(value, str) and value in (r["id"], r["body"])]
        assert sorted(found, key=lambda r: r["id"]) == expected
    try:
        db.prepare("INSERT INTO canary (id, body) VALUES ('probe', ?)").bind(value).run()
    except D1Error as exc:
        assert str(exc).startswith(("D1_TYPE_ERROR", "D1_ERROR")), str(exc)
    else:
        stored = db.prepare("SELECT body FROM canary WHERE id = 'probe'").first("body")
        assert stored == value or not isinstance(value, str)
        db.prepare("DELETE FROM canary WHERE id = 'probe'").run()
    assert rows(db) == before


@BOUNDED
@given(sql=st.one_of(st.text(max_size=60), st.sampled_from(["SELECT * FROM canary WHERE id = '", "'; DROP TABLE canary; --",
                                                             "SELECT ?101", "PRAGMA writable_schema = 1", "ATTACH '/tmp/x' AS y"])))
def test_d1_odd_statements_fail_with_d1_errors(db: Any, sql: str) -> None:
    before = rows(db)
    try:
        db.prepare(sql).all()
    except D1Error as exc:
        assert str(exc).split(":")[0].startswith("D1_"), str(exc)
    if "canary" not in sql.lower() or "drop" not in sql.lower():
        assert rows(db) == before


@BOUNDED
@given(inputs=st.one_of(
    st.none(), st.integers(), st.text(max_size=5), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.builds(lambda t: {"text": t}, st.one_of(st.just(""), st.just([]), st.lists(st.integers(), min_size=1, max_size=2),
                                                st.lists(st.just("x"), min_size=101, max_size=101), st.lists(st.just(""), min_size=1, max_size=2))),
    st.builds(lambda p: {"text": "hello", "pooling": p}, odd_text),
))
def test_ai_bad_input_is_rejected_before_any_model_runs(inputs: Any) -> None:
    from memory_sim.local.ai.local_ai import LocalAi

    ai = LocalAi()
    with pytest.raises(AiError, match=r"^AiError: Bad input: Error: "):
        ai.run("@cf/baai/bge-base-en-v1.5", inputs)
    assert not ai._loaded  # nothing was loaded for a request that was refused


@pytest.mark.parametrize("model", ["../../../etc", "/etc", "..", "@cf/../../x", "no/such-model"])
def test_ai_model_names_cannot_name_folders(model: str) -> None:
    from memory_sim.local.ai.local_ai import LocalAi

    with pytest.raises(AiError, match="No such model"):
        LocalAi().run(model, {"text": ["hello"]})


TRAVERSALS = ["../outside", "..", "a/../../b", "/tmp/abs", "x\\..\\y", "%2e%2e", "..%2F..", "\x00", "a/b"]


@pytest.mark.parametrize("name", TRAVERSALS)
def test_names_cannot_leave_the_data_folder(tmp_path: Path, name: str) -> None:
    from memory_sim.local.d1.account import D1Account
    from memory_sim.local.vectorize.chroma import ChromaAccount

    data = tmp_path / "data"
    data.mkdir()
    with pytest.raises(D1Error):
        D1Account(data).create(name)
    account = ChromaAccount(data / "vectorize")
    with pytest.raises(VectorizeError):
        account.create_index(name, DIMS, "cosine")
    outside = [p for p in tmp_path.rglob("*") if data not in p.parents and p != data]
    assert outside == []  # nothing was created beside the data folder


FILE_ESCAPES = ["SELECT * FROM read_csv('{outside}/secret.csv')", "COPY (SELECT 1 AS a) TO '{outside}/written.csv'",
                "ATTACH '{outside}/attached.db' AS other", "VACUUM INTO '{outside}/copy.db'",
                "SET enable_external_access = true", "INSTALL httpfs"]


@pytest.mark.parametrize("template", FILE_ESCAPES)
def test_d1_sql_cannot_read_or_write_other_files(db: Any, tmp_path: Path, template: str) -> None:
    (tmp_path / "secret.csv").write_text("password\nhunter2\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(D1Error, match=r"^D1_"):
        db.prepare(template.format(outside=tmp_path)).all()
    assert sorted(p.name for p in tmp_path.iterdir()) == before and rows(db)
