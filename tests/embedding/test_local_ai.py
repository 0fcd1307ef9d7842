"""LocalAi: the Workers AI run contract over real sentence-transformers models (MiniLM weights, and a
BGE-shaped BERT built here with random weights). Nothing is downloaded."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memory_sim.bindings.ai import BGE_BASE
from memory_sim.builder.models import load_embedder
from memory_sim.embedding.embedder import AiEmbedder
from memory_sim.errors import AiError, ConfigError
from memory_sim.local.ai import models
from memory_sim.local.ai.local_ai import LocalAi, load_sentence_transformer
from memory_sim.local.ai.models import MINILM


HANG_S = 600.0  # a client's timeout in these tests: a bound for a hang, never a speed claim


@pytest.fixture(autouse=True)
def no_bge_on_this_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An empty HF cache and no configured BGE, whatever the machine has."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    monkeypatch.delenv(models.BGE_PATH_ENV, raising=False)


@pytest.fixture(scope="module")
def shared_local_ai() -> LocalAi:
    return LocalAi()


@pytest.fixture(scope="module", params=["local", "cloudflare"])
def local_ai(request: pytest.FixtureRequest, shared_local_ai: LocalAi, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """LocalAi itself, and Workers AI over REST against the local server answering with the same LocalAi."""
    if request.param == "local":
        return shared_local_ai
    from memory_sim.cloudflare.workers_ai import WorkersAi
    from memory_sim.testing import TEST_TOKEN, ServerForTests

    shared_local_ai.load(MINILM)  # the first load (an ONNX export, seconds to a minute) is not raced against a request
    server = ServerForTests(tmp_path_factory.mktemp("ai-server"), ai=shared_local_ai).start()
    request.addfinalizer(server.stop)
    return WorkersAi("parity", TEST_TOKEN, base_url=server.base_url, timeout_s=HANG_S)


def test_run_answers_in_workers_ai_shape(local_ai: LocalAi) -> None:
    answer = local_ai.run("all-MiniLM-L6-v2", {"text": ["a", "b c"], "pooling": "mean"})
    assert answer["shape"] == [2, 384] and answer["pooling"] == "mean"
    assert len(answer["data"]) == 2 and len(answer["data"][0]) == 384
    single = local_ai.run(MINILM, {"text": "a"})  # one string; pooling defaults to mean as on Workers AI
    assert single["shape"] == [1, 384] and single["pooling"] == "mean"
    assert single["data"][0] == pytest.approx(answer["data"][0], abs=1e-5)


@pytest.mark.parametrize(
    ("inputs", "detail"),
    [
        ({"text": []}, "too few items"),
        ({"text": ["x"] * 101}, "too many items (101 > 100)"),
        ({"text": ["ok", ""]}, "'/text/1' is too short"),
        ({"text": ["x"], "pooling": "max"}, "/pooling"),
        ({"prompt": "x"}, "required properties at '/' are 'text'"),
    ],
)
def test_bad_input_is_refused_with_workers_ai_wording(local_ai: LocalAi, inputs: dict, detail: str) -> None:
    with pytest.raises(AiError) as info:
        local_ai.run(MINILM, inputs)
    assert str(info.value).startswith("AiError: Bad input: Error: ")
    assert detail in str(info.value)


def test_unknown_model_is_no_such_model(local_ai: LocalAi) -> None:
    with pytest.raises(AiError, match="No such model @cf/nope/x or task"):
        local_ai.run("@cf/nope/x", {"text": "x"})


def test_missing_bge_says_how_to_provide_it(local_ai: LocalAi) -> None:
    with pytest.raises(ConfigError, match="MEMORY_SIM_BGE_PATH") as info:
        local_ai.run(BGE_BASE, {"text": "x"})
    assert "never downloaded" in str(info.value)


@pytest.mark.slow
def test_minilm_ranks_a_paraphrase_above_an_unrelated_sentence(local_ai: LocalAi) -> None:
    embedder = AiEmbedder(local_ai, MINILM, pooling="mean")
    query, paraphrase, unrelated = embedder.embed(
        [
            "Margaret distrusts Tom since he lied about the missing grain.",
            "Tom lied to Margaret about the grain, so she no longer trusts him.",
            "The harbour fills with fishing boats at dawn.",
        ]
    )
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.3


def test_long_inputs_are_truncated_not_refused(local_ai: LocalAi) -> None:
    long_text = "the miller counted sacks of grain " * 200  # far over MiniLM's 256-token window
    both = local_ai.run(MINILM, {"text": [long_text, long_text + " and then a dragon appeared"]})
    assert both["shape"] == [2, 384]
    assert both["data"][0] == pytest.approx(both["data"][1], abs=1e-6)  # the tail is past the window


def test_default_falls_back_to_minilm_and_says_so_once(local_ai: LocalAi, caplog: pytest.LogCaptureFixture) -> None:
    """Loading the default says nothing: the fallback is said when a folder is created with it, and by
    `memory-sim models` (tests/embedding/test_first_run.py)."""
    with caplog.at_level(logging.WARNING, logger="memory_sim.local.ai.models"):
        first = load_embedder("default", ai=local_ai)
        load_embedder("default", ai=local_ai)
    assert first.model == MINILM and first.dimensions == 384
    assert getattr(first, "pooling") == "mean"
    assert [r for r in caplog.records if "bundled offline model" in r.getMessage()] == []


def test_bge_shaped_model_loads_with_cls_pooling(bge_folder: Path) -> None:
    ai = LocalAi(model_dirs={BGE_BASE: bge_folder})
    texts = ["the smith forged a blade", "rain over the harbour tonight"]
    cls = np.asarray(ai.run(BGE_BASE, {"text": texts, "pooling": "cls"})["data"])
    mean = np.asarray(ai.run(BGE_BASE, {"text": texts, "pooling": "mean"})["data"])
    assert cls.shape == (2, 768) and ai.model_dimensions(BGE_BASE) == 768
    np.testing.assert_allclose(np.linalg.norm(cls, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(mean, axis=1), 1.0, rtol=1e-5)
    assert not np.allclose(cls, mean, atol=1e-3)  # the two poolings really differ
    # Our CLS pooling equals the folder's own sentence-transformers pipeline (CLS + Normalize).
    reference = load_sentence_transformer(bge_folder, "cpu").encode(texts, convert_to_numpy=True)
    np.testing.assert_allclose(cls, reference, atol=1e-5)


def test_bge_is_found_by_env_var_and_hf_cache(bge_folder: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(models.BGE_PATH_ENV, str(bge_folder))
    embedder = load_embedder("default", ai=LocalAi())
    assert (embedder.model, embedder.dimensions, getattr(embedder, "pooling")) == (BGE_BASE, 768, "cls")
    monkeypatch.delenv(models.BGE_PATH_ENV)
    hub = tmp_path / "hub"
    snapshot = hub / "models--BAAI--bge-base-en-v1.5" / "snapshots" / "abc123"
    snapshot.parent.mkdir(parents=True)
    snapshot.symlink_to(bge_folder, target_is_directory=True)
    (hub / "models--BAAI--bge-base-en-v1.5" / "refs").mkdir()
    (hub / "models--BAAI--bge-base-en-v1.5" / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    assert models.resolve_default() == BGE_BASE
    assert models.bge_dir() == snapshot


def test_any_model_folder_by_path(bge_folder: Path) -> None:
    embedder = load_embedder(str(bge_folder), ai=LocalAi())
    assert embedder.dimensions == 768 and getattr(embedder, "pooling") == "cls"
    assert embedder.embed(["x"]).shape == (1, 768)


def test_importing_the_embedding_package_imports_no_model_runtime() -> None:
    code = (
        "import sys, memory_sim.embedding, memory_sim.embedding.embedder, memory_sim.local.ai.local_ai, "
        "memory_sim.local.ai.models; from memory_sim.embedding import HashingEmbedder; HashingEmbedder().embed(['x']); "
        "print(any(m in sys.modules for m in ('torch', 'onnxruntime', 'tokenizers')))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "False"
