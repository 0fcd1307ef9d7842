"""Storage and embeddings chosen apart, and the seams of the move: what the issue reproduced (a pushed MiniLM
folder and a brand-new account opened with the default settings), local storage with hosted embeddings, the
one-line refusal of an index whose model cannot run, and `reembed --model` resumed after a crash on Cloudflare."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from memory_sim import Env, MemorySystem
from memory_sim.bindings.ai import BGE_BASE
from memory_sim.builder import build_local_env
from memory_sim.builder.models import find_local_model
from memory_sim.cli import main
from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.errors import ConfigError
from memory_sim.memory.jobs.staged_reembed import pending_job, reembed_staged
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.settings import Settings
from memory_sim.sim.clock import SimClock
from memory_sim.testing import TEST_TOKEN, ServerForTests
from tests.cloudflare.move_helpers import ProductionCatalogue, vectors_of

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
TEXTS = ["The blacksmith mended my oven door for nothing.", "Rain flooded the mill race again.",
         "Tom sang badly at the pub.", "The vicar lost his hat in the wind.", "Bread sold out by noon.",
         "Cora left willow bark tea at my door.", "The miller cheated me on the flour.", "A fox took two hens."]


def memories(npc: str = "margaret") -> list[ShortTermMemory]:
    return [ShortTermMemory(npc, text, 0.9, WorldTime(1, 6 + i), id=f"{npc}-{i}") for i, text in enumerate(TEXTS)]


def bge_here() -> bool:
    try:
        return find_local_model(BGE_BASE) is not None
    except ConfigError:
        return False


def push(folder: Path, server: ServerForTests, account: str) -> None:
    flags = ["--account-id", account, "--api-token", TEST_TOKEN, "--base-url", server.base_url]
    assert main(["--data", str(folder), "push", *flags]) == 0


@pytest.mark.timeout(120)
def test_a_pushed_minilm_folder_is_queried_with_minilm_run_here(production: ServerForTests,
                                                               catalogue: ProductionCatalogue, tmp_path: Path) -> None:
    with Env.local(tmp_path, environ={}, embed_model=MINILM) as env:
        MemorySystem(env, clock=SimClock()).remember_many(memories())
    account = production.fresh_account_id()
    push(tmp_path, production, account)
    for named in (None, MINILM):  # the default setting, and the index's model named
        with Env.cloudflare(account, TEST_TOKEN, "memories", base_url=production.base_url, environ={},
                            embed_model=named, data_dir=tmp_path / "cache") as env:
            found = MemorySystem(env, clock=SimClock()).recall("margaret", "who fixed the oven?", top_k=1, mode="vector")
            assert found[0].id == "margaret-0" and found[0].source == "vectorize"
            assert env.embedder.model == MINILM and getattr(env.embedder, "pooling", None) == "mean"
    assert MINILM not in catalogue.calls  # Workers AI has no MiniLM: never asked
    with pytest.raises(ConfigError) as refused:  # pinned to Workers AI: which model the index needs, and the ways
        Env.cloudflare(account, TEST_TOKEN, "memories", base_url=production.base_url, environ={},
                       embed_provider="workers-ai", data_dir=tmp_path / "cache")
    message = str(refused.value)
    assert "\n" not in message and f"Workers AI has no model {MINILM!r}" in message and "384-d, mean pooling" in message
    assert "memory-sim reembed --model" in message


@pytest.mark.timeout(120)
def test_a_brand_new_account_opens_with_the_default_settings(server: ServerForTests, tmp_path: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    # The session's server runs its models here: without BGE's weights, Workers AI there cannot run the default.
    with caplog.at_level(logging.WARNING, logger="memory_sim.builder.embedding"), \
            Env.cloudflare(server.fresh_account_id(), TEST_TOKEN, "memories", base_url=server.base_url,
                           environ={}, data_dir=tmp_path) as env:
        system = MemorySystem(env, clock=SimClock())
        system.remember_many(memories())
        found = system.recall("margaret", "who fixed the oven?", top_k=1, mode="vector")
    assert found[0].id == "margaret-0" and found[0].source == "vectorize"
    if not bge_here():
        assert env.embedder.model == MINILM and "using the bundled" in caplog.text


@pytest.mark.timeout(60)
def test_local_storage_with_workers_ai_embeddings(production: ServerForTests, catalogue: ProductionCatalogue,
                                                  tmp_path: Path) -> None:
    hosted = {"embed_provider": "workers-ai", "account_id": production.fresh_account_id(), "api_token": TEST_TOKEN,
              "base_url": production.base_url}
    before = catalogue.calls.get(BGE_BASE, 0)
    with Env.local(tmp_path, environ={}, embed_model=BGE_BASE, **hosted) as env:
        system = MemorySystem(env, clock=SimClock())
        system.remember_many(memories())
        # A memory alone under its state key: BGE is stood in by hashing vectors, which carry no meaning, so key
        # inference read both door memories as 'possession:door' and the newer one answers for the older.
        assert system.recall("margaret", "rain on the mill race", top_k=1, mode="vector")[0].id == "margaret-1"
        assert env.VECTORIZE.describe().dimensions == 768 and catalogue.calls[BGE_BASE] > before
    with Env.local(tmp_path, environ={}, **hosted) as env:  # reopened: the index's model, on the same provider
        assert env.embedder.model == BGE_BASE
    if bge_here():
        return
    with pytest.raises(ConfigError) as refused:  # nowhere to run it: which model, and the two ways forward
        Env.local(tmp_path, environ={})
    message = str(refused.value)
    assert "\n" not in message and BGE_BASE in message and "768-d, cls pooling" in message
    assert "provide that model" in message and "memory-sim reembed --model" in message


@pytest.mark.timeout(60)
def test_local_storage_with_openai_embeddings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.embedding.http_fakes import FakeApi, serve

    api = FakeApi(width=1536)
    http, url = serve(api)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
    try:
        with Env.local(tmp_path, environ={}, embed_model="text-embedding-3-small") as env:  # auto: OpenAI
            system = MemorySystem(env, clock=SimClock())
            system.remember_many(memories())
            assert system.recall("margaret", "oven door", top_k=1, mode="vector")[0].id == "margaret-0"
            assert env.VECTORIZE.describe().dimensions == 1536
    finally:
        http.shutdown()
    assert any(path == "/v1/embeddings" for path, _, _ in api.requests)


class Crash(Exception):
    pass


def crash_at(phase: str, after: int):  # type: ignore[no-untyped-def]
    def hook(at: str, done: int) -> None:
        if at == phase and done >= after:
            raise Crash(f"{phase} {done}")
    return hook


@pytest.mark.timeout(120)
def test_remote_reembed_resumes_after_crashes_and_swaps_only_when_complete(
    production: ServerForTests, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = production.settings().replace(index_name="memories", data_dir=tmp_path)
    with Env.from_settings(settings, embedder=HashingEmbedder(64)) as env:
        MemorySystem(env, clock=SimClock()).remember_many(memories() + memories("tom"))
        env.DB.batch(store.set_state(env.DB, ["tom-7"], "unindexed"))  # forgotten: stays out of the new index
        env.VECTORIZE.delete_by_ids(["tom-7"])
        before = vectors_of(env.vectorize_account, "memories")
    assert len(before) == 15
    target = settings.replace(embed_model=MINILM)

    with Env.from_settings(target, new_index=True) as env, pytest.raises(Crash):
        reembed_staged(env.vectorize_account, env.DB, "memories", env.embedder, batch=4,
                       on_batch=crash_at("build", 8))
    with caplog.at_level(logging.WARNING, logger="memory_sim.builder"), Env.from_settings(settings) as env:
        # mid-build: the live index is untouched and opens with its model; the open says what is unfinished
        assert env.embedder.model == "fake/hashing" and vectors_of(env.vectorize_account, "memories") == before
        assert pending_job(env.DB).after_id == sorted(before)[7]  # type: ignore[union-attr]
    assert f"run `memory-sim reembed --model {MINILM}` again" in caplog.text

    with Env.from_settings(target, new_index=True) as env, pytest.raises(Crash):
        reembed_staged(env.vectorize_account, env.DB, "memories", env.embedder, batch=4,
                       on_batch=crash_at("swap", 1))
    with Env.from_settings(target, new_index=True) as env:
        report = reembed_staged(env.vectorize_account, env.DB, "memories", env.embedder, batch=4)
        assert report.resumed and report.embedded == 15 and report.copied == 15
        assert pending_job(env.DB) is None
        assert {d.name for d in env.vectorize_account.list_indexes()} == {"memories"}
        after = vectors_of(env.vectorize_account, "memories")
        expected = env.embedder.embed([TEXTS[int(i.split("-")[1])] for i in sorted(before)])
    assert sorted(after) == sorted(before)
    for row, memory_id in zip(expected, sorted(before)):
        assert after[memory_id][0] == pytest.approx(row.tolist(), abs=1e-6)
        assert after[memory_id][1] == before[memory_id][1]  # the metadata, from D1, as before
    caplog.clear()
    with Env.from_settings(settings) as env:  # the default setting now opens with MiniLM
        assert env.embedder.model == MINILM and "unfinished" not in caplog.text
        found = MemorySystem(env, clock=SimClock()).recall("tom", "who fixed the oven?", top_k=1, mode="vector")
        assert found[0].id == "tom-0"


@pytest.mark.timeout(120)
def test_local_reembed_with_a_model_goes_through_the_stage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings.load(environ={}, data_dir=tmp_path)
    with build_local_env(settings, embedder=HashingEmbedder(64)) as env:
        MemorySystem(env, clock=SimClock()).remember_many(memories())
    assert main(["--data", str(tmp_path), "reembed", "--model", MINILM]) == 0
    assert '"reembedded": 8' in capsys.readouterr().out
    with Env.local(tmp_path, environ={}) as env:
        assert env.embedder.model == MINILM and env.VECTORIZE.describe().vector_count == 8
