"""`reembed` after changing the model, on real Chroma + DuckDB: the index is recreated for the new embedder's
dimensions and model, every memory D1 says belongs in it is re-embedded, and the folder then opens with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.bindings.ai import DEFAULT_MODEL
from memory_sim.builder import build_local_env, model_to_open
from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.embedding.index_model import describe_model, parse_description
from memory_sim.errors import ConfigError
from memory_sim.memory.jobs.rebuild import reembed
from memory_sim.memory.ledger import store
from memory_sim.memory.models import MemoryConfig, ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.settings import Settings
from memory_sim.sim.clock import SimClock

pytestmark = pytest.mark.timeout(120)


def _memories() -> list[ShortTermMemory]:
    texts = ["The blacksmith mended my oven door.", "Rain flooded the mill race.", "Tom sang at the pub.",
             "The vicar lost his hat.", "Bread sold out by noon."]
    return [ShortTermMemory("margaret", t, 0.9 if i != 3 else 0.2, WorldTime(1, 8 + i), id=f"m{i}")
            for i, t in enumerate(texts)]


def test_reembed_with_an_embedder_of_other_dimensions(tmp_path: Path) -> None:
    settings = Settings.load(environ={}, data_dir=tmp_path, index_name="memories")
    clock = SimClock()
    with build_local_env(settings, embedder=HashingEmbedder(32, model="fake/h32")) as env:
        system = MemorySystem(env, clock=clock, config=MemoryConfig())
        system.remember_many(_memories())
        db = env.DB
        db.batch(store.set_state(db, ["m4"], "unindexed"))  # forgotten by decay: stays out of the index
        db.batch(store.set_state(db, ["m2"], "pending"))  # due: in the outbox's state
        assert env.VECTORIZE.describe().dimensions == 32

    wider = HashingEmbedder(48, model="fake/h48")
    with pytest.raises(ConfigError, match="reembed"):  # a plain open refuses the other model, as before
        build_local_env(settings, embedder=wider)

    with build_local_env(settings, embedder=wider, rebuild_index=True) as env:
        system = MemorySystem(env, clock=clock, config=MemoryConfig())
        assert reembed(system) == 3  # m0, m1, m2: not the short-term-only m3 nor the forgotten m4
        info = env.VECTORIZE.describe()
        assert info.dimensions == 48
        assert parse_description(env.vectorize_account.get_index("memories").description)["model"] == "fake/h48"
        found = system.recall("margaret", "Tom sang at the pub.", top_k=3)
        assert found[0].id == "m2" and {r.source for r in found} == {"vectorize"}
        states = {m.id: m.index_state for m in store.all_memories(env.DB)}
        assert states == {"m0": "indexed", "m1": "indexed", "m2": "indexed", "m3": "none", "m4": "unindexed"}

    with build_local_env(settings, embedder=HashingEmbedder(48, model="fake/h48")) as env:  # opens with it now
        assert MemorySystem(env, clock=clock).recall("margaret", "oven door", top_k=1)[0].id == "m0"


def test_the_default_setting_opens_with_the_model_the_index_records() -> None:
    recorded = describe_model(HashingEmbedder(48, model="sentence-transformers/all-MiniLM-L6-v2"))
    assert model_to_open(DEFAULT_MODEL, recorded) == "sentence-transformers/all-MiniLM-L6-v2"
    assert model_to_open("some/other", recorded) == "some/other"  # a named model is checked, not replaced
    assert model_to_open(DEFAULT_MODEL, None) == DEFAULT_MODEL
    assert model_to_open(DEFAULT_MODEL, "an index someone else made") == DEFAULT_MODEL
