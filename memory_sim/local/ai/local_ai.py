"""`LocalAi`: a local Workers AI for text embeddings. sentence-transformers models behind `Ai.run`.

`run(model, {"text": ..., "pooling": "cls" | "mean"})` answers `{"shape", "data", "pooling"}` as Workers AI does,
with its limits (1..100 texts, none empty) and its error wording. Pooling is computed here from the model's
token embeddings, so both Workers AI poolings are honoured whatever the folder's own pooling module says; rows
are L2-normalised as the sentence-transformers configs of BGE and MiniLM do. Texts longer than the model's
window (512 tokens for BGE, 256 for MiniLM as trained) are truncated, not refused.

Runtimes: "onnx" (the default) runs the model's transformer on onnxruntime from an ONNX export made once from
the model's own weights and cached (onnx_encoder, onnx_export); "torch" runs it on torch through
sentence-transformers (torch_encoder), also the fallback when no export can be made, and the runtime for any
device but the CPU. A model loads on its first run, once per process: every LocalAi with the same model, folder,
device, runtime, threads and export cache shares the loaded model (shared_models).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any, get_args

from memory_sim.bindings.ai import DEFAULT_MODEL
from memory_sim.bindings.ai_models import CATALOGUE, ModelRequest, embeddings_output, parse_request, scored_output
from memory_sim.bindings.ai_validation import no_such_model, output, parse_inputs
from memory_sim.bindings.limits import AI_BGE_MAX_TOKENS
from memory_sim.errors import ConfigError
from memory_sim.local.ai.catalogue_models import locate_catalogue_model
from memory_sim.local.ai.models import ALIASES, KNOWN_DIMENSIONS, LocalModel, canonical, locate
from memory_sim.local.ai.onnx_cache import cache_root
from memory_sim.local.ai.sentence_models import RUN_WHOLE, load_whole_model, run_whole_model
from memory_sim.local.ai.shared_models import model_key, shared_model
from memory_sim.local.ai.torch_encoder import (
    Encoder,
    TorchEncoder,
    embed_texts,
    load_sentence_transformer,
    pool,
)
from memory_sim.settings import EmbedRuntime, Settings

__all__ = ["LocalAi", "embed_texts", "load_sentence_transformer", "pool"]

log = logging.getLogger(__name__)


CHARS_PER_TOKEN_BOUND = 101  # WordPiece makes one [UNK] of a word over 100 characters, so no token spans more
# (plus its one separating space); a text is cut to this many characters per token of the window before it is
# tokenised, so a 1 MB text costs what its window does. Only a text padded with runs of whitespace longer than
# that could have been cut short of its window.


def cut_to_window(text: str, window: int | None) -> str:
    """The text cut, in characters, to what the model's token window (`window` tokens; AI_BGE_MAX_TOKENS when the
    folder does not say) could ever read of it: tokenising the rest is work thrown away."""
    limit = (window or AI_BGE_MAX_TOKENS) * CHARS_PER_TOKEN_BOUND
    return text if len(text) <= limit else text[:limit]


class LocalAi:
    """Runs local sentence-transformers models; loads each model on its first use, or reuses the one another
    LocalAi of the process loaded with the same settings.

    `runtime`: "onnx" or "torch"; by default $MEMORY_SIM_EMBED_RUNTIME, else "onnx". `threads`: the threads one
    embedding uses, onnxruntime's intra-op threads or torch's (0: the runtime's own choice); by default the
    `embed_threads` setting. `onnx_cache`: where exports live (default: onnx_cache.cache_root())."""

    is_local = True

    def __init__(
        self,
        *,
        model_dirs: dict[str, Path] | None = None,
        device: str = "cpu",
        runtime: EmbedRuntime | None = None,
        threads: int | None = None,
        onnx_cache: Path | None = None,
    ) -> None:
        self.model_dirs = dict(model_dirs or {})
        self.device = device
        settings = Settings.load() if runtime is None or threads is None else None  # when no builder passed them
        self.runtime = runtime or settings.embed_runtime  # type: ignore[union-attr]
        if self.runtime not in get_args(EmbedRuntime):
            raise ConfigError(f"unknown embedding runtime {self.runtime!r}: expected 'onnx' or 'torch'")
        self.threads = settings.embed_threads if threads is None else threads  # type: ignore[union-attr]
        self.onnx_cache = Path(onnx_cache) if onnx_cache is not None else cache_root()
        self._loaded: dict[str, Encoder] = {}
        self._lock = threading.Lock()
        # seconds spent loading models and running them (tokenise, forward, pool): what a run's floor is made of
        self.seconds = {"load": 0.0, "forward": 0.0}

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        if model in CATALOGUE:  # the newer models, each with its own input schema and output shape
            return self._run_catalogue(model, inputs)
        try:
            found = self.locate(model)  # an unknown model is 5007 whatever the inputs, as on Workers AI
        except ConfigError:
            parse_inputs(inputs)  # a known model whose weights are not here: bad input is still named first
            raise
        texts, pooling = parse_inputs(inputs)
        texts = [cut_to_window(t, found.max_seq_length) for t in texts]
        encoder = self._load(found)
        started = time.perf_counter()
        vectors = encoder.embed(texts, pooling)
        self.seconds["forward"] += time.perf_counter() - started
        return output(vectors, int(vectors.shape[1]), pooling)

    def _run_catalogue(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        """Bad input first (5006, as for a model whose weights are not here), then the weights (one line naming
        the setting when they are not here), then the model's own output shape."""
        request = parse_request(model, inputs)
        found = locate_catalogue_model(model, self.model_dirs)
        if model in RUN_WHOLE:
            return self._run_whole(found, request)
        encoder = self._load(found)
        pooling = request.pooling or "cls"
        started = time.perf_counter()
        vectors = encoder.embed(request.texts, pooling)
        if request.contexts and request.queries:  # bge-m3's query form: each context's cosine to the query
            query = encoder.embed(request.queries, pooling)[0]
            self.seconds["forward"] += time.perf_counter() - started
            return scored_output([float(score) for score in vectors @ query], request.top_k)
        self.seconds["forward"] += time.perf_counter() - started
        return embeddings_output(request, vectors.tolist())

    def _run_whole(self, found: LocalModel, request: ModelRequest) -> dict[str, Any]:
        """EmbeddingGemma, Qwen3-Embedding and the reranker, run whole by sentence-transformers on torch."""
        with self._lock:
            started = time.perf_counter()
            key = model_key(found, self.device, "torch", self.threads, self.onnx_cache)
            loaded = shared_model(key, found.path, lambda: load_whole_model(found.name, found.path, self.device))
            self.seconds["load"] += time.perf_counter() - started
        started = time.perf_counter()
        rows, scores = run_whole_model(loaded, request)
        self.seconds["forward"] += time.perf_counter() - started
        return scored_output(scores, request.top_k) if rows is None else embeddings_output(request, rows)

    def catalogue(self) -> frozenset[str]:
        """The model names this Ai knows without a path: the known models, their aliases, the catalogue's newer
        models (bindings/ai_models.py), `default`, and the names `model_dirs` configures (what a server accepts
        from its clients: server/ai_names.py)."""
        return frozenset({DEFAULT_MODEL, *KNOWN_DIMENSIONS, *ALIASES, *CATALOGUE, *self.model_dirs})

    def model_dimensions(self, model: str) -> int | None:
        """The width without running the model, when the folder's config says it."""
        if model in CATALOGUE:
            return locate_catalogue_model(model, self.model_dirs).dimensions
        found = self.locate(model)
        return found.dimensions or KNOWN_DIMENSIONS.get(found.name)

    def locate(self, model: str) -> LocalModel:
        """The model behind a name, alias, `default` or folder; AiError "No such model" when unknown."""
        found = locate(canonical(model), self.model_dirs)
        if found is None:
            raise no_such_model(model)
        return found

    def load(self, model: str) -> Encoder:
        """The model loaded and ready (its `runtime` says what runs it), as `run` would load it."""
        return self._load(self.locate(model))

    def _load(self, found: LocalModel) -> Encoder:
        with self._lock:
            if found.name not in self._loaded:
                started = time.perf_counter()
                key = model_key(found, self.device, self.runtime, self.threads, self.onnx_cache)
                self._loaded[found.name] = shared_model(key, found.path, lambda: self._open(found))
                self.seconds["load"] += time.perf_counter() - started
            return self._loaded[found.name]

    def _open(self, found: LocalModel) -> Encoder:
        # The first embedding waits for this (seconds): say so once, rather than seem to hang.
        log.info("loading %s (%s, %s threads)...", found.name, self.runtime, self.threads or "default")
        if self.runtime == "onnx" and self.device == "cpu":
            from memory_sim.local.ai.onnx_encoder import load_onnx_encoder

            return load_onnx_encoder(found, self.onnx_cache, self.threads)
        if self.threads:
            import torch

            torch.set_num_threads(self.threads)  # process-wide in torch: the last LocalAi opened sets it
        return TorchEncoder(load_sentence_transformer(found.path, self.device))
