"""Isolation (NPCs, accounts, tokens) and bounded load (8 threads in one process, 8 server clients)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from load import run_load, server_clients
from memory_env import build_env

from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from memory_sim.testing import TEST_TOKEN, ServerForTests

NPCS = ["margaret", "tom", "eleanor", "npc-3"]
words = st.sampled_from(["forge", "bread", "oven", "church", "margaret", "tom", "npcId", "$eq", "' OR 1=1"])


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(writes=st.lists(st.tuples(st.sampled_from(NPCS), st.lists(words, min_size=1, max_size=5),
                                 st.floats(0.0, 1.0)), min_size=1, max_size=30),
       query=st.lists(words, min_size=1, max_size=4), mode=st.sampled_from(["vector", "keyword", "hybrid"]))
def test_an_npc_never_recalls_another_npcs_memory(writes: list[Any], query: list[str], mode: str) -> None:
    clock = SimClock()
    system = MemorySystem(build_env(clock), clock=clock)
    for npc in NPCS:  # known NPCs, also those the draw gives no memory
        system.register_npc(npc, npc)
    chunks = [writes[i::3] for i in range(3)]

    def write(chunk: list[Any]) -> None:  # concurrent writers on one system
        for n, (npc, text, importance) in enumerate(chunk):
            system.remember(ShortTermMemory(npc, " ".join(text) + f" {n}", importance, WorldTime(1, n % 24), about=("tom",)))

    threads = [threading.Thread(target=write, args=(c,)) for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for npc in NPCS:
        found = system.recall(npc, " ".join(query), top_k=10, mode=mode)  # type: ignore[arg-type]
        assert all(r.npc_id == npc for r in found)
        owned = {m.id for m in store.memories_of(system.env.DB, npc)}
        assert {r.id for r in found} <= owned


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerForTests]:
    with ServerForTests(tmp_path_factory.mktemp("isolation-server")) as running:
        yield running


def api(server: ServerForTests, method: str, path: str, token: str | None = TEST_TOKEN, **kwargs: Any) -> httpx.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return httpx.request(method, server.base_url + path, headers=headers, timeout=30, **kwargs)


def test_an_account_never_sees_another_accounts_data(server: ServerForTests) -> None:
    a, b = server.fresh_account_id(), server.fresh_account_id()
    assert api(server, "POST", f"/accounts/{a}/vectorize/v2/indexes", json={"name": "secret", "config": {"dimensions": 4, "metric": "cosine"}}).is_success
    db = api(server, "POST", f"/accounts/{a}/d1/database", json={"name": "ledger"}).json()["result"]["uuid"]
    api(server, "POST", f"/accounts/{a}/d1/database/{db}/query", json={"sql": "CREATE TABLE t (x TEXT)"})
    assert api(server, "GET", f"/accounts/{b}/vectorize/v2/indexes").json()["result"] == []
    assert api(server, "GET", f"/accounts/{b}/vectorize/v2/indexes/secret").status_code == 404
    assert api(server, "GET", f"/accounts/{b}/d1/database").json()["result"] == []
    for path in (f"/d1/database/{db}", f"/d1/database/{db}/query"):
        method = "GET" if path.endswith(db) else "POST"
        answer = api(server, method, f"/accounts/{b}{path}", json={"sql": "SELECT * FROM t"})
        assert answer.status_code == 404 and answer.json()["success"] is False
    for evil in ("..", "..%2F" + a, "%2e%2e", a + "%2F..%2F" + b):
        answer = api(server, "GET", f"/accounts/{evil}/vectorize/v2/indexes")
        assert answer.status_code in (400, 404) and "secret" not in answer.text


def test_no_route_answers_without_a_valid_token(server: ServerForTests) -> None:
    spec = httpx.get(server.base_url.replace("/client/v4", "") + "/openapi.json").json()
    account, checked = server.fresh_account_id(), 0
    for path, methods in spec["paths"].items():
        if not path.startswith("/client/v4/"):
            continue
        concrete = path.replace("/client/v4", "").replace("{account_id}", account)
        for part in ("{index_name}", "{name}", "{database_id}", "{model_name}", "{model}"):
            concrete = concrete.replace(part, "x")
        for method in methods:
            for token, status in ((None, 401), ("wrong-token", 403), (TEST_TOKEN + "x", 403)):
                answer = api(server, method.upper(), concrete, token=token)
                assert answer.status_code == status, (method, concrete, token, answer.status_code)
                assert answer.json()["success"] is False
                checked += 1
    assert checked >= 30


@pytest.mark.slow
def test_eight_threads_in_one_process_mixed_load(tmp_path: Path) -> None:
    from memory_sim.check import check
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.env import Env

    clock = SimClock()
    with Env.local(tmp_path, embedder=HashingEmbedder(64)) as env:  # Chroma + DuckDB
        system = MemorySystem(env, clock=clock)
        report = run_load([system] * 8, seconds=3.0, seed=1)
        assert report.errors == [] and report.foreign == 0
        assert report.remembered > 0 and report.recalls > 0
        in_d1 = {m.id for m in store.all_memories(env.DB)}
        assert report.acked == in_d1  # final counts consistent
        system.retry_pending(clock() + 86400)
        assert check(env).clean


@pytest.mark.slow
def test_eight_server_clients_mixed_load(server: ServerForTests) -> None:
    systems, db_id = server_clients(server, server.fresh_account_id())
    report = run_load(systems, seconds=3.0, seed=2)
    assert report.errors == [] and report.foreign == 0 and report.remembered > 0
    assert report.acked == {m.id for m in store.all_memories(db_id)}
