"""Local models are loaded once per process: Envs (and LocalAis) with the same model share it, and closing one
Env leaves the model to the others."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest
from embedding_fakes import build_bge_shaped_model

from memory_sim.bindings.ai import BGE_BASE
from memory_sim.env import Env
from memory_sim.local.ai.local_ai import LocalAi
from memory_sim.local.ai.models import MINILM
from memory_sim.local.ai.shared_models import ModelKey, forget_models, model_loads, shared_model

HANG_S = 600.0  # a bound for a hang, never a speed claim


def open_env(folder: Path) -> Env:
    return Env.local(folder, environ={}, embed_model=MINILM, vector_backend="memory", serve_owner=False)


def test_two_envs_in_one_process_load_the_model_once(tmp_path: Path) -> None:
    forget_models()
    before = model_loads()
    first, second = open_env(tmp_path / "a"), open_env(tmp_path / "b")
    try:
        assert isinstance(first.AI, LocalAi) and isinstance(second.AI, LocalAi) and first.AI is not second.AI
        one = first.embedder.embed(["the smith mends a plough"])
        assert first.AI.load(MINILM) is second.AI.load(MINILM)
        first.close()  # the other Env keeps the shared model
        other = second.embedder.embed(["the smith mends a plough"])
        assert model_loads() - before == 1
        np.testing.assert_allclose(np.asarray(one), np.asarray(other), atol=1e-6)
    finally:
        first.close()
        second.close()


def test_other_settings_load_their_own_model(tmp_path: Path) -> None:
    one_thread = LocalAi(runtime="onnx", threads=1).load(MINILM)
    assert LocalAi(runtime="onnx", threads=1).load(MINILM) is one_thread
    assert LocalAi(runtime="onnx", threads=2).load(MINILM) is not one_thread
    assert LocalAi(runtime="onnx", threads=1, onnx_cache=tmp_path / "cache").load(MINILM) is not one_thread


def test_new_weights_in_the_same_folder_load_anew(tmp_path: Path) -> None:
    folder = build_bge_shaped_model(tmp_path / "bge", layers=1, intermediate=64)
    loaded = LocalAi(model_dirs={BGE_BASE: folder}, runtime="onnx", threads=1).load(BGE_BASE)
    assert LocalAi(model_dirs={BGE_BASE: folder}, runtime="onnx", threads=1).load(BGE_BASE) is loaded
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes())  # new mtime: the folder's files are not the ones loaded
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert LocalAi(model_dirs={BGE_BASE: folder}, runtime="onnx", threads=1).load(BGE_BASE) is not loaded


def test_loads_of_one_model_at_once_load_it_once(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    key = ModelKey("a-model", str(folder), "cpu", "onnx", 1, str(tmp_path))
    opened: list[object] = []
    callers = 8
    start = threading.Barrier(callers)

    def open_model() -> object:
        opened.append(object())
        inside.wait(HANG_S)  # held open until every caller has started: a second load would happen meanwhile
        return opened[-1]

    inside = threading.Event()
    got: list[object] = []

    def call() -> None:
        start.wait(HANG_S)
        got.append(shared_model(key, folder, open_model))  # type: ignore[arg-type]

    threads = [threading.Thread(target=call) for _ in range(callers)]
    for thread in threads:
        thread.start()
    release = threading.Timer(0.5, inside.set)  # time for the callers to reach the lock; the verdict is the count
    release.start()
    for thread in threads:
        thread.join(HANG_S)
    assert len(opened) == 1 and len(got) == callers and all(g is opened[0] for g in got)


@pytest.fixture(autouse=True)
def _fresh_models() -> None:
    forget_models()
