"""One real uvicorn server on loopback for the session; the official SDK as its client."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import cloudflare
import pytest

from memory_sim.testing import TEST_TOKEN, ServerForTests, scratch_folder


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerForTests]:
    with scratch_folder(tmp_path_factory.mktemp("server")) as folder, ServerForTests(folder) as running:
        yield running


@pytest.fixture
def sdk(server: ServerForTests) -> Iterator[cloudflare.Cloudflare]:
    client = cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=server.base_url, max_retries=0)
    yield client
    client.close()


@pytest.fixture
def account_id(server: ServerForTests) -> str:
    return server.fresh_account_id()


@pytest.fixture
def data_root(server: ServerForTests) -> Path:
    return Path(server.app.state.accounts.root)
