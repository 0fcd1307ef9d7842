"""The Cloudflare backends against a real local server on loopback (the session's), and the live account
when CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN are set."""

from __future__ import annotations

from typing import Iterator

import pytest

from memory_sim.testing import ServerForTests, scratch_folder
from tests.cloudflare.move_helpers import catalogue, production  # noqa: F401  (fixtures of the move tests)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerForTests]:
    with scratch_folder(tmp_path_factory.mktemp("cf-server")) as folder, ServerForTests(folder) as running:
        yield running
