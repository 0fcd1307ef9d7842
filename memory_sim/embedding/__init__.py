"""Embeddings: texts to unit vectors over any `Ai` binding, cached and batched.

`AiEmbedder` embeds through whatever `Ai` it is given; the model factory that picks one by name is the Env
builder's (`memory_sim.builder.models.load_embedder`), so this layer never imports a backend. `HashingEmbedder`
is a deterministic stand-in for fast tests. Nothing here imports torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_sim.embedding.fake import HashingEmbedder

__all__ = ["AiEmbedder", "EmbeddingCache", "HashingEmbedder", "check_index_model", "describe_model"]

if TYPE_CHECKING:
    from memory_sim.embedding.cache import EmbeddingCache
    from memory_sim.embedding.embedder import AiEmbedder
    from memory_sim.embedding.index_model import check_index_model, describe_model

_LAZY = {
    "AiEmbedder": "memory_sim.embedding.embedder",
    "EmbeddingCache": "memory_sim.embedding.cache",
    "describe_model": "memory_sim.embedding.index_model",
    "check_index_model": "memory_sim.embedding.index_model",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'memory_sim.embedding' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module_name), name)
