"""HashingEmbedder: deterministic, unit-norm, similar for shared words."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_sim.bindings.ai import Embedder
from memory_sim.embedding.fake import HashingEmbedder


def test_satisfies_the_embedder_contract() -> None:
    embedder = HashingEmbedder(dimensions=32, model="fake/x")
    assert isinstance(embedder, Embedder)
    assert embedder.model == "fake/x" and embedder.dimensions == 32
    vectors = embedder.embed(["a", "b c"])
    assert vectors.shape == (2, 32) and vectors.dtype == np.float32


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=5))
def test_unit_norm_and_deterministic(texts: list[str]) -> None:
    first = HashingEmbedder().embed(texts)
    second = HashingEmbedder().embed(texts)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, rtol=1e-5)


def test_shared_words_are_more_similar() -> None:
    embedder = HashingEmbedder(dimensions=256)
    anchor, near, far = embedder.embed(
        ["the blacksmith forged a sword", "a sword forged by the blacksmith", "rain fell over the harbour"]
    )
    assert float(anchor @ near) > float(anchor @ far)
    reordered = embedder.embed(["a sword the blacksmith forged"])[0]
    assert float(anchor @ reordered) > 0.999  # same words, different order


def test_counts_calls() -> None:
    embedder = HashingEmbedder()
    embedder.embed(["x"])
    embedder.embed(["y"], query=True)
    assert embedder.calls == 2
