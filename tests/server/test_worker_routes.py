"""The routes a Worker's bindings and wrangler reach: the remote-proxy endpoints (`/remote-proxy/...`, what
npm/memory-sim-miniflare and a Miniflare `remoteProxyConnectionString` send), wrangler 4.44's `/ai/run/proxy`,
the OpenAI-compatible embeddings, and the D1 and Workers AI details the bindings read. Requests here are shaped as
workerd's binding modules send them (docs/workers.md); tests/worker/ runs the modules themselves."""

from __future__ import annotations

import json
import logging
from typing import Any

import cloudflare
import httpx
import openai
import pytest

from memory_sim.testing import TEST_TOKEN, ServerForTests

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}


def binding(server: ServerForTests, path: str, url: str, body: Any = None, *, method: str = "POST",
            headers: dict[str, str] | None = None, raw: bytes | None = None, auth: bool = True) -> httpx.Response:
    """One binding request in the remote-proxy protocol: its URL in MF-URL, its headers as MF-Header-*."""
    sent = {"MF-URL": url, "MF-Binding": "X", **{f"MF-Header-{k}": v for k, v in (headers or {}).items()}}
    content = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    return httpx.request(method, f"{server.base_url.removesuffix('/client/v4')}/remote-proxy/{path}",
                         content=content, headers={**(AUTH if auth else {}), **sent}, timeout=60)


@pytest.fixture
def index(sdk: cloudflare.Cloudflare, account_id: str) -> str:
    sdk.vectorize.indexes.create(account_id=account_id, name="npc", config={"dimensions": 3, "metric": "cosine"})
    return "npc"


# --- Vectorize through the binding's own requests ---------------------------------------------------------------
def test_vectorize_binding_requests(server: ServerForTests, account_id: str, index: str) -> None:
    path = f"{account_id}/vectorize/{index}"
    lines = [{"id": "a", "values": [1, 0, 0], "metadata": {"npc": "m"}}, {"id": "b", "values": [0, 1, 0]}]
    ndjson = "\n".join(json.dumps(v) for v in lines).encode()
    wrote = binding(server, path, "http://vector-search/upsert", raw=ndjson,
                    headers={"content-type": "application/x-ndjson"})
    assert wrote.status_code == 200 and "mutationId" in wrote.json()
    found = binding(server, path, "http://vector-search/query",
                    {"vector": [1, 0.1, 0], "topK": 2, "returnMetadata": "all"}).json()
    assert [m["id"] for m in found["matches"]] == ["a", "b"] and found["matches"][0]["metadata"] == {"npc": "m"}
    by_id = binding(server, path, "http://vector-search/query", {"vectorId": "b", "topK": 1}).json()
    assert by_id["matches"][0]["id"] == "b"
    got = binding(server, path, "http://vector-search/getByIds", {"ids": ["b", "zz"]}).json()
    assert [v["id"] for v in got] == ["b"]
    assert binding(server, path, "http://vector-search/info", method="GET").json()["vectorCount"] == 2
    assert binding(server, path, "http://vector-search/deleteByIds", {"ids": ["b"]}).status_code == 200
    assert binding(server, path, "http://vector-search/info", method="GET").json()["vectorCount"] == 1


def test_vectorize_binding_errors_are_code_and_error(server: ServerForTests, account_id: str, index: str) -> None:
    """The module throws `VECTOR_QUERY_ERROR (code = N): error` from `{code, error}`."""
    over = binding(server, f"{account_id}/vectorize/{index}", "http://vector-search/query",
                   {"vector": [1, 0, 0], "topK": 101})
    assert over.status_code == 400 and over.json() == {"code": 40025, "error": "max top K is 100, but got 101"}
    missing = binding(server, f"{account_id}/vectorize/nope", "http://vector-search/info", method="GET")
    assert missing.status_code == 404 and missing.json()["code"] == 3000


def test_tokens_guard_the_bindings_also_in_the_url(server: ServerForTests, account_id: str, index: str) -> None:
    base = f"{server.base_url.removesuffix('/client/v4')}/remote-proxy/{account_id}/vectorize/{index}"
    info = {"MF-URL": "http://vector-search/info"}
    assert httpx.get(base, headers=info).status_code == 401
    assert httpx.get(base, params={"token": "wrong"}, headers=info).status_code == 403
    assert httpx.get(base, params={"token": TEST_TOKEN}, headers=info).json()["dimensions"] == 3


def test_a_token_in_the_url_never_reaches_the_access_log() -> None:
    import memory_sim.server.binding_routes  # noqa: F401  (it installs the filter)

    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5", "GET", "/remote-proxy/a/ai?token=secret&MF-Binding=AI", "1.1", 200),
                               None)
    assert all(f.filter(record) for f in logging.getLogger("uvicorn.access").filters)
    assert "secret" not in record.getMessage() and "token=***&MF-Binding=AI" in record.getMessage()


# --- D1 -----------------------------------------------------------------------------------------------------------
@pytest.fixture
def database(sdk: cloudflare.Cloudflare, account_id: str) -> str:
    made = sdk.d1.database.create(account_id=account_id, name="village").uuid
    sdk.d1.database.query(made, account_id=account_id, sql="CREATE TABLE npcs (name TEXT, mood REAL)")
    return str(made)


def test_d1_binding_query_execute_and_batch(server: ServerForTests, account_id: str, database: str) -> None:
    path = f"{account_id}/d1/village"  # by name, as wrangler.toml's database_name
    ran = binding(server, path, "http://d1/execute?resultsFormat=NONE",
                  {"sql": "INSERT INTO npcs VALUES (?1, ?2)", "params": ["Tom", 0.5]}).json()
    assert ran["success"] is True and ran["meta"]["changes"] == 1
    rows = binding(server, f"{account_id}/d1/{database}", "http://d1/query?resultsFormat=ROWS_AND_COLUMNS",
                   {"sql": "SELECT name, mood FROM npcs", "params": []}).json()
    assert rows["results"] == {"columns": ["name", "mood"], "rows": [["Tom", 0.5]]}
    batch = binding(server, path, "http://d1/query?resultsFormat=ROWS_AND_COLUMNS",
                    [{"sql": "INSERT INTO npcs VALUES ('Cora', 1)", "params": []},
                     {"sql": "SELECT count(*) AS n FROM npcs", "params": []}]).json()
    assert isinstance(batch, list) and batch[1]["results"]["rows"] == [[2]]


def test_d1_binding_errors_lose_their_prefix(server: ServerForTests, account_id: str, database: str) -> None:
    """The module words `{error}` as `D1_ERROR: error`; `exec` reads the failing line's `error` in its place."""
    path = f"{account_id}/d1/{database}"
    bad = binding(server, path, "http://d1/query?resultsFormat=ROWS_AND_COLUMNS", {"sql": "SELECT * FROM nowhere"})
    assert bad.json()["error"].startswith("no such table: nowhere")
    lines = [{"sql": "INSERT INTO npcs VALUES ('Ann', 0)"}, {"sql": "SELEC 1"},
             {"sql": "INSERT INTO npcs VALUES ('Bo', 0)"}]
    executed = binding(server, path, "http://d1/execute?resultsFormat=NONE", lines).json()
    assert [r["success"] for r in executed] == [True, False] and "syntax error" in executed[1]["error"]
    batch = binding(server, path, "http://d1/query?resultsFormat=ROWS_AND_COLUMNS",
                    [{"sql": "INSERT INTO npcs VALUES ('Cy', 0)"}, {"sql": "SELECT * FROM nowhere"}]).json()
    assert batch["error"].startswith("no such table")  # a batch is atomic: one error, nothing kept
    names = binding(server, path, "http://d1/query", {"sql": "SELECT name FROM npcs ORDER BY name"}).json()
    assert names["results"]["rows"] == [["Ann"]]
    unknown = binding(server, f"{account_id}/d1/nowhere", "http://d1/query", {"sql": "SELECT 1"})
    assert unknown.status_code == 404 and "could not be found" in unknown.json()["error"]


def test_d1_session_bookmark_round_trips_into_time_travel(
    server: ServerForTests, sdk: cloudflare.Cloudflare, account_id: str, database: str
) -> None:
    path = f"{account_id}/d1/{database}"
    session = {"x-cf-d1-session-commit-token": "first-unconstrained"}
    first = binding(server, path, "http://d1/execute", {"sql": "INSERT INTO npcs VALUES ('Tom', 1)"}, headers=session)
    bookmark = first.headers["x-cf-d1-session-commit-token"]
    later = binding(server, path, "http://d1/execute", {"sql": "INSERT INTO npcs VALUES ('Cora', 2)"},
                    headers={"x-cf-d1-session-commit-token": bookmark})
    assert later.headers["x-cf-d1-session-commit-token"] > bookmark  # the module keeps the greater one
    primary = binding(server, path, "http://d1/query", {"sql": "SELECT 1"},
                      headers={"x-cf-d1-session-commit-token": "first-primary"})
    assert "x-cf-d1-session-commit-token" not in primary.headers  # env.DB outside a session ignores bookmarks
    restored = httpx.post(f"{server.base_url}/accounts/{account_id}/d1/database/{database}/time_travel/restore",
                          params={"bookmark": bookmark}, headers=AUTH)
    assert restored.status_code == 200, restored.text
    rows = sdk.d1.database.query(database, account_id=account_id, sql="SELECT name FROM npcs")
    assert list(rows)[0].results == [{"name": "Tom"}]


def test_single_failing_statement_has_no_batch_pointer(sdk: cloudflare.Cloudflare, account_id: str,
                                                       database: str) -> None:
    with pytest.raises(cloudflare.BadRequestError) as failed:
        sdk.d1.database.query(database, account_id=account_id, sql="SELECT * FROM nowhere")
    error = failed.value.body["errors"][0]
    assert error["code"] == 7500 and error["message"].startswith("D1_ERROR: no such table") and "source" not in error


# --- Workers AI -------------------------------------------------------------------------------------------------
def test_unknown_model_is_5007_whatever_the_body(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    with pytest.raises(cloudflare.BadRequestError) as unknown:
        sdk.ai.run("@cf/nope/x", account_id=account_id, extra_body={"nothing": 1})
    assert unknown.value.body["errors"][0]["code"] == 5007


def test_ai_errors_through_the_binding_routes(server: ServerForTests, account_id: str) -> None:
    """wrangler 4.44's proxy route and the remote-proxy endpoint answer `errors[0]`, worded `code: message`."""
    body = {"inputs": {"text": ["x"]}, "options": {}}
    proxied = httpx.post(f"{server.base_url}/accounts/{account_id}/ai/run/proxy", json=body,
                         headers={**AUTH, "cf-consn-model-id": "@cf/nope/x"})
    assert proxied.status_code == 400 and proxied.json()["errors"][0]["code"] == 5007
    bad = binding(server, f"{account_id}/ai", "https://workers-binding.ai/run?version=3", {"inputs": {}, "options": {}},
                  headers={"cf-consn-model-id": MINILM})
    assert bad.json()["errors"][0] == {"code": 5006,
                                       "message": "AiError: Bad input: Error: required properties at '/' are 'text'"}


@pytest.mark.slow
def test_ai_run_proxy_and_binding_answer_the_bare_result(server: ServerForTests, account_id: str) -> None:
    body = {"inputs": {"text": ["the miller", "the baker"]}, "options": {}}
    proxied = httpx.post(f"{server.base_url}/accounts/{account_id}/ai/run/proxy", json=body, timeout=120,
                         headers={**AUTH, "cf-consn-model-id": MINILM, "cf-consn-sdk-version": "2.0.0"})
    assert proxied.status_code == 200 and proxied.headers["content-type"] == "application/json"
    assert proxied.json()["shape"] == [2, 384]
    bound = binding(server, f"{account_id}/ai", "https://workers-binding.ai/run?version=3", body,
                    headers={"cf-consn-model-id": MINILM})
    assert bound.headers["content-type"] == "application/json" and bound.json()["data"] == proxied.json()["data"]


@pytest.mark.slow
def test_openai_sdk_embeddings(server: ServerForTests, account_id: str) -> None:
    client = openai.OpenAI(api_key=TEST_TOKEN, base_url=f"{server.base_url}/accounts/{account_id}/ai/v1",
                           max_retries=0)
    made = client.embeddings.create(model=MINILM, input=["the miller", "the baker"])
    assert [len(e.embedding) for e in made.data] == [384, 384] and made.data[1].index == 1
    floats = client.embeddings.create(model=MINILM, input="the miller", encoding_format="float")
    assert floats.data[0].embedding == pytest.approx(made.data[0].embedding, abs=1e-6)
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model=MINILM, input="x", dimensions=128)
    with pytest.raises(openai.BadRequestError) as unknown:
        client.embeddings.create(model="@cf/nope/x", input="x")
    assert "No such model" in str(unknown.value)
