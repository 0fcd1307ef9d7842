"""Exports a loaded sentence-transformers model's transformer to ONNX, once, into the export cache.

The graph is traced by torch's TorchScript exporter (`dynamo=False`: it needs only torch and works offline)
from the very module the torch runtime runs, with dynamic batch and sequence axes, and checked against torch on
a padded batch before it is kept. Pooling stays outside the graph so one export serves CLS and mean pooling.
One process exports at a time (a file lock); files are written beside their final name and renamed into place,
and the manifest goes last, so readers see a whole export or none.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from memory_sim.local.ai.onnx_cache import (
    MANIFEST_FILE,
    MODEL_FILE,
    TOKENIZER_FILE,
    Manifest,
    content_sha256,
    fingerprint,
    inspect_export,
    write_atomically,
    write_manifest,
)

log = logging.getLogger(__name__)

OPSET = 17
LOCK_TIMEOUT_S = 600.0  # a BERT-base export takes about a minute on 2 slow cores
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
CHECK_ATOL = 1e-3  # largest difference to torch's hidden states an export may show on the check batch


def export_model(model: Any, name: str, folder: Path, directory: Path, *, rebuild: bool = False) -> Manifest:
    """The current export of `folder` in `directory`: one another process just finished, or a new one.
    `rebuild` replaces an export that exists but failed to load. Raises whatever the toolchain raises."""
    from filelock import FileLock

    directory.mkdir(parents=True, exist_ok=True)
    with FileLock(str(directory / ".export.lock"), timeout=LOCK_TIMEOUT_S):
        manifest, _ = inspect_export(directory, folder)
        if manifest is not None and not rebuild:
            return manifest
        log.info("exporting %s to ONNX, once, into %s", name, directory)
        return _write_export(model, name, folder, directory)


def _write_export(model: Any, name: str, folder: Path, directory: Path) -> Manifest:
    (directory / MANIFEST_FILE).unlink(missing_ok=True)  # from here on the folder holds no valid export
    files, sha256 = fingerprint(folder), content_sha256(folder)
    transformer = model[0].auto_model  # the transformers model sentence-transformers runs
    names = [n for n in INPUT_NAMES if n in model.tokenizer.model_input_names]
    temporary = directory / f"{MODEL_FILE}.{os.getpid()}.tmp"
    try:
        _trace(transformer, names, temporary)
        _check_against_torch(transformer, names, temporary)
        os.replace(temporary, directory / MODEL_FILE)
    finally:
        temporary.unlink(missing_ok=True)
    write_atomically(directory / TOKENIZER_FILE, _tokenizer_json(model).encode())
    manifest = Manifest(
        model=name,
        source=str(folder),
        max_seq_length=int(model.max_seq_length),
        files=files,
        sha256=sha256,
        onnx_bytes=(directory / MODEL_FILE).stat().st_size,
    )
    write_manifest(directory, manifest)
    return manifest


def _sample_inputs(names: list[str]) -> dict[str, Any]:
    """A batch of two with padding in the second row, so the traced graph keeps the attention mask."""
    import torch

    ids = torch.tensor([[3, 5, 6, 7, 8, 9, 10, 4], [3, 5, 6, 4, 0, 0, 0, 0]])  # small ids: in any vocabulary
    mask = torch.tensor([[1] * 8, [1] * 4 + [0] * 4])
    values = {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}
    return {n: values[n] for n in names}


def _graph_module(transformer: Any, names: list[str]) -> Any:
    """The transformer taking positional tensors (in `names` order) and returning the token embeddings."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *tensors: Any) -> Any:
            return self.transformer(**dict(zip(names, tensors, strict=True))).last_hidden_state

    return LastHiddenState().eval()


def _trace(transformer: Any, names: list[str], target: Path) -> None:
    import torch

    axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings and the exporter's deprecation notice: not for users
        torch.onnx.export(
            _graph_module(transformer, names),
            tuple(_sample_inputs(names).values()),
            str(target),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )


def _check_against_torch(transformer: Any, names: list[str], exported: Path) -> None:
    """Refuses a graph whose hidden states differ from torch's on the padded sample (real tokens only)."""
    import onnxruntime  # type: ignore[import-untyped]
    import torch

    inputs = _sample_inputs(names)
    with torch.inference_mode():
        expected = transformer(**inputs).last_hidden_state.numpy()
    session = onnxruntime.InferenceSession(str(exported), providers=["CPUExecutionProvider"])
    (got,) = session.run(["last_hidden_state"], {n: t.numpy() for n, t in inputs.items()})
    real = inputs["attention_mask"].numpy().astype(bool)
    difference = float(np.abs(got[real] - expected[real]).max())
    if difference > CHECK_ATOL:
        raise ValueError(f"the exported graph differs from torch by {difference:.2g} on a padded batch")


def _tokenizer_json(model: Any) -> str:
    """The tokenizer sentence-transformers uses, set as it calls it: truncate at the model's window, pad to the
    longest text of the batch. Needs a fast (Rust) tokenizer."""
    from tokenizers import Tokenizer

    source = model.tokenizer
    tokenizer = Tokenizer.from_str(source.backend_tokenizer.to_str())
    tokenizer.enable_truncation(max_length=int(model.max_seq_length), direction=source.truncation_side)
    tokenizer.enable_padding(
        direction=source.padding_side,
        pad_id=source.pad_token_id,
        pad_type_id=source.pad_token_type_id,
        pad_token=source.pad_token,
    )
    return tokenizer.to_str()
