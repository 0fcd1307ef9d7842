"""`LocalAi`: a local Workers AI for text embeddings. sentence-transformers models behind `Ai.run`.

`run(model, {"text": ..., "pooling": "cls" | "mean"})` answers `{"shape", "data", "pooling"}` as Workers AI does,
with its limits (1..100 texts, none empty) and its error wording. Pooling is computed here from the model's
token embeddings, so both Workers AI poolings are honoured whatever the folder's own pooling module says; rows
are L2-normalised as the sentence-transformers configs of BGE and MiniLM do. Texts longer than the model's
window (512 tokens for BGE, 256 for MiniLM as trained) are truncated, not refused. torch loads on first run.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from memory_sim.bindings.ai import Pooling
from memory_sim.bindings.limits import AI_BGE_MAX_TOKENS
from memory_sim.bindings.ai_validation import no_such_model, output, parse_inputs
from memory_sim.errors import AiError, ConfigError
from memory_sim.local.ai.models import KNOWN_DIMENSIONS, LocalModel, canonical, locate


class LocalAi:
    """Runs local sentence-transformers models; loads each model once, on its first use."""

    is_local = True

    def __init__(self, *, model_dirs: dict[str, Path] | None = None, device: str = "cpu") -> None:
        self.model_dirs = dict(model_dirs or {})
        self.device = device
        self._loaded: dict[str, Any] = {}
        self._lock = threading.Lock()

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        texts, pooling = parse_inputs(inputs)
        found = self.locate(model)
        vectors = embed_texts(self._load(found), texts, pooling)
        return output(vectors, int(vectors.shape[1]), pooling)

    def model_dimensions(self, model: str) -> int | None:
        """The width without running the model, when the folder's config says it."""
        found = self.locate(model)
        return found.dimensions or KNOWN_DIMENSIONS.get(found.name)

    def locate(self, model: str) -> LocalModel:
        """The model behind a name, alias, `default` or folder; AiError "No such model" when unknown."""
        found = locate(canonical(model), self.model_dirs)
        if found is None:
            raise no_such_model(model)
        return found

    def _load(self, found: LocalModel) -> Any:
        with self._lock:
            if found.name not in self._loaded:
                self._loaded[found.name] = load_sentence_transformer(found.path, self.device)
            return self._loaded[found.name]


def load_sentence_transformer(folder: Path, device: str) -> Any:
    """A SentenceTransformer from a local folder, with the hub switched off: never downloads."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no "Loading weights" bars in CLI output

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
