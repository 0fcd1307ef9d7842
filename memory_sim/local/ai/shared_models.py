"""Loaded local models shared by every `LocalAi` of the process, so a second Env over the same model (the
inspector opens a stopped folder for each request) reuses the loaded model instead of loading it again.

A model is shared when everything that shapes the loaded object is the same: its name, folder and that folder's
files (sizes and mtimes: new weights in the same folder load anew), the device, the runtime, the threads and the
ONNX export cache. Nothing closes a shared model: an Env's close leaves it to the others, and it lives as long as
the process (one per key; a key whose files changed replaces its older entry).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from memory_sim.local.ai.models import LocalModel
from memory_sim.local.ai.onnx_cache import fingerprint

T = TypeVar("T")  # what a load makes: an Encoder, or a whole sentence-transformers model (sentence_models)
__all__ = ["ModelKey", "forget_models", "model_key", "model_loads", "shared_model"]


@dataclass(frozen=True)
class ModelKey:
    """What makes two loads of a model the same loaded object."""

    name: str
    folder: str
    device: str
    runtime: str
    threads: int
    onnx_cache: str


@dataclass
class _Entry:
    files: str  # the folder's fingerprint when the model was loaded
    encoder: Any


_lock = threading.Lock()  # guards the dicts below; a load itself holds only its key's lock
_entries: dict[ModelKey, _Entry] = {}
_key_locks: dict[ModelKey, threading.Lock] = {}
_loads = 0


def model_key(found: LocalModel, device: str, runtime: str, threads: int, onnx_cache: Path) -> ModelKey:
    return ModelKey(found.name, str(found.path.resolve()), device, runtime, threads, str(onnx_cache))


def shared_model(key: ModelKey, folder: Path, open_model: Callable[[], T]) -> T:
    """The loaded model for `key`, loading it with `open_model` when this process has not yet, or when the
    folder's files changed since. Loads of one key wait for each other; loads of other keys run alongside."""
    global _loads
    files = json.dumps(fingerprint(folder), sort_keys=True)
    with _lock:
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:
        with _lock:
            entry = _entries.get(key)
        if entry is not None and entry.files == files:
            loaded: T = entry.encoder
            return loaded
        encoder = open_model()
        with _lock:
            _entries[key] = _Entry(files, encoder)
            _loads += 1
        return encoder


def model_loads() -> int:
    """How many times this process has loaded a local model (not counting reuses)."""
    with _lock:
        return _loads


def forget_models() -> None:
    """Drops every shared model (their memory goes once no LocalAi holds them); the next use loads anew."""
    with _lock:
        _entries.clear()
