"""The ONNX runtime of LocalAi: the same vectors as sentence-transformers (bundled MiniLM, mean pooling; a 768-d
BERT shaped like BGE base, CLS pooling), an export made once per model and kept, a damaged export rebuilt, and
torch when no export can be made. Each model is exported once per session into the session's cache (conftest)."""

from __future__ import annotations

import logging
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memory_sim.bindings.ai import BGE_BASE
from memory_sim.env import Env, Settings
from memory_sim.errors import ConfigError
from memory_sim.local.ai.local_ai import LocalAi
from memory_sim.local.ai.models import MINILM, minilm_dir
from memory_sim.local.ai.onnx_cache import MODEL_FILE, export_dir
from memory_sim.local.ai.onnx_encoder import length_groups
from memory_sim.local.ai.shared_models import forget_models

ROOT = Path(__file__).resolve().parents[2]
LONG = "the miller counted sacks of grain by the river before the storm came " * 60  # past both windows
TEXTS = [
    "a",
    "Tom lied about the grain.",
    "  Margaret   distrusts Tom since the harvest festival, when he sold her spoiled flour.  ",
    "Ünïcödé café — naïve résumé ☕, 42 déjà-vu!",
    "What does Margaret think of Tom?",
    LONG,
]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def sentence_transformers_vectors(folder: Path, texts: list[str]) -> np.ndarray:
    """The reference: the folder's own sentence-transformers pipeline (pooling + Normalize), on torch."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    return model.encode(texts, batch_size=len(texts), convert_to_numpy=True)


def batch_and_singles(ai: LocalAi, model: str, pooling: str) -> tuple[np.ndarray, np.ndarray]:
    """All texts in one padded batch, and each alone."""
    batch = np.asarray(ai.run(model, {"text": TEXTS, "pooling": pooling})["data"])
    singles = np.vstack([ai.run(model, {"text": [t], "pooling": pooling})["data"] for t in TEXTS])
    return batch, singles


def exports_logged(caplog: pytest.LogCaptureFixture) -> int:
    return sum(r.name == "memory_sim.local.ai.onnx_export" and "exporting" in r.getMessage() for r in caplog.records)


def our_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("memory_sim")]


@pytest.fixture(scope="module")
def onnx_ai(onnx_cache: Path, bge_folder: Path) -> LocalAi:
    return LocalAi(model_dirs={BGE_BASE: bge_folder}, runtime="onnx", onnx_cache=onnx_cache)


def test_minilm_on_onnx_gives_sentence_transformers_vectors(onnx_ai: LocalAi) -> None:
    assert onnx_ai.load(MINILM).runtime == "onnx"
    batch, singles = batch_and_singles(onnx_ai, MINILM, "mean")
    folder = minilm_dir()
    assert folder is not None
    reference = sentence_transformers_vectors(folder, TEXTS)
    assert cosines(batch, reference).min() >= 0.9999
    assert cosines(singles, reference).min() >= 0.9999
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, rtol=1e-5)


def test_bge_shaped_bert_on_onnx_gives_sentence_transformers_cls_vectors(onnx_ai: LocalAi, bge_folder: Path) -> None:
    assert onnx_ai.load(BGE_BASE).runtime == "onnx"
    batch, singles = batch_and_singles(onnx_ai, BGE_BASE, "cls")
    reference = sentence_transformers_vectors(bge_folder, TEXTS)  # CLS + Normalize, as BGE's folder says
    assert batch.shape == (len(TEXTS), 768)
    assert cosines(batch, reference).min() >= 0.9999
    assert cosines(singles, reference).min() >= 0.9999
    mean = np.asarray(onnx_ai.run(BGE_BASE, {"text": TEXTS, "pooling": "mean"})["data"])
    assert cosines(mean, reference).min() < 0.999  # mean pooling is another vector, from the same export


def test_text_past_the_window_is_truncated_on_onnx(onnx_ai: LocalAi) -> None:
    both = onnx_ai.run(MINILM, {"text": [LONG, LONG + " and then a dragon appeared"]})["data"]
    assert both[0] == pytest.approx(both[1], abs=1e-6)


def test_export_is_made_once_per_model_and_kept(
    onnx_ai: LocalAi, onnx_cache: Path, bge_folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    onnx_ai.load(MINILM), onnx_ai.load(BGE_BASE)
    folder = minilm_dir()
    assert folder is not None
    exports = [export_dir(onnx_cache, MINILM, folder) / MODEL_FILE, export_dir(onnx_cache, BGE_BASE, bge_folder) / MODEL_FILE]
    assert exports[0].parent != exports[1].parent and all(p.is_file() for p in exports)
    before = [(p.stat().st_mtime_ns, p.stat().st_ino) for p in exports]
    forget_models()  # as a new process would: the models are loaded again, from the exports kept on disk
    with caplog.at_level(logging.INFO, logger="memory_sim.local.ai.onnx_export"):
        again = LocalAi(model_dirs={BGE_BASE: bge_folder}, onnx_cache=onnx_cache)
        assert again.load(MINILM).runtime == again.load(BGE_BASE).runtime == "onnx"
    assert exports_logged(caplog) == 0
    assert [(p.stat().st_mtime_ns, p.stat().st_ino) for p in exports] == before


def test_a_model_with_an_export_loads_without_torch(onnx_ai: LocalAi, onnx_cache: Path) -> None:
    onnx_ai.load(MINILM)  # the export exists
    code = (
        "import sys; from memory_sim.local.ai.local_ai import LocalAi; ai = LocalAi(runtime='onnx'); "
        "print(ai.run('minilm', {'text': ['hello']})['shape'], ai.load('minilm').runtime, "
        "[m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules])"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMORY_SIM_ONNX_CACHE": str(onnx_cache)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[1, 384] onnx []"


def test_same_weights_with_new_mtimes_keep_their_export(
    bge_folder: Path, onnx_ai: LocalAi, onnx_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A reinstall rewrites the same files: their content hash is the recorded one, so nothing is exported."""
    onnx_ai.load(BGE_BASE)
    export = export_dir(onnx_cache, BGE_BASE, bge_folder) / MODEL_FILE
    stamp = export.stat().st_mtime_ns
    for path in bge_folder.rglob("*"):
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
    with caplog.at_level(logging.INFO, logger="memory_sim.local.ai.onnx_export"):
        assert LocalAi(model_dirs={BGE_BASE: bge_folder}, onnx_cache=onnx_cache).load(BGE_BASE).runtime == "onnx"
    assert exports_logged(caplog) == 0
    assert export.stat().st_mtime_ns == stamp


def test_changed_weights_are_exported_again(
    tmp_path: Path, bge_folder: Path, onnx_ai: LocalAi, onnx_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    onnx_ai.load(BGE_BASE)
    cache, folder = tmp_path / "cache", tmp_path / "bge"
    shutil.copytree(bge_folder, folder)  # copy2 keeps mtimes: the session's export is current for the copy
    shutil.copytree(export_dir(onnx_cache, BGE_BASE, bge_folder), export_dir(cache, BGE_BASE, folder))
    with caplog.at_level(logging.INFO, logger="memory_sim.local.ai.onnx_export"):
        before = LocalAi(model_dirs={BGE_BASE: folder}, onnx_cache=cache).run(BGE_BASE, {"text": ["the smith"], "pooling": "cls"})
        assert exports_logged(caplog) == 0
        _shift_embedding_norm(folder, 3.0)
        after = LocalAi(model_dirs={BGE_BASE: folder}, onnx_cache=cache).run(BGE_BASE, {"text": ["the smith"], "pooling": "cls"})
        assert exports_logged(caplog) == 1
    reference = sentence_transformers_vectors(folder, ["the smith"])
    assert cosines(np.asarray(after["data"]), reference).min() >= 0.9999
    assert cosines(np.asarray(before["data"]), reference).min() < 0.999  # the old export would be wrong now


def _shift_embedding_norm(folder: Path, shift: float) -> None:
    from safetensors.numpy import load_file, save_file

    weights = load_file(str(folder / "model.safetensors"))
    name = next(n for n in weights if n.endswith("embeddings.LayerNorm.bias"))
    weights[name] = weights[name] + shift
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})


def test_damaged_export_is_rebuilt_with_a_warning(
    tmp_path: Path, onnx_ai: LocalAi, caplog: pytest.LogCaptureFixture
) -> None:
    expected = np.asarray(onnx_ai.run(MINILM, {"text": TEXTS})["data"])
    cache = tmp_path / "cache"
    shutil.copytree(onnx_ai.onnx_cache, cache)
    folder = minilm_dir()
    assert folder is not None
    export = export_dir(cache, MINILM, folder) / MODEL_FILE
    with export.open("r+b") as stream:  # same size, garbage inside: only loading it can tell
        stream.write(b"\xff" * 4096)
    with caplog.at_level(logging.WARNING):
        ai = LocalAi(onnx_cache=cache)
        got = np.asarray(ai.run(MINILM, {"text": TEXTS})["data"])
    warnings = our_warnings(caplog)
    assert len(warnings) == 1 and "damaged" in warnings[0] and "rebuilding" in warnings[0]
    assert ai.load(MINILM).runtime == "onnx" and export.read_bytes()[:4096] != b"\xff" * 4096
    assert cosines(got, expected).min() >= 0.9999


def test_no_export_possible_means_torch_with_one_warning(
    tmp_path: Path, onnx_ai: LocalAi, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache should be")
    with caplog.at_level(logging.WARNING):
        ai = LocalAi(onnx_cache=blocker / "onnx")
        first = np.asarray(ai.run(MINILM, {"text": TEXTS})["data"])
        ai.run(MINILM, {"text": ["again"]})
    warnings = our_warnings(caplog)
    assert len(warnings) == 1 and "using torch" in warnings[0] and MINILM in warnings[0]
    assert ai.load(MINILM).runtime == "torch"
    onnx = np.asarray(onnx_ai.run(MINILM, {"text": TEXTS})["data"])
    assert cosines(first, onnx).min() >= 0.9999


def test_runtime_is_a_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert Settings.load(environ={}).embed_runtime == "onnx"
    assert Settings.load(environ={"MEMORY_SIM_EMBED_RUNTIME": "torch"}).embed_runtime == "torch"
    monkeypatch.setenv("MEMORY_SIM_EMBED_RUNTIME", "torch")
    assert LocalAi().runtime == "torch" and LocalAi(runtime="onnx").runtime == "onnx"
    with Env.local(tmp_path, embed_runtime="torch", vector_backend="memory", embed_model=MINILM) as env:
        assert isinstance(env.AI, LocalAi) and env.AI.runtime == "torch"
    monkeypatch.setenv("MEMORY_SIM_EMBED_RUNTIME", "tensorflow")
    with pytest.raises(ConfigError, match="embed_runtime .*expected 'onnx' or 'torch', got 'tensorflow'"):
        LocalAi()


@pytest.mark.slow
def test_two_processes_exporting_at_once_export_once(tmp_path: Path, bge_folder: Path) -> None:
    code = (
        "import logging, sys; logging.basicConfig(level=logging.INFO, stream=sys.stdout); "
        "from memory_sim.local.ai.local_ai import LocalAi; from memory_sim.bindings.ai import BGE_BASE; "
        f"print('runtime', LocalAi(model_dirs={{BGE_BASE: {str(bge_folder)!r}}}).load(BGE_BASE).runtime)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMORY_SIM_ONNX_CACHE": str(tmp_path / "cache")}
    runs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outputs = [run.communicate(timeout=240)[0] for run in runs]
    assert all("runtime onnx" in out for out in outputs)
    assert sum(out.count("memory_sim.local.ai.onnx_export:exporting") for out in outputs) == 1, outputs


def test_texts_run_in_groups_of_similar_length() -> None:
    assert length_groups([5]) == [(0, 1)]
    assert length_groups([9, 9, 9, 9]) == [(0, 4)]  # equal lengths: one run, no padding
    assert length_groups([3, 4, 200, 210], run_cost=32) == [(0, 2), (2, 4)]  # short texts not padded to 210
    assert length_groups([10, 12, 14], run_cost=32) == [(0, 3)]  # a little padding is cheaper than another run
    groups = length_groups(sorted(random.Random(3).randint(3, 256) for _ in range(100)))
    assert groups[0][0] == 0 and groups[-1][1] == 100
    assert all(a[1] == b[0] for a, b in zip(groups, groups[1:]))  # consecutive, covering every text once
