"""The AI routes take model names, never paths (server/ai_names.py): `/ai/run/{model}`, `/ai/run/proxy`,
`/remote-proxy/{a}/ai` and `/ai/v1/embeddings` answer 5007 "No such model" for a path, the same answer whether
the path is a model's folder (under any spelling), an ordinary folder or nothing at all, and load nothing. Before,
a model folder's path loaded it (a new ONNX export per spelling) and the answers told the folders apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_sim.local.ai.models import minilm_dir
from memory_sim.server.ai_names import ModelNames
from memory_sim.testing import TEST_TOKEN, ServerForTests

AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}
BODY = {"text": ["the miller"]}


def spellings(tmp_path: Path) -> list[str]:
    model = minilm_dir()
    assert model is not None  # the bundled MiniLM: a real model folder on disk
    parent, name = str(model.parent), model.name
    return [str(model), f"{parent}//{name}", f"{parent}/./{name}", f"{model}/", str(tmp_path),
            str(tmp_path / "nothing-here"), "/etc", "../../etc/passwd", "model"]


def answers(server: ServerForTests, account_id: str, model: str) -> list[tuple[int, Any]]:
    """The four routes' (status, first error) for `model`."""
    base = server.base_url
    root = base.removesuffix("/client/v4")
    run = httpx.post(f"{base}/accounts/{account_id}/ai/run/{model}", json=BODY, headers=AUTH, timeout=60)
    proxy = httpx.post(f"{base}/accounts/{account_id}/ai/run/proxy", headers={**AUTH, "cf-consn-model-id": model},
                       json={"inputs": BODY, "options": {}}, timeout=60)
    bound = httpx.post(f"{root}/remote-proxy/{account_id}/ai", content=json.dumps({"inputs": BODY, "options": {}}),
                       headers={**AUTH, "MF-URL": "https://workers-binding.ai/run?version=3", "MF-Binding": "AI",
                                "MF-Header-cf-consn-model-id": model}, timeout=60)
    openai = httpx.post(f"{base}/accounts/{account_id}/ai/v1/embeddings", json={"model": model, "input": "x"},
                        headers=AUTH, timeout=60)
    return [(r.status_code, r.json()["errors"][0]) for r in (run, proxy, bound, openai)]


def test_a_path_is_no_such_model_on_every_route_whatever_is_on_disk(
    server: ServerForTests, account_id: str, tmp_path: Path,
) -> None:
    for model in spellings(tmp_path):
        expected = {"code": 5007, "message": f"AiError: No such model {model} or task"}
        in_path, *in_bodies = answers(server, account_id, model)
        assert in_bodies == [(400, expected)] * 3, model
        # the client tidies a URL's `/./` and `..` first: the route then sees another name, or no route matches
        assert in_path[0] == 404 if ".." in model else in_path[1]["code"] == 5007, model
    ai = server.app.state.ai
    assert isinstance(ai, ModelNames)
    assert not getattr(ai.ai, "_loaded", {})  # nothing was loaded or exported for any of them


def test_the_catalogue_and_the_operators_models_pass() -> None:
    """Names pass on to the Ai (which may then say the weights are missing), paths only when configured."""
    calls: list[str] = []

    class Recording:
        def catalogue(self) -> frozenset[str]:
            return frozenset({"sentence-transformers/all-MiniLM-L6-v2", "default"})

        def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
            calls.append(model)
            return {}

    names = ModelNames(Recording(), ["/srv/models/mine"])  # type: ignore[arg-type]
    for model in ("default", "sentence-transformers/all-MiniLM-L6-v2", "/srv/models/mine"):
        names.run(model, BODY)
    for refused in ("/srv/models//mine", "/srv/models/./mine", "minilm2"):
        with pytest.raises(Exception, match="No such model"):
            names.run(refused, BODY)
    assert calls == ["default", "sentence-transformers/all-MiniLM-L6-v2", "/srv/models/mine"]


@pytest.mark.parametrize("encoding", ["float16", 7, "", ["float"]])
def test_an_encoding_format_openai_does_not_know_is_refused(
    server: ServerForTests, account_id: str, encoding: object,
) -> None:
    """As OpenAI answers it (before, 200 with floats): only "float" and "base64" (null: float)."""
    answer = httpx.post(f"{server.base_url}/accounts/{account_id}/ai/v1/embeddings", headers=AUTH, timeout=60,
                        json={"model": "sentence-transformers/all-MiniLM-L6-v2", "input": "x",
                              "encoding_format": encoding})
    assert answer.status_code == 400
    assert "is not one of ['float', 'base64'] - 'encoding_format'" in answer.json()["error"]["message"]
