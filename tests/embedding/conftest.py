"""Shared fixtures for the embedding tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from embedding_fakes import CountingAi, build_bge_shaped_model

from memory_sim.local.ai.onnx_cache import ONNX_CACHE_ENV


@pytest.fixture(scope="session", autouse=True)
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One ONNX export cache for the session (each model is exported once), never the user's own cache."""
    cache = tmp_path_factory.mktemp("onnx-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ONNX_CACHE_ENV, str(cache))
        yield cache


@pytest.fixture(scope="session")
def bge_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small BERT of BGE base's width (768-d, CLS pooling + Normalize), random weights."""
    return build_bge_shaped_model(tmp_path_factory.mktemp("bge"), layers=2, intermediate=1024)


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
