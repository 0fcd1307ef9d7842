"""An aspect classifier fitted on labelled memories: multinomial logistic regression over a memory's sentence
embedding, its cue words (aspects.py) and its type, fitted by plain gradient descent on the examples in
exemplars.py (the labelled set's tuning half) the first time an embedding function asks, then kept for it.

Deterministic (fixed start, fixed steps, no sampling) and small (about 400 examples, 400 features), so fitting
takes well under a second of CPU; pure in effect (the cache holds only what the embedding function gives).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

try:  # installed with sentence-transformers (through scikit-learn); without it BLAS keeps its own threads
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - the fit is the same, only slower on a crowded machine
    threadpool_limits = None

from memory_sim.memory.beliefs.aspects import ASPECTS, CUES
from memory_sim.memory.beliefs.exemplars import EXAMPLES

Embed = Callable[[Sequence[str]], np.ndarray]
TYPES = ("event", "relationship", "opinion", "place")
EMBEDDING_SCALE = 10.0  # a unit embedding's entries (about 0.05 each) brought to the scale of the flags
CUE_SCALE = 2.0  # a cue word's feature value
STEPS, LEARNING_RATE, L2 = 300, 0.5, 1e-3


def features(vector: np.ndarray, lowered: str, type: str) -> np.ndarray:
    """A memory's features: its unit embedding, one flag per aspect whose cue words it has, its type one-hot."""
    cues = [CUE_SCALE * bool(pattern.search(lowered)) for pattern in CUES.values()]
    kinds = [1.0 * (type == kind) for kind in TYPES]
    return np.concatenate([EMBEDDING_SCALE * np.asarray(vector, dtype=np.float64), cues, kinds, [1.0]])


@lru_cache(maxsize=4)
def fitted(embed: Embed) -> np.ndarray:
    """Weights (features x aspects) fitted on the examples with `embed`."""
    vectors = np.asarray(embed([text for text, _, _ in EXAMPLES]), dtype=np.float64)
    x = np.stack([features(v, text.lower(), type) for v, (text, type, _) in zip(vectors, EXAMPLES, strict=True)])
    y = np.zeros((len(EXAMPLES), len(ASPECTS)))
    y[np.arange(len(EXAMPLES)), [ASPECTS.index(aspect) for _, _, aspect in EXAMPLES]] = 1.0
    weights = np.zeros((x.shape[1], len(ASPECTS)))
    with _one_blas_thread():  # hundreds of small products: threads only wait on each other (11 s vs 0.9 s)
        for _ in range(STEPS):
            gradient = x.T @ (_softmax(x @ weights) - y) / len(x) + L2 * weights
            weights -= LEARNING_RATE * gradient
    return weights


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    if threadpool_limits is None:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def probabilities(vector: np.ndarray, lowered: str, type: str, embed: Embed) -> dict[str, float]:
    """Each aspect's probability for a memory with this embedding, text (lower-cased) and type."""
    row = _softmax(features(vector, lowered, type)[None, :] @ fitted(embed))[0]
    return {aspect: float(p) for aspect, p in zip(ASPECTS, row, strict=True)}


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    result: np.ndarray = shifted / shifted.sum(axis=1, keepdims=True)
    return result
