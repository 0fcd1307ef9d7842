"""Fuzzing the local server over loopback with a valid token: no 5xx, every rejection a 4xx in Cloudflare's
envelope, and a rejected request never costs the keep-alive connection.

- schemathesis against the app's OpenAPI description: every route, bodies generated valid (positive) and not
  (negative), with free path parameters and with ones naming an existing index and database, so bodies reach the
  routes behind them.
- hypothesis bodies of the shapes that once answered 500: D1 batches whose items are not query objects, and lone
  surrogates (a JSON escape such as "\\ud800" without its pair) in ids, metadata keys and values, namespaces,
  filters, D1 params and SQL text. Each must be a 400, the next request on the same connection must be served,
  and nothing stored may change.

Bounded: fixed seeds (derandomize), a few examples per route and mode, 200 hypothesis bodies.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import httpx
import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402

from memory_sim.bindings.ai_validation import output, parse_inputs  # noqa: E402
from memory_sim.embedding.fake import HashingEmbedder  # noqa: E402
from memory_sim.testing import TEST_TOKEN, ServerForTests  # noqa: E402

AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}
INDEX = "idx"
ROW = {"id": "kept", "values": [1.0, 0.0], "metadata": {"k": "v"}, "namespace": "ns"}
BOUNDED = settings(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck),
                   phases=[Phase.explicit, Phase.generate])  # no shrinking: each failure is recorded, not raised


class HashingAi:
    """Workers AI's input rules and output shape over the hashing embedder: the AI route without loading a model."""

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        texts, pooling = parse_inputs(inputs)
        return output(HashingEmbedder(8).embed(texts), 8, pooling)


@schemathesis.serializer("application/x-ndjson")
def _ndjson(ctx: Any, value: Any) -> dict[str, Any]:
    """insert/upsert bodies: one JSON value per line (a generated non-array is sent as one line)."""
    lines = value if isinstance(value, list) else [value]
    return {"data": "".join(json.dumps(line) + "\n" for line in lines).encode()}


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerForTests]:
    with ServerForTests(tmp_path_factory.mktemp("fuzz-server"), ai=HashingAi()) as server:
        yield server


def seeded(server: ServerForTests, account: str) -> tuple[str, str]:
    """Index `idx` (one vector, metadata index `k`) and a database (one row) in `account`: their URLs."""
    index = f"/accounts/{account}/vectorize/v2/indexes/{INDEX}"
    with httpx.Client(base_url=server.base_url, headers=AUTH) as client:
        config = {"dimensions": 2, "metric": "cosine"}
        assert client.post(f"/accounts/{account}/vectorize/v2/indexes", json={"name": INDEX, "config": config}).is_success
        client.post(f"{index}/metadata_index/create", json={"propertyName": "k", "indexType": "string"})
        client.post(f"{index}/upsert", content=json.dumps(ROW).encode(), headers={"Content-Type": "application/x-ndjson"})
        database = client.post(f"/accounts/{account}/d1/database", json={"name": "db"}).json()["result"]["uuid"]
        client.post(f"/accounts/{account}/d1/database/{database}/query",
                    json={"sql": "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('kept')"})
    return index, f"/accounts/{account}/d1/database/{database}"


def envelope_problem(response: Any) -> str | None:
    """What is wrong with an answer: a 5xx, or a 4xx outside Cloudflare's envelope; None when it is fine."""
    if response.status_code >= 500:
        return f"{response.status_code} {response.text[:300]}"
    if response.status_code >= 400:
        try:
            body = response.json()
        except ValueError:
            return f"{response.status_code} not JSON: {response.text[:200]}"
        error = (body.get("errors") or [{}])[0] if isinstance(body, dict) else {}
        if body.get("success") is not False or "code" not in error or "message" not in error:
            return f"{response.status_code} not in the envelope: {response.text[:200]}"
    return None


@pytest.mark.slow
def test_every_openapi_route_answers_4xx_in_the_envelope_never_5xx(fuzz_server: ServerForTests) -> None:
    import requests  # schemathesis' own transport

    server, (_, database) = fuzz_server, seeded(fuzz_server, "openapi")
    schema = schemathesis.openapi.from_url(server.base_url.replace("/client/v4", "") + "/openapi.json")
    fixed = {"account_id": "openapi", "name": INDEX, "database_id": database.rsplit("/", 1)[1]}
    operations = sorted((result.ok() for result in schema.get_all_operations()), key=lambda op: op.method.upper() == "DELETE")
    # A Worker binding's endpoints answer in that binding module's own shapes (`{code, error}`, bare results), not
    # in the REST envelope: tests/server/test_worker_routes.py and tests/worker hold them to those.
    operations = [op for op in operations if not op.path.startswith("/remote-proxy/")]
    failures: list[str] = []
    served: dict[str, int] = {"requests": 0, "rejected": 0}
    paths: set[str] = set()
    session = requests.Session()
    for operation in operations:
        paths.add(f"{operation.method.upper()} {operation.path}")
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):
            names = {p.name for p in operation.path_parameters}
            for path_parameters in ({}, {k: v for k, v in fixed.items() if k in names}):
                strategy = operation.as_strategy(generation_mode=mode, path_parameters=path_parameters or None)

                @settings(BOUNDED, max_examples=4)
                @given(case=strategy)
                def run(case: Any) -> None:
                    response = case.call(session=session, headers=AUTH)
                    served["requests"] += 1
                    served["rejected"] += response.status_code >= 400
                    problem = envelope_problem(response)
                    if problem is not None:
                        failures.append(f"{case.method} {case.formatted_path} ({mode.value}): {problem}")

                try:
                    run()
                except Unsatisfiable:  # nothing to make invalid: no body, and any string is a valid path parameter
                    assert mode is schemathesis.GenerationMode.NEGATIVE and len(list(operation.body)) == 0, operation.path
    print(f"schemathesis: {len(paths)} routes, {served['requests']} requests, {served['rejected']} rejected with 4xx")
    print(*failures[:20], sep="\n")
    assert len(paths) >= 20 and served["requests"] > 150 and not failures, failures[:5]


# --- hypothesis bodies of the shapes that once answered 500 ----------------------------------------------------
NOT_A_QUERY = st.one_of(st.text(max_size=8), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False),
                        st.lists(st.integers(), max_size=3), st.lists(st.text(max_size=3), max_size=2))
BAD_QUERY_OBJECT = st.one_of(
    st.fixed_dictionaries({"sql": st.one_of(st.integers(), st.booleans(), st.none(), st.lists(st.text(max_size=3)), st.just(" "))}),
    st.fixed_dictionaries({"sql": st.just("SELECT ?"), "params": st.one_of(st.text(max_size=3), st.integers(), st.booleans(), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))}),
)
GOOD_QUERY = st.just({"sql": "DELETE FROM t"})
BAD_BATCH = st.tuples(st.lists(GOOD_QUERY, max_size=2), st.one_of(NOT_A_QUERY, BAD_QUERY_OBJECT), st.lists(GOOD_QUERY, max_size=2))

LONE = "\x00LONE\x00"  # where the lone surrogate escape goes in a body's JSON text
SURROGATE_HOMES: list[tuple[str, str, Any]] = [  # (route under the index or the database, content type, body)
    ("upsert", "ndjson", {"id": LONE, "values": [1, 0]}),
    ("insert", "ndjson", {"id": "x", "values": [1, 0], "metadata": {"k": LONE}}),
    ("upsert", "ndjson", {"id": "kept", "values": [0, 1], "metadata": {LONE: 1}}),
    ("upsert", "ndjson", {"id": "kept", "values": [0, 1], "metadata": {"nested": {"deep": [LONE]}}}),
    ("upsert", "ndjson", {"id": "kept", "values": [0, 1], "namespace": LONE}),
    ("get_by_ids", "json", {"ids": ["kept", LONE]}),
    ("delete_by_ids", "json", {"ids": ["kept", LONE]}),
    ("query", "json", {"vector": [1, 0], "namespace": LONE}),
    ("query", "json", {"vector": [1, 0], "filter": {"k": {"$eq": LONE}}}),
    ("query", "json", {"vectorId": LONE}),
    ("metadata_index/create", "json", {"propertyName": LONE, "indexType": "string"}),
    ("metadata_index/delete", "json", {"propertyName": LONE}),
    ("d1:query", "json", {"sql": f"INSERT INTO t VALUES ('{LONE}')"}),
    ("d1:raw", "json", {"sql": "INSERT INTO t VALUES (?)", "params": [LONE]}),
    ("d1:query", "json", {"batch": [{"sql": "DELETE FROM t"}, {"sql": "INSERT INTO t VALUES (?1)", "params": [LONE]}]}),
]


def lone_surrogate_text(body: Any, code: int, around: tuple[str, str]) -> bytes:
    """`body` as JSON text with LONE replaced by `around[0]`, the escape \\uXXXX of `code`, `around[1]`."""
    text = json.dumps(body).replace(json.dumps(LONE)[1:-1], f"{around[0]}\\u{code:04x}{around[1]}")
    return text.encode()


PLAIN = st.text(alphabet="abcxyz019 _-", max_size=4)
SURROGATE_CASES = st.tuples(st.sampled_from(SURROGATE_HOMES), st.integers(0xD800, 0xDFFF), st.tuples(PLAIN, PLAIN))


def stored(client: httpx.Client, index: str, database: str) -> Any:
    """What the server holds: the vector, the index's count and metadata indexes, the table's rows."""
    vector = client.post(f"{index}/get_by_ids", json={"ids": ["kept"]}).json()["result"]
    count = client.get(f"{index}/info").json()["result"]["vectorCount"]
    metadata = client.get(f"{index}/metadata_index/list").json()["result"]
    rows = client.post(f"{database}/query", json={"sql": "SELECT v FROM t"}).json()["result"][0]["results"]
    return vector, count, metadata, rows


def bad_then_good(client: httpx.Client, failures: list[str], what: str, method: str, url: str, **request: Any) -> None:
    """The bad request must be a 400 in the envelope, and the same connection must serve a good one next."""
    try:
        bad = client.request(method, url, **request)
        first = bad.extensions["network_stream"].get_extra_info("client_addr")
        good = client.get(url.split("/vectorize/")[0].split("/d1/")[0] + "/d1/database")
        addresses = {first, good.extensions["network_stream"].get_extra_info("client_addr")}
    except (httpx.TransportError, OSError) as exc:  # OSError: the socket was closed under the response
        failures.append(f"{what}: the connection broke: {exc!r}")
        return
    problem = envelope_problem(bad) or (None if bad.status_code == 400 else f"{bad.status_code}, not 400: {bad.text[:200]}")
    if problem is None and (good.status_code != 200 or len(addresses) != 1):
        problem = f"the next request on the connection: {good.status_code}, connections {sorted(addresses)}"
    if problem is not None:
        failures.append(f"{what}: {problem}")


@pytest.mark.slow
def test_bad_shapes_are_400_never_5xx_and_keep_the_connection(fuzz_server: ServerForTests) -> None:
    index, database = seeded(fuzz_server, "shapes")
    failures: list[str] = []
    with httpx.Client(base_url=fuzz_server.base_url, headers=AUTH) as client:
        before = stored(client, index, database)

        @settings(BOUNDED, max_examples=80)
        @given(batch=BAD_BATCH, route=st.sampled_from(["query", "raw"]))
        def batches(batch: tuple[list[Any], Any, list[Any]], route: str) -> None:
            items = [*batch[0], batch[1], *batch[2]]
            bad_then_good(client, failures, f"batch {items!r:.120} on /{route}", "POST", f"{database}/{route}", json={"batch": items})

        @settings(BOUNDED, max_examples=120)
        @given(case=SURROGATE_CASES)
        def surrogates(case: tuple[tuple[str, str, Any], int, tuple[str, str]]) -> None:
            (route, kind, body), code, around = case
            url = f"{database}/{route[3:]}" if route.startswith("d1:") else f"{index}/{route}"
            content = lone_surrogate_text(body, code, around)
            media = "application/x-ndjson" if kind == "ndjson" else "application/json"
            bad_then_good(client, failures, f"{content!r:.120} on {route}", "POST", url, content=content, headers={"Content-Type": media})

        batches()
        surrogates()
        after = stored(client, index, database)
    assert not failures, failures[:5]
    assert after == before  # nothing stored changed
