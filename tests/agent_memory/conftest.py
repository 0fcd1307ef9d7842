"""The Agent Memory contract suite's targets: the local service in process, the Cloudflare adapter over REST
against `memory-sim serve`'s routes on loopback (the local service behind them), and Cloudflare itself when
CLOUDFLARE_ACCOUNT_ID, CLOUDFLARE_API_TOKEN and MEMORY_SIM_AGENT_MEMORY_LIVE=1 are set (skipped otherwise)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent_memory.am_helpers import NOW, Clock, local_service, names

@pytest.fixture(scope="session")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Iterator[Any]:
    from memory_sim.testing import ServerForTests, scratch_folder

    with scratch_folder(tmp_path_factory.mktemp("am-server")) as folder, ServerForTests(
            folder, agent_memory=local_service(clock)) as server:
        yield server


@pytest.fixture(scope="session")
def in_process(clock: Clock) -> Any:
    return local_service(clock).account("acct-local")


def _live() -> Any:
    from memory_sim.builder import open_agent_memory
    from memory_sim.settings import Settings

    return open_agent_memory(Settings.load(backend="cloudflare"))


@pytest.fixture(params=["local", "rest", "cloudflare"])
def account(request: pytest.FixtureRequest, clock: Clock) -> Any:
    """An `AgentMemoryAccount` of each target."""
    clock.value = NOW
    if request.param == "local":
        return request.getfixturevalue("in_process")
    if request.param == "rest":
        from memory_sim.builder import open_agent_memory

        return open_agent_memory(request.getfixturevalue("served").settings("acct-rest"))
    if not (os.environ.get("CLOUDFLARE_ACCOUNT_ID") and os.environ.get("CLOUDFLARE_API_TOKEN")
            and os.environ.get("MEMORY_SIM_AGENT_MEMORY_LIVE") == "1"):
        pytest.skip("Cloudflare's Agent Memory: set CLOUDFLARE_ACCOUNT_ID, CLOUDFLARE_API_TOKEN and "
                    "MEMORY_SIM_AGENT_MEMORY_LIVE=1")
    return _live()


@pytest.fixture
def namespace_name(account: Any) -> Iterator[str]:
    """A fresh namespace, created and deleted around the test."""
    name = f"ms-test-{os.getpid()}-{next(names)}"
    account.create_namespace(name)
    yield name
    try:
        account.delete_namespace(name)
    except Exception:  # deleted by the test itself
        pass


@pytest.fixture
def profile(account: Any, namespace_name: str) -> Any:
    return account.namespace(namespace_name).get_profile("alice")


@pytest.fixture
def memory_sims_wording(request: pytest.FixtureRequest) -> None:
    """For tests that assert memory_sim's own extraction and answers (which sentence becomes which memory, the
    quoted answer): they hold on the local service and through REST to it, not on Cloudflare, whose model writes
    its own summaries and answers."""
    if request.node.callspec.params.get("account") == "cloudflare":
        pytest.skip("asserts memory_sim's extraction and answer wording, not Cloudflare's")
