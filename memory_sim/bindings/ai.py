"""The Workers AI contract for text embeddings (`env.AI.run(model, inputs)`), and the `Embedder` the memory
system uses on top of it.

`run("@cf/baai/bge-base-en-v1.5", {"text": [...], "pooling": "cls"})` returns
`{"shape": [n, d], "data": [[...], ...], "pooling": "cls"}`: at most 100 texts, none empty; longer inputs than
the model's window are truncated. Backends: local sentence-transformers models, Workers AI over REST, OpenAI.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

Pooling = Literal["cls", "mean"]
BGE_BASE = "@cf/baai/bge-base-en-v1.5"
OPENAI_SMALL = "text-embedding-3-small"
DEFAULT_MODEL = "default"  # the embedded default: BGE base where its weights are here, else bundled MiniLM


@runtime_checkable
class Ai(Protocol):
    """`env.AI`: runs a model on JSON-shaped inputs, as Workers AI does."""

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]: ...


@runtime_checkable
class Embedder(Protocol):
    """Texts to unit vectors for one model; cached and batched. What the memory system holds."""

    @property
    def model(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """float32 array of shape (len(texts), dimensions); `query=True` applies a query instruction if the
        model has one (BGE)."""
        ...
