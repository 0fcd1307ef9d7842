"""The torch runtime: a sentence-transformers model run by its own transformer, pooled as Workers AI pools.

The fallback of the ONNX runtime and the way to run a model on a GPU. torch is imported inside functions only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from memory_sim.bindings.ai import Pooling
from memory_sim.bindings.limits import AI_BGE_MAX_TOKENS
from memory_sim.errors import AiError, ConfigError


class Encoder(Protocol):
    """One loaded model: texts to L2-normalised float32 rows, with the pooling asked for."""

    runtime: str  # "onnx" or "torch": what runs the model

    def embed(self, texts: list[str], pooling: Pooling) -> np.ndarray: ...


class TorchEncoder:
    """A SentenceTransformer's transformer run by torch, pooled here."""

    runtime = "torch"

    def __init__(self, model: Any) -> None:
        self.model = model

    def embed(self, texts: list[str], pooling: Pooling) -> np.ndarray:
        return embed_texts(self.model, texts, pooling)


def load_sentence_transformer(folder: Path, device: str) -> Any:
    """A SentenceTransformer from a local folder, with the hub switched off: never downloads."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Loading weights" bars in CLI output

    try:
        model = SentenceTransformer(str(folder), device=device, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load the sentence-transformers model in {folder}: {exc}") from exc
    model.max_seq_length = min(model.max_seq_length or AI_BGE_MAX_TOKENS, AI_BGE_MAX_TOKENS)
    return model


def embed_texts(model: Any, texts: list[str], pooling: Pooling) -> np.ndarray:
    """One forward pass of the model's transformer, pooled as Workers AI pools, L2-normalised."""
    import torch

    # `preprocess` replaced `tokenize` in sentence-transformers 6; both pad to the longest text and truncate.
    tokenize = getattr(model, "preprocess", None) or model.tokenize
    features = tokenize(texts)
    features = {k: v.to(model.device) if hasattr(v, "to") else v for k, v in features.items()}
    try:
        with torch.inference_mode():
            tokens = model[0](features)["token_embeddings"]
            pooled = pool(tokens, features["attention_mask"], pooling)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
    except RuntimeError as exc:  # e.g. out of memory
        raise AiError(f"AiError: the local model failed: {exc}") from exc
    return pooled.float().cpu().numpy()


def pool(tokens: Any, mask: Any, pooling: Pooling) -> Any:
    """'cls': the first token's embedding; 'mean': the average over real (unpadded) tokens."""
    if pooling == "cls":
        return tokens[:, 0]
    weights = mask.unsqueeze(-1).to(tokens.dtype)
    return (tokens * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
