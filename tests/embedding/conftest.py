"""Shared fixtures for the embedding tests."""

from __future__ import annotations

import pytest
from embedding_fakes import CountingAi


@pytest.fixture
def counting_ai() -> CountingAi:
    return CountingAi()


# Cases that hold for the local model only; the Cloudflare (REST) variant of `local_ai` skips them.
LOCAL_ONLY = {
    "test_run_answers_in_workers_ai_shape[cloudflare]": "the REST adapter sends pooling 'cls' when none is given, on purpose",
    "test_missing_bge_says_how_to_provide_it[cloudflare]": "a missing local model is the server's ConfigError, an AiError over REST",
    "test_default_falls_back_to_minilm_and_says_so_once[cloudflare]": "'default' means BGE base on Workers AI, no local fallback",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.name in LOCAL_ONLY:
            item.add_marker(pytest.mark.skip(reason=LOCAL_ONLY[item.name]))
