"""Workers AI's newer text models answer locally as production does: each request is validated against its own
model's input schema (5006 naming the field, before anything else), each answer has its model's output shape, and
a model whose weights are not here fails with one line naming the setting that points at them, never with another
model's numbers. Runs on real (small, random-weight) sentence-transformers folders of the models' widths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from catalogue_fakes import build_embeddinggemma, build_qwen3_embedding, build_reranker
from embedding_fakes import build_bge_shaped_model

from memory_sim.bindings import ai_models
from memory_sim.bindings.ai_models import (
    BGE_M3,
    BGE_RERANKER,
    CATALOGUE,
    EMBEDDINGGEMMA,
    OMNI_BGE,
    QWEN3_DEFAULT_INSTRUCTION,
    QWEN3_EMBEDDING,
    parse_request,
)
from memory_sim.errors import AiError, ConfigError
from memory_sim.local.ai import models
from memory_sim.local.ai.local_ai import LocalAi

PATH_VARIABLES = [spec.path_env for spec in CATALOGUE.values()]


@pytest.fixture
def no_weights(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No path variable set and an empty Hugging Face cache: no catalogue model's weights are here."""
    for name in PATH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))


def _local() -> LocalAi:
    return LocalAi(runtime="torch", threads=1)


GOOD: list[tuple[str, dict[str, Any]]] = [
    (BGE_M3, {"text": ["a", "b"]}),
    (BGE_M3, {"contexts": [{"text": "a"}], "query": "q", "truncate_inputs": True}),
    (EMBEDDINGGEMMA, {"text": "a"}),
    (QWEN3_EMBEDDING, {"queries": ["q"], "documents": "d", "instruction": "Find the answer"}),
    (QWEN3_EMBEDDING, {"text": ["d"] * 32}),
    (OMNI_BGE, {"text": ["a"], "pooling": "cls"}),
    (BGE_RERANKER, {"query": "q", "contexts": [{"text": "a"}, {"text": "b"}], "top_k": 1}),
]

BAD: list[tuple[str, dict[str, Any], str]] = [
    (BGE_M3, {}, "required properties at '/' are 'text' or 'contexts'"),
    (BGE_M3, {"text": ["x"] * 101}, "Array at '/text' has too many items (101 > 100)"),
    (BGE_M3, {"contexts": []}, "Array at '/contexts' has too few items"),
    (BGE_M3, {"contexts": [{"text": ""}]}, "String at '/contexts/0/text'"),
    (BGE_M3, {"contexts": [{"text": "a"}], "query": ""}, "String at '/query'"),
    (BGE_M3, {"text": "a", "truncate_inputs": "yes"}, "'/truncate_inputs', expected 'boolean'"),
    (EMBEDDINGGEMMA, {"text": [""]}, "String at '/text/0' is too short"),
    (EMBEDDINGGEMMA, {"queries": ["q"]}, "required properties at '/' are 'text'"),
    (QWEN3_EMBEDDING, {"queries": ["q"] * 33}, "Array at '/queries' has too many items (33 > 32)"),
    (QWEN3_EMBEDDING, {"instruction": "x"}, "one of 'queries', 'documents', 'text'"),
    (QWEN3_EMBEDDING, {"documents": "d", "text": "t"}, "alias of '/documents'"),
    (QWEN3_EMBEDDING, {"queries": "q", "instruction": 3}, "'/instruction', expected 'string'"),
    (OMNI_BGE, {"text": "a", "pooling": "max"}, "Value at '/pooling' is not one of 'mean', 'cls'"),
    (BGE_RERANKER, {"contexts": [{"text": "a"}]}, "required properties at '/' are 'query'"),
    (BGE_RERANKER, {"query": "q", "contexts": [{"text": "a"}], "top_k": 0}, "'/top_k' must be an integer of at"),
    (BGE_RERANKER, {"query": "q", "contexts": "a"}, "'/contexts', expected 'array' of 'object'"),
]


@pytest.mark.parametrize(("model", "inputs"), GOOD, ids=[f"{m}-{i}" for i, (m, _) in enumerate(GOOD)])
def test_each_model_takes_its_own_schema(model: str, inputs: dict[str, Any]) -> None:
    request = parse_request(model, inputs)
    assert request.model == model and (request.texts or request.queries)


@pytest.mark.parametrize(("model", "inputs", "detail"), BAD, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(BAD)])
def test_bad_input_is_5006_naming_the_field_before_the_weights(
    no_weights: None, model: str, inputs: dict[str, Any], detail: str
) -> None:
    with pytest.raises(AiError) as refused:
        _local().run(model, inputs)
    assert str(refused.value).startswith("AiError: Bad input: Error: ") and detail in str(refused.value)


@pytest.mark.parametrize("model", sorted(CATALOGUE))
def test_missing_weights_fail_in_one_line_naming_the_setting(no_weights: None, model: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(models.BGE_PATH_ENV, raising=False)
    inputs = dict(GOOD[[m for m, _ in GOOD].index(model)][1])
    with pytest.raises(ConfigError) as refused:
        _local().run(model, inputs)
    message = str(refused.value)
    assert "\n" not in message and f"${CATALOGUE[model].path_env}" in message and "never downloaded" in message


@pytest.mark.parametrize(("model", "why"), [(EMBEDDINGGEMMA, "holds a 'bert' model, not google/embeddinggemma-300m"),
                                           (QWEN3_EMBEDDING, "holds a 'bert' model, not Qwen/Qwen3-Embedding-0.6B"),
                                           (BGE_RERANKER, "holds no cross-encoder")])
def test_another_models_folder_is_refused_not_run_in_its_place(no_weights: None, model: str, why: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    minilm = models.minilm_dir()
    assert minilm is not None
    monkeypatch.setenv(CATALOGUE[model].path_env, str(minilm))  # a real model folder, of another model
    inputs = dict(GOOD[[m for m, _ in GOOD].index(model)][1])
    with pytest.raises(ConfigError, match=why) as refused:
        _local().run(model, inputs)
    assert "\n" not in str(refused.value) and str(minilm) in str(refused.value)


def test_a_folder_of_another_width_is_refused(no_weights: None, monkeypatch: pytest.MonkeyPatch) -> None:
    minilm = models.minilm_dir()
    assert minilm is not None
    monkeypatch.setenv("MEMORY_SIM_BGE_M3_PATH", str(minilm))
    with pytest.raises(ConfigError, match="holds a 384-d model, not BAAI/bge-m3 \\(1024-d\\)"):
        _local().run(BGE_M3, {"text": "a"})


@pytest.fixture(scope="module")
def m3_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small BERT of bge-m3's width (1024-d, CLS pooling + Normalize), random weights."""
    return _bge_shaped(tmp_path_factory.mktemp("m3"), hidden=1024)


def _bge_shaped(folder: Path, hidden: int) -> Path:
    import shutil

    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers import models as st_models
    from transformers import BertConfig, BertModel

    source = models.minilm_dir()
    assert source is not None
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=hidden, num_hidden_layers=1, num_attention_heads=16,
                        intermediate_size=256, max_position_embeddings=512)
    BertModel(config).save_pretrained(folder / "bert")
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(source / name, folder / "bert" / name)
    modules = [st_models.Transformer(str(folder / "bert"), max_seq_length=512),
               st_models.Pooling(hidden, pooling_mode="cls"), st_models.Normalize()]
    SentenceTransformer(modules=modules, device="cpu").save(str(folder / "model"))
    return folder / "model"


def test_bge_m3_answers_each_of_its_forms(no_weights: None, m3_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_SIM_BGE_M3_PATH", str(m3_folder))
    ai = _local()
    texts = ["the miller's wheel", "bread at dawn", "the miller"]
    embedded = ai.run(BGE_M3, {"text": texts})
    assert embedded["shape"] == [3, 1024] and embedded["pooling"] == "cls" and len(embedded["data"]) == 3
    rows = np.array(embedded["data"])
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-4)
    contexts = ai.run(BGE_M3, {"contexts": [{"text": t} for t in texts]})
    assert set(contexts) == {"response", "shape", "pooling"} and np.allclose(contexts["response"], rows, atol=1e-5)
    query = ai.run(BGE_M3, {"query": "the miller", "contexts": [{"text": t} for t in texts]})["response"]
    assert sorted(r["id"] for r in query) == [0, 1, 2] and query[0]["id"] == 2  # the identical text first
    assert [r["score"] for r in query] == sorted((r["score"] for r in query), reverse=True)
    assert query[0]["score"] == pytest.approx(1.0, abs=1e-4)


def test_omni_bge_is_bge_base_with_its_pooling(no_weights: None, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    folder = build_bge_shaped_model(tmp_path, layers=1, intermediate=256)
    monkeypatch.setenv(models.BGE_PATH_ENV, str(folder))
    ai = _local()
    for pooling in ("mean", "cls"):
        answer = ai.run(OMNI_BGE, {"text": ["a", "b"], "pooling": pooling})
        assert answer["shape"] == [2, 768] and answer["pooling"] == pooling
    assert ai.run(OMNI_BGE, {"text": "a"})["pooling"] == "mean"  # the schema's default
    assert ai.run(OMNI_BGE, {"text": "a", "pooling": "cls"})["data"] == ai.run(
        "@cf/baai/bge-base-en-v1.5", {"text": "a", "pooling": "cls"})["data"]  # the same weights


def test_output_shapes_are_the_schemas() -> None:
    request = parse_request(QWEN3_EMBEDDING, {"queries": ["q"], "documents": ["d1", "d2"]})
    assert request.queries == ["q"] and request.texts == ["d1", "d2"]
    assert ai_models.embeddings_output(request, [[0.6, 0.8]] * 3) == {"shape": [3, 2], "data": [[0.6, 0.8]] * 3}
    ranked = ai_models.scored_output([0.1, 0.9, 0.5, 0.9], top_k=3)
    assert ranked == {"response": [{"id": 1, "score": 0.9}, {"id": 3, "score": 0.9}, {"id": 2, "score": 0.5}]}


def test_the_command_line_lists_them_and_names_the_setting(no_weights: None, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from memory_sim.cli import main

    assert main(["models", "--json"]) == 0
    listed = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    for name in (BGE_M3, EMBEDDINGGEMMA, QWEN3_EMBEDDING, OMNI_BGE):
        assert listed[name]["available"] is False and CATALOGUE[name].path_env in listed[name]["detail"]
    assert BGE_RERANKER not in listed  # it embeds nothing
    assert main(["--data", str(tmp_path / "d"), "--model", BGE_M3, "remember", "ada", "hello", "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "$MEMORY_SIM_BGE_M3_PATH" in err and not (tmp_path / "d").exists()


# --- the three models run whole by sentence-transformers, on tiny random-weight folders of their architectures ---


@pytest.fixture(scope="module")
def gemma_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_embeddinggemma(tmp_path_factory.mktemp("gemma"))


@pytest.fixture(scope="module")
def qwen3_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_qwen3_embedding(tmp_path_factory.mktemp("qwen3"))


@pytest.fixture(scope="module")
def reranker_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_reranker(tmp_path_factory.mktemp("reranker"))


def _unit_rows(answer: dict[str, Any], count: int, width: int) -> np.ndarray:
    assert set(answer) == {"shape", "data"} and answer["shape"] == [count, width]
    rows = np.array(answer["data"])
    assert rows.shape == (count, width) and np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    return rows


def test_embeddinggemma_runs_its_dense_projections(no_weights: None, gemma_folder: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """768-d out of a 32-d transformer: only the two Dense modules after the pooling make that width."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoTokenizer

    monkeypatch.setenv("MEMORY_SIM_EMBEDDINGGEMMA_PATH", str(gemma_folder))
    texts = ["the miller wheel", "bread at dawn", "the miller wheel"]
    rows = _unit_rows(_local().run(EMBEDDINGGEMMA, {"text": texts}), 3, 768)
    assert np.allclose(rows[0], rows[2]) and not np.allclose(rows[0], rows[1])
    single = _unit_rows(_local().run(EMBEDDINGGEMMA, {"text": "bread at dawn"}), 1, 768)
    assert np.allclose(single[0], rows[1], atol=1e-5)
    # by hand from the folder's own weights: mean of the token states, Dense, Dense, unit length; no prompt added
    tokens = AutoTokenizer.from_pretrained(gemma_folder)("bread at dawn", return_tensors="pt")
    with torch.inference_mode():
        states = AutoModel.from_pretrained(gemma_folder)(**tokens).last_hidden_state[0].mean(dim=0)
    for dense in ("2_Dense", "3_Dense"):
        states = load_file(str(gemma_folder / dense / "model.safetensors"))["linear.weight"] @ states
    expected = (states / states.norm()).numpy()
    assert np.allclose(rows[1], expected, atol=1e-4)


def _last_token_state(folder: Path, text: str) -> np.ndarray:
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokens = AutoTokenizer.from_pretrained(folder)(text, return_tensors="pt")
    with torch.inference_mode():
        state = AutoModel.from_pretrained(folder)(**tokens).last_hidden_state[0, -1]
    return (state / state.norm()).numpy()


def test_qwen3_pools_the_last_token_and_prompts_only_the_queries(no_weights: None, qwen3_folder: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_SIM_QWEN3_EMBEDDING_PATH", str(qwen3_folder))
    ai = _local()
    asked = {"queries": ["who sold the flour"], "documents": ["the miller sold flour", "rain at the inn"]}
    rows = _unit_rows(ai.run(QWEN3_EMBEDDING, asked), 3, 1024)
    # rows: the queries', then the documents'; a query carries its instruction, a document nothing
    assert np.allclose(rows[1], _last_token_state(qwen3_folder, "the miller sold flour"), atol=1e-4)
    prompted = f"Instruct: {QWEN3_DEFAULT_INSTRUCTION}\nQuery:who sold the flour"
    assert np.allclose(rows[0], _last_token_state(qwen3_folder, prompted), atol=1e-4)
    other = _unit_rows(ai.run(QWEN3_EMBEDDING, {**asked, "instruction": "Find the seller"}), 3, 1024)
    assert not np.allclose(other[0], rows[0], atol=1e-3) and np.allclose(other[1:], rows[1:], atol=1e-5)
    alias = _unit_rows(ai.run(QWEN3_EMBEDDING, {"text": "the miller sold flour"}), 1, 1024)
    assert np.allclose(alias[0], rows[1], atol=1e-5)
    assert ai.run(QWEN3_EMBEDDING, {"documents": ["the mill"] * 32})["shape"] == [32, 1024]  # the batch limit


def test_the_reranker_scores_each_pair_best_first(no_weights: None, reranker_folder: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    monkeypatch.setenv("MEMORY_SIM_BGE_RERANKER_PATH", str(reranker_folder))
    contexts = ["the miller sold flour", "rain at the inn", "ada is the baker", "the river stone"]
    query = "who sold the flour"
    ranked = _local().run(BGE_RERANKER, {"query": query, "contexts": [{"text": t} for t in contexts]})
    assert set(ranked) == {"response"} and sorted(r["id"] for r in ranked["response"]) == [0, 1, 2, 3]
    scores = [r["score"] for r in ranked["response"]]
    assert scores == sorted(scores, reverse=True) and all(0.0 < s < 1.0 for s in scores)
    # each score by hand: the classifier's logit for the (query, context) pair, through a sigmoid
    tokenizer = AutoTokenizer.from_pretrained(reranker_folder)
    model = AutoModelForSequenceClassification.from_pretrained(reranker_folder)
    with torch.inference_mode():
        logits = model(**tokenizer([query] * 4, contexts, padding=True, return_tensors="pt")).logits[:, 0]
    by_id = {r["id"]: r["score"] for r in ranked["response"]}
    assert [by_id[i] for i in range(4)] == pytest.approx(torch.sigmoid(logits).tolist(), abs=1e-5)
    top = _local().run(BGE_RERANKER, {"query": query, "contexts": [{"text": t} for t in contexts], "top_k": 2})
    assert top["response"] == ranked["response"][:2]
    many = _local().run(BGE_RERANKER, {"query": query, "contexts": [{"text": t} for t in contexts], "top_k": 9})
    assert many == ranked
    assert _local().model_dimensions(BGE_RERANKER) is None  # a reranker has no width


def test_a_memory_folder_can_embed_with_them(no_weights: None, gemma_folder: Path, qwen3_folder: Path,
                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_sim import Env, MemorySystem
    from memory_sim.memory.models import ShortTermMemory, WorldTime
    from memory_sim.sim.clock import SimClock

    monkeypatch.setenv("MEMORY_SIM_EMBEDDINGGEMMA_PATH", str(gemma_folder))
    monkeypatch.setenv("MEMORY_SIM_QWEN3_EMBEDDING_PATH", str(qwen3_folder))
    for model, width in ((EMBEDDINGGEMMA, 768), (QWEN3_EMBEDDING, 1024)):
        with Env.local(str(tmp_path / str(width)), embed_model=model) as env:
            memory = MemorySystem(env, clock=SimClock())
            memory.remember(ShortTermMemory("tom", "the miller sold flour", 0.9, WorldTime(3, 15)))
            assert env.VECTORIZE.describe().dimensions == width
            # Qwen3 reads a question with its task's instruction in front (its model card); the others take none
            assert (env.embedder.query_instruction or "").startswith("Instruct: ") == (model == QWEN3_EMBEDDING)
            assert [r.text for r in memory.recall("tom", "who sold the flour")] == ["the miller sold flour"]
    with pytest.raises(ConfigError, match="unknown embedding model"):  # the reranker embeds nothing
        Env.local(str(tmp_path / "reranker"), embed_model=BGE_RERANKER)


def test_qwen3_takes_an_empty_list_beside_a_full_one() -> None:
    """Its schema sets no minimum count for `queries` or `documents`; one of them must hold a text."""
    from memory_sim.bindings.ai_models import parse_request
    from memory_sim.errors import AiError

    asked = parse_request(QWEN3_EMBEDDING, {"queries": [], "documents": ["the miller sold flour"]})
    assert asked.queries == [] and asked.texts == ["the miller sold flour"]
    assert parse_request(QWEN3_EMBEDDING, {"queries": ["who sold flour?"], "text": []}).queries == ["who sold flour?"]
    with pytest.raises(AiError, match="one of 'queries', 'documents', 'text'"):
        parse_request(QWEN3_EMBEDDING, {"queries": [], "documents": []})
