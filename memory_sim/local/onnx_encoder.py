"""The ONNX runtime: a model's exported transformer run by onnxruntime, tokenised by `tokenizers`, pooled here.

Loading an existing export imports neither torch nor sentence-transformers, which is what makes a model ready in
well under a second. The first load of a model exports it (torch, once, see onnx_export); a damaged export is
rebuilt with a warning; when no export can be made or loaded, the model runs on torch, with one warning.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from memory_sim.bindings.ai import Pooling
from memory_sim.errors import AiError
from memory_sim.local.models import LocalModel
from memory_sim.local.onnx_cache import (
    MODEL_FILE,
    TOKENIZER_FILE,
    Manifest,
    export_dir,
    inspect_export,
)
from memory_sim.local.torch_encoder import (
    Encoder,
    TorchEncoder,
    load_sentence_transformer,
)

log = logging.getLogger(__name__)


class OnnxEncoder:
    """An onnxruntime session over an export, with the tokenizer saved beside it."""

    runtime = "onnx"

    def __init__(self, directory: Path, manifest: Manifest, threads: int) -> None:
        import onnxruntime  # type: ignore[import-untyped]
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads  # 0: as many as onnxruntime sees fit
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: graph-optimiser notes are not for users
        self.session = onnxruntime.InferenceSession(
            str(directory / MODEL_FILE), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(directory / TOKENIZER_FILE))
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.manifest = manifest

    def embed(self, texts: list[str], pooling: Pooling) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        columns = {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
        }
        feeds = {name: np.asarray(columns[name], dtype=np.int64) for name in self.input_names}
        try:
            (hidden,) = self.session.run(["last_hidden_state"], feeds)
        except Exception as exc:  # onnxruntime's errors share no base class but Exception (e.g. out of memory)
            raise AiError(f"AiError: the local model failed: {_one_line(exc)}") from exc
        mask = np.asarray(columns["attention_mask"], dtype=np.float32)
        return normalized(pooled(hidden, mask, pooling))


def pooled(hidden: np.ndarray, mask: np.ndarray, pooling: Pooling) -> np.ndarray:
    """'cls': the first token's embedding; 'mean': the average over real (unpadded) tokens."""
    if pooling == "cls":
        return hidden[:, 0]
    summed = np.einsum("bsh,bs->bh", hidden, mask)
    return summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)


def normalized(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.maximum(norms, 1e-12)).astype(np.float32)


def load_onnx_encoder(found: LocalModel, cache: Path, threads: int) -> Encoder:
    """The model on onnxruntime from its cached export, exporting it first when there is none; on torch when
    that fails. A folder that holds no loadable model raises ConfigError, as on torch."""
    directory = export_dir(cache, found.name, found.path)
    manifest, problem = _readable_export(directory, found.path)
    if manifest is not None:
        try:
            return OnnxEncoder(directory, manifest, threads)
        except Exception as exc:  # onnxruntime and tokenizers raise plain Exceptions on a bad file
            problem = f"damaged: {_one_line(exc)}"
    if problem.startswith("damaged"):
        log.warning("the ONNX export of %s in %s is %s; rebuilding it", found.name, directory, problem)
    model = load_sentence_transformer(found.path, "cpu")
    try:
        from memory_sim.local.onnx_export import export_model

        manifest = export_model(model, found.name, found.path, directory, rebuild=problem.startswith("damaged"))
        return OnnxEncoder(directory, manifest, threads)
    except Exception as exc:  # any failure of the export toolchain or the cache degrades to torch
        log.warning("cannot run %s on onnxruntime (%s); using torch", found.name, _one_line(exc))
        return TorchEncoder(model)


def _readable_export(directory: Path, folder: Path) -> tuple[Manifest | None, str]:
    try:
        return inspect_export(directory, folder)
    except OSError as exc:  # e.g. a cache path that is not a folder; the export step reports it
        return None, f"unreadable: {_one_line(exc)}"


def _one_line(exc: Any) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__
