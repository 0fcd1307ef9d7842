"""AiEmbedder: cache, batching by length, validation, normalisation; the index-model binding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory_sim.bindings.ai import Embedder
from memory_sim.embedding.cache import EmbeddingCache
from memory_sim.embedding.embedder import AiEmbedder
from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.embedding.index_model import check_index_model, describe_model
from memory_sim.errors import AiError, ConfigError

from embedding_fakes import CountingAi


def test_same_text_twice_costs_one_model_call(counting_ai: CountingAi) -> None:
    embedder = AiEmbedder(counting_ai, "m")
    first = embedder.embed(["a cat", "a dog", "a cat"])
    second = embedder.embed(["a dog", "a cat"])
    assert sum(len(c) for c in counting_ai.calls) == 2  # each distinct text sent once
    np.testing.assert_array_equal(first[[1, 0]], second)
    assert isinstance(embedder, Embedder)


def test_cache_persists_across_processes(tmp_path: Path, counting_ai: CountingAi) -> None:
    path = tmp_path / "cache.sqlite"
    with EmbeddingCache(path) as cache:
        AiEmbedder(counting_ai, "m", cache=cache).embed(["hello there"])
    later = CountingAi()
    with EmbeddingCache(path) as cache:
        again = AiEmbedder(later, "m", cache=cache).embed(["hello there"])
        other_pooling = AiEmbedder(later, "m", pooling="mean", cache=cache)
        other_pooling.embed(["hello there"])
    assert later.calls == [["hello there"]]  # only the mean-pooled one was a miss
    assert again.shape == (1, 16)


def test_batches_are_sorted_by_length_and_capped(counting_ai: CountingAi) -> None:
    texts = [f"w{i} " * (i % 7 + 1) for i in range(10)]
    AiEmbedder(counting_ai, "m", batch_size=4).embed(texts)
    sent = [t for call in counting_ai.calls for t in call]
    assert [len(c) for c in counting_ai.calls] == [4, 4, 2]
    assert [len(t) for t in sent] == sorted((len(t) for t in texts), reverse=True)


def test_rows_are_unit_length_and_in_input_order(counting_ai: CountingAi) -> None:
    texts = ["short", "a much longer text about ships", "mid length"]
    out = AiEmbedder(counting_ai, "m").embed(texts)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(out, HashingEmbedder(16).embed(texts), atol=1e-6)


def test_query_instruction_prefixes_queries_only(counting_ai: CountingAi) -> None:
    embedder = AiEmbedder(counting_ai, "m", query_instruction="Q: ")
    embedder.embed(["x"], query=True)
    embedder.embed(["x"])
    assert counting_ai.calls == [["Q: x"], ["x"]]


def test_empty_text_is_refused_before_any_call(counting_ai: CountingAi) -> None:
    with pytest.raises(AiError, match="Bad input"):
        AiEmbedder(counting_ai, "m").embed(["ok", ""])
    assert counting_ai.calls == []
    assert AiEmbedder(counting_ai, "m").embed([]).shape == (0, 16)


def test_bad_settings_are_config_errors(counting_ai: CountingAi) -> None:
    with pytest.raises(ConfigError):
        AiEmbedder(counting_ai, "m", batch_size=101)
    with pytest.raises(ConfigError):
        AiEmbedder(counting_ai, "m", pooling="max")  # type: ignore[arg-type]


def test_index_model_check_names_both_models() -> None:
    built = HashingEmbedder(64, model="fake/a")
    description = describe_model(built)
    check_index_model(description, HashingEmbedder(64, model="fake/a"))
    check_index_model("an index someone else made", HashingEmbedder(8, model="fake/b"))
    with pytest.raises(ConfigError) as info:
        check_index_model(description, HashingEmbedder(32, model="fake/b"))
    message = str(info.value)
    assert "fake/a (64-d)" in message and "fake/b (32-d)" in message and "memory-sim reembed" in message


def test_index_model_check_catches_pooling(counting_ai: CountingAi) -> None:
    description = describe_model(AiEmbedder(counting_ai, "m", pooling="cls"))
    with pytest.raises(ConfigError, match="cls pooling"):
        check_index_model(description, AiEmbedder(counting_ai, "m", pooling="mean"))
