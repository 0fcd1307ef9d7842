"""An aspect classifier fitted on labelled memories: multinomial logistic regression over a memory's sentence
embedding, its cue words (aspects.py) and its type, fitted by plain gradient descent on the examples in
exemplars.py (the labelled set's tuning half).

Never fitted at run time for the bundled MiniLM: its weights ship beside this module (aspect_weights.py, made by
scripts/fit_aspect_model.py). Any other model is fitted once, on first use, and its weights cached on disk by model
name and TRAINING_HASH; in the process, one set of weights per model name and training inputs serves every env
(nothing here keeps an embedder alive). Weights are used only for the model whose vectors of the probe texts they
were stored with, and only for the training inputs they were fitted on: a stale file is refitted, with a log line.

Deterministic (fixed start, fixed steps, no sampling) and small (about 900 examples, 400 features).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import numpy as np

try:  # installed with sentence-transformers (through scikit-learn); without it BLAS keeps its own threads
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - the fit is the same, only slower on a crowded machine
    threadpool_limits = None

from memory_sim.memory.beliefs import aspect_weights
from memory_sim.memory.beliefs.aspect_weights import AspectWeights
from memory_sim.memory.beliefs.aspects import ASPECTS, CUES, SPOKEN
from memory_sim.memory.beliefs.exemplars import EXAMPLES

log = logging.getLogger(__name__)

Embed = Callable[[Sequence[str]], np.ndarray]
TYPES = ("event", "relationship", "opinion", "place")
EMBEDDING_SCALE = 10.0  # a unit embedding's entries (about 0.05 each) brought to the scale of the flags
CUE_SCALE = 2.0  # a cue word's feature value
STEPS, LEARNING_RATE, L2 = 300, 0.5, 1e-3
# Two paraphrases sharing no word, twice: a model that reads meaning puts each pair close and the pairs apart; a
# bag of hashed words cannot (its vectors of texts with no word in common are orthogonal). Their vectors also
# stamp the stored weights: the same name with other vectors is another model.
PROBES = (
    "The physician treated the sick child.", "A doctor cured an ill kid.",
    "Floodwaters swept away our bridge.", "The river's torrent destroyed a crossing.",
)
MEANING_MARGIN = 0.15  # each paraphrase pair this much closer than any unrelated pair


def _training_hash() -> str:
    """What the fit reads besides the model's vectors: examples, aspects, cue words, types, scales and steps."""
    inputs = {"examples": EXAMPLES, "aspects": ASPECTS, "cues": {a: p.pattern for a, p in CUES.items()},
              "types": TYPES, "spoken": [SPOKEN, "own block"], "scales": [EMBEDDING_SCALE, CUE_SCALE],
              "fit": [STEPS, LEARNING_RATE, L2], "probes": PROBES}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode("utf-8")).hexdigest()


TRAINING_HASH = _training_hash()


def features(vector: np.ndarray, lowered: str, type: str) -> np.ndarray:
    """A memory's features: its unit embedding, one flag per aspect whose cue words it has, its type one-hot, and
    whether it is a line of talk (opened by SPOKEN). A line of talk's embedding fills a block of its own, so what the
    model learns from small talk (which leans to no state far more) leaves narrated memories as they were read."""
    talk = lowered.startswith(SPOKEN.lower())
    embedding = EMBEDDING_SCALE * np.asarray(vector, dtype=np.float64)
    blocks = (np.zeros_like(embedding), embedding) if talk else (embedding, np.zeros_like(embedding))
    cues = [CUE_SCALE * bool(pattern.search(lowered)) for pattern in CUES.values()]
    kinds = [1.0 * (type == kind) for kind in TYPES]
    return np.concatenate([*blocks, cues, kinds, [1.0 * talk, 1.0]])


def fit(vectors: np.ndarray) -> np.ndarray:
    """Weights (features x aspects) fitted on the examples, given the model's vectors of their texts."""
    vectors = np.asarray(vectors, dtype=np.float64)
    x = np.stack([features(v, text.lower(), type) for v, (text, type, _) in zip(vectors, EXAMPLES, strict=True)])
    y = np.zeros((len(EXAMPLES), len(ASPECTS)))
    y[np.arange(len(EXAMPLES)), [ASPECTS.index(aspect) for _, _, aspect in EXAMPLES]] = 1.0
    weights = np.zeros((x.shape[1], len(ASPECTS)))
    with _one_blas_thread():  # hundreds of small products: threads only wait on each other (11 s vs 0.9 s)
        for _ in range(STEPS):
            gradient = x.T @ (_softmax(x @ weights) - y) / len(x) + L2 * weights
            weights -= LEARNING_RATE * gradient
    return weights


def fit_for(model: str, embed: Embed) -> AspectWeights:
    """The weights fitted with `embed` (the model's vectors of the examples), stamped for `model`."""
    vectors = np.asarray(embed([text for text, _, _ in EXAMPLES]), dtype=np.float64)
    probes = np.asarray(embed(list(PROBES)), dtype=np.float32)
    return AspectWeights(fit(vectors), model, TRAINING_HASH, probes)


def carries_meaning(probes: np.ndarray) -> bool:
    """Whether vectors of PROBES read meaning: each paraphrase pair closer than any unrelated pair by the margin."""
    v = np.asarray(probes, dtype=np.float64)
    pairs = [float(v[0] @ v[1]), float(v[2] @ v[3])]
    unrelated = [float(v[i] @ v[j]) for i in (0, 1) for j in (2, 3)]
    return min(pairs) - max(unrelated) >= MEANING_MARGIN


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    if threadpool_limits is None:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def probabilities(vector: np.ndarray, lowered: str, type: str, embed: Embed) -> dict[str, float]:
    """Each aspect's probability for a memory with this embedding (made by `embed`), text (lower-cased) and
    type."""
    row = _softmax(features(vector, lowered, type)[None, :] @ weights_for(embed).weights)[0]
    return {aspect: float(p) for aspect, p in zip(ASPECTS, row, strict=True)}


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    result: np.ndarray = shifted / shifted.sum(axis=1, keepdims=True)
    return result


# --- which weights serve an embedding function ---------------------------------------------------------------

_lock = threading.RLock()
_fitted: dict[tuple[str | None, str], list[AspectWeights]] = {}  # (model name, training hash) -> weights
_probed: weakref.WeakKeyDictionary[Any, np.ndarray] = weakref.WeakKeyDictionary()  # embedder -> its probe vectors
_served: weakref.WeakKeyDictionary[Any, AspectWeights] = weakref.WeakKeyDictionary()  # embedder -> its weights


def model_name(embed: Embed) -> str | None:
    """The model behind an embedding function: its `model`, or its embedder's (a bound `embedder.embed`)."""
    for holder in (embed, getattr(embed, "__self__", None), getattr(embed, "embedder", None)):
        name = getattr(holder, "model", None)
        if isinstance(name, str):
            return name
    return None


def _owner(embed: Embed) -> Any:
    """What an embedding function's vectors come from: the embedder a bound method or wrapper runs, else itself."""
    for holder in (getattr(embed, "__self__", None), getattr(embed, "embedder", None)):
        if holder is not None:
            return holder
    return embed


def probe_vectors(embed: Embed) -> np.ndarray:
    """The function's vectors of PROBES, asked once per embedder (weakly held: the embedder may go)."""
    owner = _owner(embed)
    with _lock:
        found = _remembered(_probed, owner)
    if found is None:
        found = np.asarray(embed(list(PROBES)), dtype=np.float32)
        with _lock:
            _remember(_probed, owner, found)
    return found


def weights_for(embed: Embed) -> AspectWeights:
    """The weights for the model behind `embed`: kept in the process, else shipped, else cached on disk, else
    fitted now (embedding the examples: seconds) and cached on disk. Each is used only when its stamp matches."""
    owner = _owner(embed)
    with _lock:
        found = _remembered(_served, owner)
        if found is None:
            found = _weights(model_name(embed), probe_vectors(embed), embed)
            _remember(_served, owner, found)
    return found


def _weights(name: str | None, probes: np.ndarray, embed: Embed) -> AspectWeights:
    kept = _fitted.setdefault((name, TRAINING_HASH), [])
    found = next((w for w in kept if w.fits(name, TRAINING_HASH, probes)), None)
    if found is None:
        found = _stored(name, probes) or _fit_and_store(name, probes, embed)
        kept.append(found)
    return found


def _stored(name: str | None, probes: np.ndarray) -> AspectWeights | None:
    """The shipped weights, else the disk cache's, where their stamp matches; a stale shipped file said once."""
    if name is None:
        return None
    shipped = aspect_weights.load(aspect_weights.SHIPPED)
    if shipped is not None and shipped.model == name:
        if shipped.fits(name, TRAINING_HASH, probes):
            log.debug("aspect model for %s: the shipped weights", name)
            return shipped
        why = "other training examples or cue words" if shipped.training_hash != TRAINING_HASH else "other vectors"
        log.warning("the shipped aspect weights for %s were fitted on %s: fitting once here instead (refresh them "
                    "with `%s`)", name, why, aspect_weights.FIT_COMMAND)
    path = aspect_weights.cache_path(name, TRAINING_HASH)
    cached = aspect_weights.load(path)
    if cached is not None and cached.fits(name, TRAINING_HASH, probes):
        log.info("aspect model for %s: weights cached in %s", name, path)
        return cached
    return None


def _fit_and_store(name: str | None, probes: np.ndarray, embed: Embed) -> AspectWeights:
    started = time.perf_counter()
    found = fit_for(name or "unnamed", embed)
    took = time.perf_counter() - started
    if name is None or not carries_meaning(probes):  # a test embedder's: kept in the process only
        log.info("aspect model fitted for %s in %.1f s (kept in this process)", name or "an unnamed embedder", took)
        return found
    path = aspect_weights.cache_path(name, TRAINING_HASH)
    try:
        aspect_weights.save(path, found)
    except OSError as exc:
        log.warning("aspect model fitted for %s in %.1f s; not cached (%s)", name, took, exc)
        return found
    log.info("aspect model fitted for %s on %d examples in %.1f s; cached in %s", name, len(EXAMPLES), took, path)
    return found


def _remembered(memo: weakref.WeakKeyDictionary[Any, Any], owner: Any) -> Any:
    try:
        return memo.get(owner)
    except TypeError:  # neither hashable nor weakly referable: asked again each time
        return None


def _remember(memo: weakref.WeakKeyDictionary[Any, Any], owner: Any, value: Any) -> None:
    with suppress(TypeError):  # neither hashable nor weakly referable: not remembered
        memo[owner] = value
