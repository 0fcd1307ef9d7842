"""EmbeddingGemma, Qwen3-Embedding and bge-reranker-base over the server's REST route and the official SDK, with
their weights configured (tiny random-weight folders of their own architectures): each answers in its own shape
and width, bad input is 5006 naming the field, and without weights the answer is one line naming the setting."""

from __future__ import annotations

from pathlib import Path

import cloudflare
import pytest

from memory_sim.bindings.ai_models import BGE_RERANKER, CATALOGUE, EMBEDDINGGEMMA, QWEN3_EMBEDDING
from tests.embedding.catalogue_fakes import build_embeddinggemma, build_qwen3_embedding, build_reranker


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {EMBEDDINGGEMMA: build_embeddinggemma(tmp_path_factory.mktemp("gemma")),
            QWEN3_EMBEDDING: build_qwen3_embedding(tmp_path_factory.mktemp("qwen3")),
            BGE_RERANKER: build_reranker(tmp_path_factory.mktemp("reranker"))}


@pytest.fixture
def configured(folders: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    for model, folder in folders.items():
        monkeypatch.setenv(CATALOGUE[model].path_env, str(folder))


def test_each_answers_in_its_own_shape(configured: None, sdk: cloudflare.Cloudflare, account_id: str) -> None:
    gemma = sdk.ai.run(EMBEDDINGGEMMA, account_id=account_id, text=["the miller", "bread"])
    assert gemma["shape"] == [2, 768] and len(gemma["data"][1]) == 768 and "pooling" not in gemma
    qwen = sdk.ai.run(QWEN3_EMBEDDING, account_id=account_id,
                      extra_body={"queries": "who sold the flour", "documents": ["the miller", "rain", "ale"]})
    assert qwen["shape"] == [4, 1024] and len(qwen["data"]) == 4
    contexts = [{"text": "the miller sold flour"}, {"text": "rain"}, {"text": "ale"}]
    ranked = sdk.ai.run(BGE_RERANKER, account_id=account_id,  # the SDK types no reranker form: extra_body
                        extra_body={"query": "who sold the flour", "contexts": contexts, "top_k": 2})
    assert len(ranked["response"]) == 2 and {r["id"] for r in ranked["response"]} <= {0, 1, 2}
    assert ranked["response"][0]["score"] >= ranked["response"][1]["score"]


@pytest.mark.parametrize(("model", "body", "detail"), [
    (EMBEDDINGGEMMA, {"text": ["a"] * 101}, "Array at '/text' has too many items (101 > 100)"),
    (QWEN3_EMBEDDING, {"documents": ["a"] * 33}, "Array at '/documents' has too many items (33 > 32)"),
    (BGE_RERANKER, {"query": "q", "contexts": [{"text": "a"}], "top_k": 0}, "'/top_k' must be an integer"),
])
def test_bad_input_is_5006(configured: None, sdk: cloudflare.Cloudflare, account_id: str, model: str,
                           body: dict[str, object], detail: str) -> None:
    with pytest.raises(cloudflare.BadRequestError) as refused:
        sdk.ai.run(model, account_id=account_id, extra_body=body)
    error = refused.value.body["errors"][0]
    assert error["code"] == 5006 and detail in error["message"]


@pytest.mark.parametrize("model", [EMBEDDINGGEMMA, QWEN3_EMBEDDING, BGE_RERANKER])
def test_without_weights_one_line_names_the_setting(sdk: cloudflare.Cloudflare, account_id: str, model: str,
                                                     monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(CATALOGUE[model].path_env, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    body = {"query": "q", "contexts": [{"text": "a"}]} if model == BGE_RERANKER else {"text": "a"}
    with pytest.raises(cloudflare.BadRequestError) as refused:
        sdk.ai.run(model, account_id=account_id, extra_body=body)
    message = refused.value.body["errors"][0]["message"]
    assert "\n" not in message and f"${CATALOGUE[model].path_env}" in message
