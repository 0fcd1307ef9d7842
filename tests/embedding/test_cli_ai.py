"""`memory-sim ai run` and `memory-sim models`: one verb, one library call."""

from __future__ import annotations

import json

import pytest

from memory_sim.cli import main


@pytest.fixture(autouse=True)
def no_bge(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.delenv("MEMORY_SIM_BGE_PATH", raising=False)


def test_models_lists_availability_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    bge, minilm = rows["@cf/baai/bge-base-en-v1.5"], rows["sentence-transformers/all-MiniLM-L6-v2"]
    assert not bge["available"] and "MEMORY_SIM_BGE_PATH" in bge["detail"]
    assert minilm["available"] and minilm["default"] and minilm["dimensions"] == 384


def test_ai_run_default_answers_like_workers_ai(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ai", "run", "default", "--text", "hello", "--text", "world", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert answer["shape"] == [2, 384] and answer["pooling"] == "mean" and len(answer["data"]) == 2
    assert main(["ai", "run", "minilm", "--text", "hello", "--pooling", "cls"]) == 0
    assert "pooling cls" in capsys.readouterr().out


def test_ai_run_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ai", "run", "@cf/meta/nope", "--text", "x"]) == 2
    assert capsys.readouterr().err.strip() == "error: AiError: No such model @cf/meta/nope or task"
    assert main(["ai", "run", "minilm", "--text", ""]) == 2
    assert "Bad input" in capsys.readouterr().err
