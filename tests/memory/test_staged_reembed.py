"""`reembed --model`'s staged re-embedding on the in-memory Env (the exact oracle, sqlite3): which memories go in,
D1 states untouched, and an unfinished job of another model (abandoned in build, finished in swap)."""

from __future__ import annotations

import pytest

from memory_sim import Env, MemorySystem
from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.embedding.index_model import parse_description
from memory_sim.memory.jobs.staged_reembed import pending_job, reembed_staged
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.sim.clock import SimClock

TEXTS = ["The blacksmith mended my oven door.", "Rain flooded the mill race.", "Tom sang at the pub.",
         "The vicar lost his hat.", "Bread sold out by noon.", "A fox took two hens."]


class Crash(Exception):
    pass


def crash_in(phase: str):  # type: ignore[no-untyped-def]
    def hook(at: str, done: int) -> None:
        if at == phase:
            raise Crash(phase)
    return hook


@pytest.fixture
def env() -> Env:
    env = Env.in_memory(embedder=HashingEmbedder(32, model="fake/h32"))
    MemorySystem(env, clock=SimClock()).remember_many(
        [ShortTermMemory("margaret", t, 0.9, WorldTime(1, 8 + i), id=f"m{i}") for i, t in enumerate(TEXTS)])
    env.DB.batch(store.set_state(env.DB, ["m4"], "unindexed") + store.set_state(env.DB, ["m5"], "pending"))
    env.VECTORIZE.delete_by_ids(["m4"])
    return env


def states(env: Env) -> dict[str, str]:
    return {m.id: m.index_state for m in store.all_memories(env.DB)}


def test_indexed_and_pending_memories_are_re_embedded_and_d1_is_left_as_it_was(env: Env) -> None:
    before = states(env)
    wider = HashingEmbedder(48, model="fake/h48")
    report = reembed_staged(env.vectorize_account, env.DB, "memories", wider, batch=2)  # type: ignore[arg-type]
    index = env.vectorize_account.index("memories")  # type: ignore[union-attr]
    assert (report.embedded, report.copied, report.resumed) == (5, 5, False)
    assert index.describe().dimensions == 48 and index.describe().vector_count == 5
    assert sorted(v.id for v in index.get_by_ids([f"m{i}" for i in range(6)])) == ["m0", "m1", "m2", "m3", "m5"]
    assert index.get_by_ids(["m2"])[0].values == pytest.approx(wider.embed([TEXTS[2]])[0].tolist(), abs=1e-6)
    assert states(env) == before and pending_job(env.DB) is None


def test_an_abandoned_build_of_another_model_starts_over(env: Env) -> None:
    account = env.vectorize_account
    with pytest.raises(Crash):
        reembed_staged(account, env.DB, "memories", HashingEmbedder(40, model="fake/h40"), batch=2,  # type: ignore[arg-type]
                       on_batch=crash_in("build"))
    assert pending_job(env.DB).phase == "build"  # type: ignore[union-attr]
    report = reembed_staged(account, env.DB, "memories", HashingEmbedder(48, model="fake/h48"))  # type: ignore[arg-type]
    assert not report.resumed and report.embedded == 5
    assert parse_description(account.get_index("memories").description)["model"] == "fake/h48"  # type: ignore[union-attr]


def test_a_finished_build_of_another_model_is_swapped_in_first(env: Env) -> None:
    account = env.vectorize_account
    with pytest.raises(Crash):
        reembed_staged(account, env.DB, "memories", HashingEmbedder(40, model="fake/h40"),  # type: ignore[arg-type]
                       on_batch=crash_in("swap"))
    assert pending_job(env.DB).phase == "swap"  # type: ignore[union-attr]
    report = reembed_staged(account, env.DB, "memories", HashingEmbedder(48, model="fake/h48"))  # type: ignore[arg-type]
    assert report.embedded == 5 and pending_job(env.DB) is None
    assert {d.name for d in account.list_indexes()} == {"memories"}  # type: ignore[union-attr]
    assert account.index("memories").describe().dimensions == 48  # type: ignore[union-attr]
