"""Embedding models by name: the model factory (`load_embedder`) and what a face needs to know of the local
models (`memory-sim models`, `--model`), so that nothing above the builder imports `memory_sim.local.ai`.

    load_embedder("default")        the embedded default: BGE base where its weights are here, else bundled MiniLM
    load_embedder(name, ai=remote)  the same name over another `Ai` (Workers AI, the owner's API, OpenAI)
    model_statuses(), default_model(), find_local_model(name)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_sim.bindings.ai import BGE_BASE, DEFAULT_MODEL, Ai, Embedder, Pooling
from memory_sim.bindings.ai_models import CATALOGUE, QWEN3_DEFAULT_INSTRUCTION, QWEN3_EMBEDDING
from memory_sim.errors import ConfigError
from memory_sim.local.ai.catalogue_models import catalogue_statuses, locate_catalogue_model
from memory_sim.local.ai.models import (
    MINILM,
    LocalModel,
    ModelStatus,
    canonical,
    fallback_note,
    locate,
    resolve_default,
)
from memory_sim.local.ai.models import model_statuses as _statuses
from memory_sim.local.ai.sentence_models import qwen3_query_prompt

__all__ = ["BGE_BASE", "MINILM", "default_model", "fallback_note", "find_local_model", "load_embedder", "local_ai",
           "model_statuses", "preload"]


def local_ai(**options: Any) -> Ai:
    """Workers AI on this machine: local models, each loaded on first use (`options`: LocalAi's, e.g. `model_dirs`,
    `device`)."""
    from memory_sim.local.ai.local_ai import LocalAi

    return LocalAi(**options)


def load_embedder(
    model: str = DEFAULT_MODEL, *, cache_path: str | Path | None = None, ai: Ai | None = None,
    pooling: Pooling | None = None,
) -> Embedder:
    """The embedder for a model name: `default`, a known name or alias, or a sentence-transformers folder.

    With no `ai`, a `LocalAi` runs the model here. The pooling is the model's own (CLS for BGE, as we also send
    to Workers AI; mean for MiniLM); a remote `ai` gets `pooling` (the one an index records), else CLS, the
    pooling BGE was trained with."""
    from memory_sim.embedding.cache import EmbeddingCache
    from memory_sim.embedding.embedder import AiEmbedder

    cache = EmbeddingCache(cache_path)
    ai = ai if ai is not None else local_ai()
    pooling = pooling or "cls"
    name = canonical(model)
    model_dirs = getattr(ai, "model_dirs", None)
    if _runs_locally(ai):
        found = _catalogue_model(name, model_dirs) if name in CATALOGUE else locate(name, model_dirs)
        if found is None:
            raise ConfigError(f"unknown embedding model {model!r}: expected 'default', {BGE_BASE!r}, "
                              "'sentence-transformers/all-MiniLM-L6-v2' or a sentence-transformers folder")
        name, pooling = found.name, found.pooling
    elif name == DEFAULT_MODEL:
        name = BGE_BASE  # the production default on Workers AI
    # Qwen3-Embedding reads a query with its task's instruction in front, a document without (its model card)
    instruction = qwen3_query_prompt(QWEN3_DEFAULT_INSTRUCTION) if name == QWEN3_EMBEDDING else None
    return AiEmbedder(ai, name, pooling=pooling, cache=cache, query_instruction=instruction)


def preload(ai: Ai, model: str) -> Callable[[], None]:
    """Starts loading a local model on a background thread, so that opening the rest of an Env (the index, D1)
    and the model's load overlap; the first embedding waits for it (LocalAi loads a model once, under a lock).
    A load that fails here is left to that first embedding, which loads again and says why. Returns a function
    that waits for the load (an Env's close calls it, so no load is cut off at exit)."""
    load = getattr(ai, "load", None)
    if not _runs_locally(ai) or load is None:
        return lambda: None

    def run() -> None:
        with contextlib.suppress(Exception):
            load(model)

    thread = threading.Thread(target=run, name="memory-sim-model-load", daemon=True)
    thread.start()
    return thread.join


def _catalogue_model(name: str, model_dirs: Any) -> LocalModel | None:
    """A Workers AI catalogue model that embeds (not the reranker), from where its setting points."""
    return locate_catalogue_model(name, model_dirs) if CATALOGUE[name].dimensions is not None else None


def _runs_locally(ai: Ai) -> bool:
    return getattr(ai, "is_local", False) is True


def model_statuses() -> list[ModelStatus]:
    """Each known model, whether it can run here, and where or why not (`memory-sim models`)."""
    return [*_statuses(), *catalogue_statuses()]


def default_model() -> str:
    """The model `default` means on this machine: BGE base where its weights are here, else MiniLM."""
    return resolve_default()


def find_local_model(name: str) -> LocalModel | None:
    """The local model behind a name, alias or folder; None when nothing here knows the name. ConfigError when
    the name is known but its weights are not on this machine."""
    if name in CATALOGUE:  # Workers AI's newer embedding models (not the reranker: it embeds nothing)
        return locate_catalogue_model(name) if CATALOGUE[name].dimensions is not None else None
    return locate(canonical(name))
