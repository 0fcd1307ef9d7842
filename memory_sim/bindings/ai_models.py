"""Workers AI's text models beside bge-base (2026), each with its own input schema and output shape, validated
here once; pure, no model. Sources (cloudflare/cloudflare-docs `src/content/workers-ai-models/<name>.json`) and
what is this project's own choice are listed in docs/cloudflare.md.

- `@cf/baai/bge-m3` (1024-d): `{text: str | str[] (1..100), truncate_inputs?}` -> `{shape, data, pooling}`; or
  `{query?, contexts: [{text}] (1..100), truncate_inputs?}` -> without `query` the contexts' embeddings as
  `{response: [[...]], shape, pooling}`, with it `{response: [{id, score}]}` (id: the context's index).
- `@cf/google/embeddinggemma-300m` (768-d): `{text: str | str[]}` -> `{shape, data}`; its schema sets no bounds,
  so bge-base's (1..100 texts, none empty) are applied here.
- `@cf/qwen/qwen3-embedding-0.6b` (1024-d): `{queries?, documents?, text? (an alias of documents), instruction?}`,
  each list 1..32 -> `{shape, data}`: the queries' rows, then the documents'.
- `@cf/baai/omni-bge-base-en-v1.5` (768-d, bge-base's weights): `{text, pooling?: "mean" | "cls"}` as bge-base.
- `@cf/baai/bge-reranker-base` (a cross-encoder): `{query, contexts: [{text}], top_k? >= 1}` ->
  `{response: [{id, score}]}`, best first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from memory_sim.bindings.ai import Pooling
from memory_sim.bindings.ai_validation import POOLINGS, bad_input, text_list

Form = Literal["text", "bge_m3", "qwen3", "rerank"]
QWEN3_DEFAULT_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"

BGE_M3 = "@cf/baai/bge-m3"
EMBEDDINGGEMMA = "@cf/google/embeddinggemma-300m"
QWEN3_EMBEDDING = "@cf/qwen/qwen3-embedding-0.6b"
OMNI_BGE = "@cf/baai/omni-bge-base-en-v1.5"
BGE_RERANKER = "@cf/baai/bge-reranker-base"


@dataclass(frozen=True)
class ModelSpec:
    """One catalogue model: its width (None: a reranker), the most texts one list takes, its input form, the
    pooling field it takes (None: none), and where its weights come from locally: the Hugging Face id and the
    environment variable that points at a sentence-transformers folder of them."""

    name: str
    dimensions: int | None
    max_batch: int
    form: Form
    pooling_field: bool
    hf_id: str
    path_env: str


CATALOGUE: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(BGE_M3, 1024, 100, "bge_m3", False, "BAAI/bge-m3", "MEMORY_SIM_BGE_M3_PATH"),
        ModelSpec(EMBEDDINGGEMMA, 768, 100, "text", False, "google/embeddinggemma-300m",
                  "MEMORY_SIM_EMBEDDINGGEMMA_PATH"),
        ModelSpec(QWEN3_EMBEDDING, 1024, 32, "qwen3", False, "Qwen/Qwen3-Embedding-0.6B",
                  "MEMORY_SIM_QWEN3_EMBEDDING_PATH"),
        ModelSpec(OMNI_BGE, 768, 100, "text", True, "BAAI/bge-base-en-v1.5", "MEMORY_SIM_BGE_PATH"),
        ModelSpec(BGE_RERANKER, None, 100, "rerank", False, "BAAI/bge-reranker-base", "MEMORY_SIM_BGE_RERANKER_PATH"),
    )
}


@dataclass(frozen=True)
class ModelRequest:
    """A validated request: `texts` to embed or score (text, documents or contexts), `queries` (qwen3's queries,
    or the one bge-m3 / reranker query), the pooling asked for, qwen3's instruction, the reranker's top_k, and
    whether bge-m3 was asked in its contexts form."""

    model: str
    texts: list[str]
    queries: list[str] = field(default_factory=list)
    pooling: Pooling | None = None
    instruction: str | None = None
    top_k: int | None = None
    contexts: bool = False


def parse_request(model: str, inputs: Any) -> ModelRequest:
    """The request, validated against the model's own input schema; AiError 5006 (bad input) naming the field."""
    spec = CATALOGUE[model]
    if not isinstance(inputs, dict):
        raise bad_input("Type mismatch of '/', expected 'object'")  # UNCONFIRMED detail, 5006's prefix
    if spec.form == "rerank":
        return _rerank(spec, inputs)
    if spec.form == "qwen3":
        return _qwen3(spec, inputs)
    if spec.form == "bge_m3" and "contexts" in inputs:
        contexts = _contexts(inputs["contexts"], spec.max_batch)
        query = _optional_text(inputs, "query")
        _truncate_flag(inputs)
        return ModelRequest(model, contexts, [query] if query is not None else [], "cls", contexts=True)
    if "text" not in inputs:
        needed = "'text' or 'contexts'" if spec.form == "bge_m3" else "'text'"
        raise bad_input(f"required properties at '/' are {needed}")
    texts = text_list(inputs["text"], "/text", spec.max_batch)
    if spec.form == "bge_m3":
        _truncate_flag(inputs)
        return ModelRequest(model, texts, pooling="cls")
    pooling = _pooling(inputs) if spec.pooling_field else None
    return ModelRequest(model, texts, pooling=pooling)


def _qwen3(spec: ModelSpec, inputs: dict[str, Any]) -> ModelRequest:
    if "documents" in inputs and "text" in inputs:
        raise bad_input("'/text' is an alias of '/documents': give one of them")  # UNCONFIRMED
    queries = _listed(inputs, "queries", spec.max_batch)
    documents = _listed(inputs, "documents" if "documents" in inputs else "text", spec.max_batch)
    if not queries and not documents:
        raise bad_input("required properties at '/' are one of 'queries', 'documents', 'text'")  # UNCONFIRMED
    instruction = inputs.get("instruction", QWEN3_DEFAULT_INSTRUCTION)
    if not isinstance(instruction, str):
        raise bad_input("Type mismatch of '/instruction', expected 'string'")  # UNCONFIRMED
    return ModelRequest(spec.name, documents, queries, instruction=instruction)


def _listed(inputs: dict[str, Any], key: str, max_items: int) -> list[str]:
    """qwen3's `queries` or `documents` (`text`): absent or an empty list is none (its schema sets no minimum
    count; one of the two must hold a text), else a list of texts as `text_list` checks it."""
    value = inputs.get(key, [])
    return [] if value == [] else text_list(value, f"/{key}", max_items)


def _rerank(spec: ModelSpec, inputs: dict[str, Any]) -> ModelRequest:
    missing = [k for k in ("query", "contexts") if k not in inputs]
    if missing:
        raise bad_input(f"required properties at '/' are {', '.join(repr(k) for k in missing)}")  # UNCONFIRMED
    query = _optional_text(inputs, "query")
    assert query is not None
    top_k = inputs.get("top_k")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise bad_input(f"Value at '/top_k' must be an integer of at least 1 (got {top_k!r})")  # UNCONFIRMED
    return ModelRequest(spec.name, _contexts(inputs["contexts"], spec.max_batch), [query], top_k=top_k,
                        contexts=True)


def _contexts(value: Any, max_items: int) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(c, dict) for c in value):
        raise bad_input("Type mismatch of '/contexts', expected 'array' of 'object'")  # UNCONFIRMED
    if not value:
        raise bad_input("Array at '/contexts' has too few items (0 < 1)")  # UNCONFIRMED
    if len(value) > max_items:
        raise bad_input(f"Array at '/contexts' has too many items ({len(value)} > {max_items})")  # UNCONFIRMED
    texts = []
    for position, context in enumerate(value):
        text = context.get("text")
        if not isinstance(text, str) or not text:
            raise bad_input(f"String at '/contexts/{position}/text' is missing or too short (0 < 1)")  # UNCONFIRMED
        texts.append(text)
    return texts


def _optional_text(inputs: dict[str, Any], key: str) -> str | None:
    value = inputs.get(key)
    if value is None and key not in inputs:
        return None
    if not isinstance(value, str) or not value:
        raise bad_input(f"String at '/{key}' is missing or too short (0 < 1)")  # UNCONFIRMED
    return value


def _truncate_flag(inputs: dict[str, Any]) -> None:
    if not isinstance(inputs.get("truncate_inputs", False), bool):
        raise bad_input("Type mismatch of '/truncate_inputs', expected 'boolean'")  # UNCONFIRMED


def _pooling(inputs: dict[str, Any]) -> Pooling:
    pooling = inputs.get("pooling", "mean")
    if pooling not in POOLINGS:
        raise bad_input(f"Value at '/pooling' is not one of 'mean', 'cls' (got {pooling!r})")  # UNCONFIRMED
    return pooling


# --- output shapes ----------------------------------------------------------------------------------------------


def embeddings_output(request: ModelRequest, rows: Sequence[Sequence[float]]) -> dict[str, Any]:
    """The answer to an embedding request: `rows` are the texts' unit vectors (queries' first for qwen3)."""
    data = [list(map(float, row)) for row in rows]
    shape = [len(data), len(data[0]) if data else 0]
    if request.contexts:  # bge-m3's contexts form without a query
        return {"response": data, "shape": shape, "pooling": request.pooling}
    answer: dict[str, Any] = {"shape": shape, "data": data}
    if request.pooling is not None:
        answer["pooling"] = request.pooling
    return answer


def scored_output(scores: Sequence[float], top_k: int | None = None) -> dict[str, Any]:
    """`{response: [{id, score}]}`: each context's index and score, best first (ties by index), at most top_k."""
    ranked = sorted(enumerate(scores), key=lambda pair: (-pair[1], pair[0]))
    return {"response": [{"id": i, "score": float(s)} for i, s in ranked[:top_k]]}

