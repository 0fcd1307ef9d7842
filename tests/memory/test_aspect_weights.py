"""Key inference's cost (memory/beliefs/aspect_model.py, aspect_weights.py, memory/writing/keying.py): the shipped
weights match the training inputs, weights are found by model name and vectors (shipped, cached on disk, fitted
once), an embedder whose vectors carry no meaning is found out by what it does, and a batch's texts are embedded
once, only where structure leaves the key open, with the keys one-at-a-time inference gives."""

from __future__ import annotations

import gc
import logging
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from memory_sim.bindings.ai import BGE_BASE
from memory_sim.bindings.ai_validation import output, parse_inputs
from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.embedding.embedder import AiEmbedder
from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.errors import EmbeddingUnavailable
from memory_sim.eval.state_keys import load_pairs, subjects_for
from memory_sim.memory.beliefs import aspect_model, aspect_weights
from memory_sim.memory.beliefs.aspect_model import TRAINING_HASH, weights_for
from memory_sim.memory.beliefs.aspects import ASPECTS
from memory_sim.memory.beliefs.exemplars import EXAMPLES
from memory_sim.memory.beliefs.keys import infer_key, key_text
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.writing.keying import ModelEmbed, env_embed, keys_for

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
DATA = load_pairs(Path(__file__).parent / "data" / "state_key_pairs.json")
STALE = "run `python scripts/fit_aspect_model.py` and commit memory_sim/memory/beliefs/aspect_weights.npz"


class Counting:
    """Hashing vectors under a model name, counting the texts asked for; `meaning` is what it says of itself."""

    def __init__(self, model: str = "test/counting", dimensions: int = 32, meaning: bool | None = True) -> None:
        self.hashing = HashingEmbedder(dimensions, model=model)
        self.model = model
        self.calls: list[list[str]] = []
        if meaning is not None:
            self.carries_meaning = meaning

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.hashing.embed(texts)

    def asked(self) -> list[str]:
        return [text for call in self.calls for text in call]


@pytest.fixture(autouse=True)
def fresh_process_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts as a fresh process would, with its own disk cache."""
    monkeypatch.setattr(aspect_weights, "cache_folder", lambda environ=None: tmp_path / "aspect_cache")
    aspect_model._fitted.clear()
    yield
    aspect_model._fitted.clear()


# --- the shipped weights ---------------------------------------------------------------------------------------


def test_the_shipped_weights_are_fitted_on_the_current_examples_for_the_bundled_model() -> None:
    shipped = aspect_weights.load(aspect_weights.SHIPPED)
    assert shipped is not None, f"no shipped aspect weights: {STALE}"
    assert shipped.model == MINILM, STALE
    assert shipped.training_hash == TRAINING_HASH, (
        f"exemplars.py, the cue words or the fit's settings changed since the shipped weights were fitted: {STALE}")
    features = len(aspect_model.features(np.zeros(384), "", "event"))
    assert shipped.weights.shape == (features, len(ASPECTS)) and shipped.probes.shape == (4, 384)
    assert aspect_model.carries_meaning(shipped.probes)


@pytest.mark.slow
def test_the_shipped_weights_are_what_a_fit_here_gives(tmp_path: Path) -> None:
    from memory_sim.env import Env

    shipped = aspect_weights.load(aspect_weights.SHIPPED)
    assert shipped is not None
    with Env.local(tmp_path / "data", environ={}, embed_model=MINILM) as env:
        fresh = aspect_model.fit_for(MINILM, env.embedder.embed)
        assert weights_for(env.embedder.embed).training_hash == TRAINING_HASH
        assert not (tmp_path / "aspect_cache").exists()  # the shipped weights served: nothing fitted, nothing cached
    assert shipped.fits(MINILM, TRAINING_HASH, fresh.probes)
    assert np.allclose(shipped.weights, fresh.weights, atol=1e-4)


# --- found by name and vectors: in the process, on disk, fitted once ---------------------------------------------


def test_one_fit_per_model_name_serves_every_embedder_of_it(monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(aspect_model, "carries_meaning", lambda probes: True)  # as a real model's vectors would
    first, second = Counting(), Counting()
    with caplog.at_level(logging.INFO, logger=aspect_model.__name__):
        weights = weights_for(ModelEmbed(first, first.model))
    assert len([t for t in first.asked() if t == EXAMPLES[0][0]]) == 1 and "fitted for test/counting" in caplog.text
    path = aspect_weights.cache_path(first.model, TRAINING_HASH)
    assert path.is_file() and "cached in" in caplog.text
    assert weights_for(second.embed) is weights  # another env's embedder of the same model: no fit
    assert EXAMPLES[0][0] not in second.asked()
    aspect_model._fitted.clear()  # a new process: the disk cache serves
    third = Counting()
    assert np.array_equal(weights_for(third.embed).weights, weights.weights)
    assert EXAMPLES[0][0] not in third.asked()


def test_the_weights_do_not_keep_an_embedder_alive() -> None:
    embedder = Counting(meaning=False)
    weights_for(ModelEmbed(embedder, embedder.model))
    gone = weakref.ref(embedder)
    del embedder
    gc.collect()
    assert gone() is None


def test_the_same_name_with_other_vectors_is_fitted_for_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aspect_model, "carries_meaning", lambda probes: True)
    narrow, wide = Counting(dimensions=32), Counting(dimensions=48)
    assert weights_for(narrow.embed).weights.shape[0] != weights_for(wide.embed).weights.shape[0]
    aspect_model._fitted.clear()
    other = Counting(dimensions=64)  # the disk cache holds another model's weights under this name: not used
    assert weights_for(other.embed).probes.shape[1] == 64 and EXAMPLES[0][0] in other.asked()


def test_stale_shipped_weights_are_refitted_with_a_line_naming_the_script(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    embedder = Counting(model="test/shipped", meaning=False)
    shipped = aspect_model.fit_for(embedder.model, embedder.embed)
    stale = tmp_path / "aspect_weights.npz"
    aspect_weights.save(stale, aspect_weights.AspectWeights(shipped.weights + 1.0, shipped.model, "0" * 64,
                                                            shipped.probes))
    monkeypatch.setattr(aspect_weights, "SHIPPED", stale)
    embedder.calls.clear()
    with caplog.at_level(logging.WARNING, logger=aspect_model.__name__):
        found = weights_for(embedder.embed)
    assert np.array_equal(found.weights, shipped.weights) and EXAMPLES[0][0] in embedder.asked()
    assert "fitted on other training examples" in caplog.text and "scripts/fit_aspect_model.py" in caplog.text


def test_an_unreadable_cache_file_is_fitted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aspect_model, "carries_meaning", lambda probes: True)
    embedder = Counting()
    path = aspect_weights.cache_path(embedder.model, TRAINING_HASH)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an npz")
    assert weights_for(embedder.embed).training_hash == TRAINING_HASH
    assert aspect_weights.load(path) is not None  # written again, whole


# --- vectors that carry no meaning -------------------------------------------------------------------------------


class HashingWorkersAi:
    """A Workers AI whose BGE answers with hashing vectors (as tests/cloudflare's stand-in does)."""

    def __init__(self) -> None:
        self.hashing = HashingEmbedder(768, model=BGE_BASE)

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        texts, pooling = parse_inputs(inputs)
        return output(self.hashing.embed(texts), 768, pooling)


def env_with(embedder: Any) -> WorkerEnv:
    return cast(WorkerEnv, SimpleNamespace(embedder=embedder))


def test_hashing_vectors_under_a_real_models_name_read_no_meaning() -> None:
    assert env_embed(env_with(HashingEmbedder(64))) is None  # it says so itself
    served = AiEmbedder(HashingWorkersAi(), BGE_BASE)  # nothing says so: the probe pairs find it out
    assert served.model == BGE_BASE and env_embed(env_with(served)) is None
    assert isinstance(env_embed(env_with(Counting(meaning=True))), ModelEmbed)


def test_an_embedder_that_fails_the_probe_is_tried_as_it_comes() -> None:
    class Down:
        model = "test/down"

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            raise EmbeddingUnavailable("unreachable")

    embed = env_embed(env_with(Down()))
    assert isinstance(embed, ModelEmbed)
    owed = memory("I owe Mira three silver.", about=("mira",))
    assert keys_for([owed], Registry(), embed)[owed.id].key == "debt:mira"  # the cue words decide


@pytest.mark.slow
def test_the_bundled_model_reads_meaning(tmp_path: Path) -> None:
    from memory_sim.env import Env

    with Env.local(tmp_path / "data", environ={}, embed_model=MINILM) as env:
        assert isinstance(env_embed(env), ModelEmbed)


# --- embedded once, only where structure leaves the key open -------------------------------------------------------


class Registry:
    refiner = None  # no chat model configured

    def profiles(self) -> list[dict[str, Any]]:
        return [{"npc_id": "mira", "name": "Mira"}, {"npc_id": "tom", "name": "Tom"}]

    def held(self, npc_ids: Any) -> dict[str, set[str]]:  # the NPCs hold no state yet
        return {npc: set() for npc in npc_ids}

    def hold(self, keys: Any) -> None:
        pass


def memory(content: str, type: str = "event", about: tuple[str, ...] = (), **extra: Any) -> ShortTermMemory:
    return ShortTermMemory(npc_id="ada", content=content, importance=0.5, world_time=WorldTime(1, 8), type=type,
                           about=about, **extra)


def test_a_batch_embeds_only_what_structure_leaves_open_in_one_call() -> None:
    embedder = Counting()
    embed = ModelEmbed(embedder, embedder.model)
    weights_for(embed)  # fitted beforehand: the batch's own calls are what is counted
    embedder.calls.clear()
    open_ = [memory("I owe Mira three silver.", about=("mira",)), memory("My horse went lame on the road."),
             memory("I plan to mend the roof before winter.")]
    decided = [memory("Tom is my cousin.", "relationship", ("tom",)),  # kinship
               memory("I don't trust Tom.", "opinion", ("tom",)),  # an opinion of one NPC
               memory("The new baker opened his shop.", "event"),  # a stranger's news
               memory("Mira's cow calved.", state_key="possession:cow")]  # the game's key
    keys = keys_for([*open_, *decided], Registry(), embed)
    assert len(embedder.calls) == 1
    assert sorted(embedder.calls[0]) == sorted(["I owe Sam three silver.", "My horse went lame on the road.",
                                                "I plan to mend the roof before winter."])
    assert keys[decided[1].id].key == "opinion:tom" and keys[decided[3].id].key == "possession:cow"
    assert decided[0].id not in keys and decided[2].id not in keys


@pytest.mark.parametrize("embedder", [None, HashingEmbedder(64)])
def test_a_text_left_unembedded_would_have_had_no_key(embedder: HashingEmbedder | None) -> None:
    for pair in DATA["pairs"]:
        for side in ("older", "newer"):
            m = pair[side]
            subjects = subjects_for(m, pair["npc"], DATA["npcs"])
            if key_text(m["text"], type=m["type"], subjects=subjects, names=DATA["npcs"]) is None:
                full = infer_key(m["text"], type=m["type"], subjects=subjects, names=DATA["npcs"],
                                 embed=None if embedder is None else embedder.embed)
                assert full.key is None or full.confidence == 0.9, (m["text"], full)


@pytest.mark.slow
@pytest.mark.parametrize("split", ["tuning", "held_out_3"])
def test_batched_inference_gives_the_keys_one_at_a_time_inference_gives(tmp_path: Path, split: str) -> None:
    from memory_sim.env import Env

    chosen = [(pair[side], pair["npc"]) for pair in DATA["pairs"] if pair["split"] == split
              for side in ("older", "newer")]
    with Env.local(tmp_path / "data", environ={}, embed_model=MINILM) as env:
        single = [infer_key(m["text"], type=m["type"], subjects=subjects_for(m, npc, DATA["npcs"]),
                            embed=env.embedder.embed) for m, npc in chosen]
        texts = [key_text(m["text"], type=m["type"], subjects=subjects_for(m, npc, DATA["npcs"]))
                 for m, npc in chosen]
        served = ModelEmbed(env.embedder, env.embedder.model).serving([t for t in texts if t is not None])
        batched = [infer_key(m["text"], type=m["type"], subjects=subjects_for(m, npc, DATA["npcs"]), embed=served)
                   for m, npc in chosen]
    assert [(g.key, g.confidence) for g in batched] == [(g.key, g.confidence) for g in single]
    assert sum(t is None for t in texts) > 0.05 * len(texts)  # structure decides a share without embedding
