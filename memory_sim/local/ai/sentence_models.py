"""Workers AI catalogue models run whole by sentence-transformers, modules and all, rather than by the local
encoders' transformer-plus-pooling: EmbeddingGemma (mean pooling, then two Dense projections, then Normalize),
Qwen3-Embedding (last-token pooling, Normalize; a query is prefixed with its instruction) and the cross-encoder
bge-reranker-base (`CrossEncoder`: one score per query-context pair). The library runs what the folder's
modules.json lists, so nothing of the models' pooling is written here. Always on torch (the ONNX export covers the
local encoders only). torch and sentence-transformers are imported inside functions only: a process that never
runs these models does not pay for them.

- EmbeddingGemma: `{text}` -> each text's vector, no prompt added (the folder's `default_prompt_name`, none for
  google/embeddinggemma-300m); the rows are unit vectors.
- Qwen3-Embedding: queries are encoded with the prompt `Instruct: {instruction}\\nQuery:` (Qwen3-Embedding's own
  query format), documents without one; rows: the queries', then the documents'.
- bge-reranker-base: each context's score for the query, the model's logit through a sigmoid (CrossEncoder's
  default for a one-label model), best first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_sim.bindings.ai_models import BGE_RERANKER, EMBEDDINGGEMMA, QWEN3_EMBEDDING, ModelRequest
from memory_sim.errors import AiError, ConfigError

RUN_WHOLE = frozenset({EMBEDDINGGEMMA, QWEN3_EMBEDDING, BGE_RERANKER})
CONTEXT_WINDOW = {QWEN3_EMBEDDING: 8192}  # tokens: the model's `context_window` in its Workers AI schema


def qwen3_query_prompt(instruction: str) -> str:
    """Qwen3-Embedding's query format: the task's instruction, then the query."""
    return f"Instruct: {instruction}\nQuery:"


@dataclass(frozen=True)
class WholeModel:
    """A loaded sentence-transformers model (SentenceTransformer or CrossEncoder) and the catalogue name it runs."""

    name: str
    model: Any


def load_whole_model(name: str, folder: Path, device: str) -> WholeModel:
    """The model in `folder`, loaded offline (never downloads); ConfigError in one line when it cannot be."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from sentence_transformers import CrossEncoder, SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        if name == BGE_RERANKER:
            return WholeModel(name, CrossEncoder(str(folder), device=device, local_files_only=True))
        model = SentenceTransformer(str(folder), device=device, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load {name} from {folder}: {' '.join(str(exc).split())}") from exc
    if name in CONTEXT_WINDOW and model.max_seq_length:
        model.max_seq_length = min(model.max_seq_length, CONTEXT_WINDOW[name])
    return WholeModel(name, model)


def run_whole_model(loaded: WholeModel, request: ModelRequest) -> tuple[list[list[float]] | None, list[float]]:
    """The request run: (rows, []) for an embedding model, (None, scores in the contexts' order) for the reranker.
    AiError when the model fails (e.g. out of memory)."""
    import torch

    try:
        with torch.inference_mode():
            if loaded.name == BGE_RERANKER:
                pairs = [(request.queries[0], text) for text in request.texts]
                return None, [float(s) for s in loaded.model.predict(pairs, convert_to_numpy=True)]
            rows: list[list[float]] = []
            if request.queries:
                prompt = qwen3_query_prompt(request.instruction or "")
                rows += _encode(loaded.model, request.queries, prompt)
            if request.texts:
                rows += _encode(loaded.model, request.texts, None)
            return rows, []
    except RuntimeError as exc:
        raise AiError(f"AiError: the local model failed: {exc}") from exc


def _encode(model: Any, texts: list[str], prompt: str | None) -> list[list[float]]:
    vectors = model.encode(texts, prompt=prompt, normalize_embeddings=True, convert_to_numpy=True)
    return [[float(x) for x in row] for row in vectors]
