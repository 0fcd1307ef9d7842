"""Fast fixtures: the exact Vectorize oracle, sqlite3 D1 and the hashing embedder, all real implementations of
the contracts. `memory_faults.py` wraps them to inject failures."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from memory_env import DIMENSIONS, build_env

from memory_sim.env import Env
from memory_sim.memory.models import MemoryConfig
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock


@pytest.fixture
def clock() -> SimClock:
    return SimClock()


def build_cloudflare_env(clock: Callable[[], float], server: Any) -> Env:
    """The same, through the Cloudflare REST adapters against the local server (the oracle adopted behind it)."""
    from memory_sim.bindings.limits import VECTORIZE_MAX_BATCH_REST
    from memory_sim.builder import build_cloudflare_env
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.local.vectorize.oracle import OracleAccount
    from memory_sim.settings import Settings

    account = server.adopt(OracleAccount(clock=clock, max_batch=VECTORIZE_MAX_BATCH_REST))
    db = server.new_database("memory", account.client.account_id)
    settings = Settings.load(environ={}, backend="cloudflare", account_id=account.client.account_id,
                             api_token=account.client.api_token, database_id=db.database_id, embed_model="fake/hashing")
    return build_cloudflare_env(settings, embedder=HashingEmbedder(DIMENSIONS), client=account.client)


@pytest.fixture(scope="session")
def cloudflare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from memory_sim.testing import ServerForTests, scratch_folder

    with scratch_folder(tmp_path_factory.mktemp("cloudflare-server")) as folder, ServerForTests(folder) as server:
        yield server


@pytest.fixture(params=["local", "cloudflare"])
def env(request: pytest.FixtureRequest, clock: SimClock) -> Env:
    if request.param == "cloudflare":
        return build_cloudflare_env(clock, request.getfixturevalue("cloudflare_server"))
    return build_env(clock)


@pytest.fixture
def system(env: Env, clock: SimClock) -> MemorySystem:
    return MemorySystem(env, clock=clock, config=MemoryConfig())
