"""The aspect model's fitted weights on disk, stamped with what they were fitted from, so that none is ever used
for another model or other training examples.

    aspect_weights.npz (beside this module)   shipped, fitted for the bundled MiniLM by scripts/fit_aspect_model.py
    <cache>/aspect_model/<model>-<hash>.npz   fitted here once for any other model, or when the shipped file is stale

`<cache>` is $XDG_CACHE_HOME/memory_sim, else ~/.cache/memory_sim (where the ONNX exports live too). Each file
holds the weights, the model's name, the hash of the training inputs (`aspect_model.TRAINING_HASH`) and the model's
vectors of a few probe texts: weights are used only when name and hash match and the embedder gives those vectors
again (the name alone could be another model's: hashing vectors served under BGE's name).
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

SHIPPED = Path(__file__).with_name("aspect_weights.npz")
FIT_COMMAND = "python scripts/fit_aspect_model.py"  # refreshes SHIPPED after the exemplars or cue words change


@dataclass(frozen=True)
class AspectWeights:
    """Weights (features x aspects) and their stamp: the model, the training hash, the probe texts' vectors."""

    weights: np.ndarray
    model: str
    training_hash: str
    probes: np.ndarray

    def fits(self, model: str | None, training_hash: str, probes: np.ndarray) -> bool:
        """Whether these weights serve a model of this name whose vectors of the probe texts are `probes`, for
        these training inputs (the probe vectors may differ in the last digits: another runtime of one model)."""
        return (model is None or model == self.model) and training_hash == self.training_hash \
            and same_vectors(self.probes, probes)


def same_vectors(a: np.ndarray, b: np.ndarray, floor: float = 0.999) -> bool:
    """Unit rows alike one by one (cosine >= floor): the same model, whichever runtime ran it."""
    if a.shape != b.shape:
        return False
    cosines = np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64), axis=1)
    return bool(np.all(cosines >= floor))


def save(path: Path, found: AspectWeights) -> None:
    """Writes the file whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            np.savez(out, weights=found.weights, model=np.array(found.model), training_hash=np.array(
                found.training_hash), probes=found.probes)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load(path: Path) -> AspectWeights | None:
    """The file's weights and stamp; None when it is missing or unreadable (said in a log line: it is refitted)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            return AspectWeights(np.asarray(data["weights"], np.float64), str(data["model"]),
                                 str(data["training_hash"]), np.asarray(data["probes"], np.float32))
    except (OSError, ValueError, KeyError) as exc:
        log.warning("aspect weights in %s cannot be read (%s); fitting again", path, exc)
        return None


def cache_folder(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memory_sim" / "aspect_model"


def cache_path(model: str, training_hash: str, environ: Mapping[str, str] | None = None) -> Path:
    """One file per model name and training inputs; the name kept readable."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")[-64:] or "model"
    return cache_folder(environ) / f"{slug}-{training_hash[:16]}.npz"
