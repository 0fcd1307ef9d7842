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
from memory_sim.local.ai.models import LocalModel
from memory_sim.local.ai.onnx_cache import (
    MODEL_FILE,
    TOKENIZER_FILE,
    Manifest,
    export_dir,
    inspect_export,
)
from memory_sim.local.ai.torch_encoder import (
    Encoder,
    TorchEncoder,
    load_sentence_transformer,
)

log = logging.getLogger(__name__)

RUN_COST_TOKENS = 18  # one more run costs as much as ~18 tokens: MiniLM on one thread, 3.5 ms + 0.19 ms a token


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
        padding = self.tokenizer.padding or {}
        self.pad_id, self.pad_type_id = int(padding.get("pad_id", 0)), int(padding.get("pad_type_id", 0))
        self.tokenizer.no_padding()  # padding is done per group of similar lengths, in embed
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.manifest = manifest

    def embed(self, texts: list[str], pooling: Pooling) -> np.ndarray:
        """Texts of similar token length run together, so little of the work is padding."""
        encodings = self.tokenizer.encode_batch(texts)  # truncated at the model's window, not padded
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        rows: list[np.ndarray] = [np.empty(0)] * len(texts)
        for start, stop in length_groups([len(encodings[i].ids) for i in order]):
            members = order[start:stop]
            for index, row in zip(members, self._forward([encodings[i] for i in members], pooling), strict=True):
                rows[index] = row
        return normalized(np.vstack(rows))

    def _forward(self, encodings: list[Any], pooling: Pooling) -> np.ndarray:
        """One onnxruntime run over texts padded to the longest of them; the pooled rows."""
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self.pad_id, dtype=np.int64)
        types = np.full_like(ids, self.pad_type_id)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n], types[row, :n], mask[row, :n] = encoding.ids, encoding.type_ids, 1
        columns = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        try:
            (hidden,) = self.session.run(["last_hidden_state"], {n: columns[n] for n in self.input_names})
        except Exception as exc:  # onnxruntime's errors share no base class but Exception (e.g. out of memory)
            raise AiError(f"AiError: the local model failed: {_one_line(exc)}") from exc
        return pooled(hidden, mask.astype(np.float32), pooling)


def length_groups(lengths: list[int], run_cost: int = RUN_COST_TOKENS) -> list[tuple[int, int]]:
    """Splits ascending token lengths into consecutive groups, each run padded to its longest, so that padded
    tokens plus `run_cost` per run is least (exact, by dynamic programming; at most 100 texts a call)."""
    best = [0] + [0] * len(lengths)
    start_of = [0] * (len(lengths) + 1)
    for stop in range(1, len(lengths) + 1):
        costs = ((best[start] + (stop - start) * lengths[stop - 1] + run_cost, start) for start in range(stop))
        best[stop], start_of[stop] = min(costs)
    groups, stop = [], len(lengths)
    while stop > 0:
        groups.append((start_of[stop], stop))
        stop = start_of[stop]
    return groups[::-1]


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
        from memory_sim.local.ai.onnx_export import export_model

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
