"""Vectorize and D1 over REST: error mapping, batching to 5000, retries with injected sleep, Env.cloudflare."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from fastapi import Request
from fastapi.responses import JSONResponse

from memory_sim.bindings.d1 import D1Database
from memory_sim.bindings.vectorize import Vector, VectorizeAccount, VectorizeIndex
from memory_sim.cloudflare.client import CloudflareClient
from memory_sim.cloudflare.d1 import CloudflareD1Database
from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount
from memory_sim.env import Env, Settings, build_env
from memory_sim.errors import ConfigError, D1Error, D1ExecError, VectorizeInputError, VectorizeUnavailable
from memory_sim.local.vectorize.oracle import OracleAccount
from memory_sim.retry import Backoff
from memory_sim.testing import TEST_TOKEN, ServerForTests


def test_contracts_are_implemented(server: ServerForTests) -> None:
    account = CloudflareVectorizeAccount(server.client())
    account.create_index("mem", 2, "cosine")
    assert isinstance(account, VectorizeAccount) and isinstance(account.index("mem"), VectorizeIndex)
    assert isinstance(server.new_database(), D1Database)


def test_errors_keep_the_bindings_wording(server: ServerForTests) -> None:
    account = CloudflareVectorizeAccount(server.client())
    with pytest.raises(VectorizeInputError, match=r'^INDEX_GET_ERROR \(code = 3000\): vectorize.index.not_found - Index name "nope"$') as missing:
        account.index("nope")
    assert missing.value.status == 404
    account.create_index("mem", 3, "cosine")
    with pytest.raises(VectorizeInputError, match=r"^VECTOR_QUERY_ERROR \(code = 40006\): invalid query vector, expected 3 dimensions, and got 2 dimensions$"):
        account.index("mem").query([1.0, 0.0])
    db = server.new_database()
    with pytest.raises(D1Error, match="^D1_ERROR: no such table: nowhere"):
        db.prepare("SELECT * FROM nowhere").all()
    with pytest.raises(D1ExecError, match=r"^D1_EXEC_ERROR: Error in line 3: SELECT \* FROM nowhere: "):
        db.exec("CREATE TABLE t (v TEXT)\nINSERT INTO t VALUES ('a')\nSELECT * FROM nowhere")


def test_writes_are_batched_to_the_rest_limit(flaky_server) -> None:
    running, watcher = flaky_server
    local = OracleAccount(max_batch=5000)
    account = running.adopt(local)
    account.create_index("big", 2, "euclidean")
    account.index("big").upsert([Vector(f"v{i}", [i, 1]) for i in range(12_001)])
    assert local.index("big").describe().vector_count == 12_001
    assert sum(p.endswith("/upsert") for p in watcher.paths) == 3


class Flaky:
    """Answers the first `failures` requests with `status`, then lets them through: a real HTTP answer."""

    def __init__(self, status: int, failures: int) -> None:
        self.status, self.left = status, failures
        self.paths: list[str] = []

    async def __call__(self, request: Request, call_next):  # type: ignore[no-untyped-def]
        self.paths.append(request.url.path)
        if request.url.path.endswith("/info") and self.left > 0:
            self.left -= 1
            body = {"success": False, "errors": [{"code": 10001, "message": "try later"}], "messages": [], "result": None}
            return JSONResponse(body, status_code=self.status, headers={"Retry-After": "1"})
        return await call_next(request)


@pytest.fixture
def flaky_server(tmp_path: Path):
    from starlette.middleware.base import BaseHTTPMiddleware

    running = ServerForTests(tmp_path)
    flaky = Flaky(429, 0)
    running.app.add_middleware(BaseHTTPMiddleware, dispatch=flaky)
    with running:
        yield running, flaky


@pytest.mark.parametrize("status", [429, 503])
def test_transient_answers_are_retried_with_backoff(flaky_server, status: int) -> None:
    running, flaky = flaky_server
    slept: list[float] = []
    client = running.client(sleep=slept.append, rng=random.Random(1), backoff=Backoff(attempts=4, base_s=0.5, cap_s=8.0))
    CloudflareVectorizeAccount(client).create_index("mem", 2, "cosine")
    flaky.status, flaky.left = status, 2
    assert CloudflareVectorizeAccount(client).index("mem").describe().vector_count == 0
    assert len(slept) == 2 and all(0 <= s <= 1.0 for s in slept)
    flaky.left = 10
    with pytest.raises(VectorizeUnavailable, match="try later") as gave_up:
        CloudflareVectorizeAccount(client).index("mem").describe()
    assert gave_up.value.status == status and len(slept) == 5


def test_an_unreachable_server_is_unavailable() -> None:
    from memory_sim.server.loopback import free_port

    slept: list[float] = []
    client = CloudflareClient("a", "t", f"http://127.0.0.1:{free_port()}/client/v4", sleep=slept.append, timeout_s=2)
    with pytest.raises(VectorizeUnavailable, match="Connection"):
        CloudflareVectorizeAccount(client).list_indexes()
    assert len(slept) == 3


def test_settings_need_credentials() -> None:
    with pytest.raises(ConfigError, match="CLOUDFLARE_ACCOUNT_ID"):
        build_env(Settings.load(environ={}, backend="cloudflare"))


def test_switching_is_configuration(server: ServerForTests, tmp_path: Path) -> None:
    """The memory system on Env.cloudflare(...) pointed at the local server, with the bundled MiniLM."""
    from memory_sim.memory.models import ShortTermMemory, WorldTime
    from memory_sim.memory.system import MemorySystem
    from memory_sim.sim.clock import SimClock

    account_id = server.fresh_account_id()
    with Env.cloudflare(account_id, TEST_TOKEN, "memories", base_url=server.base_url, data_dir=tmp_path,
                        embed_model="sentence-transformers/all-MiniLM-L6-v2") as env:
        assert isinstance(env.DB, CloudflareD1Database)
        clock = SimClock()
        system = MemorySystem(env, clock=clock)
        system.remember(ShortTermMemory("margaret", "Tom the blacksmith fixed my oven door.", 0.9, WorldTime(1, 9)))
        system.remember(ShortTermMemory("margaret", "The river flooded the lower field.", 0.9, WorldTime(1, 10)))
        system.remember(ShortTermMemory("tom", "I sold a horseshoe to the miller.", 0.9, WorldTime(1, 11)))
        found = system.recall("margaret", "who repaired the oven?")
        assert found[0].text.startswith("Tom the blacksmith") and {r.npc_id for r in found} == {"margaret"}
        assert env.VECTORIZE.describe().vector_count == 3
    settings = Settings.load(environ={"MEMORY_SIM_BACKEND": "cloudflare", "CLOUDFLARE_ACCOUNT_ID": account_id,
                                      "CLOUDFLARE_API_TOKEN": TEST_TOKEN, "CLOUDFLARE_BASE_URL": server.base_url,
                                      "MEMORY_SIM_MODEL": "sentence-transformers/all-MiniLM-L6-v2", "MEMORY_SIM_DATA": str(tmp_path)})
    with build_env(settings) as again:  # the same data, found by name
        assert again.VECTORIZE.describe().vector_count == 3


LIVE = os.environ.get("CLOUDFLARE_ACCOUNT_ID") and os.environ.get("CLOUDFLARE_API_TOKEN")


@pytest.mark.skipif(not LIVE, reason="live Cloudflare tests need CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN")
def test_live_account_lists_indexes_and_databases() -> None:
    from memory_sim.cloudflare.d1 import CloudflareD1Account

    client = CloudflareClient(os.environ["CLOUDFLARE_ACCOUNT_ID"], os.environ["CLOUDFLARE_API_TOKEN"])
    assert isinstance(CloudflareVectorizeAccount(client).list_indexes(), list)
    assert isinstance(CloudflareD1Account(client).list(), list)
