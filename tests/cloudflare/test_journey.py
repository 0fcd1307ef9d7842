"""The move, end to end, through the official SDK against `memory-sim serve` on loopback: a village built here,
pushed, recalled through `Env.cloudflare` with the default settings, re-embedded remotely, pulled back, compared.
The server's Workers AI answers as production's does: BGE (stood in by the hashing embedder), no MiniLM."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from memory_sim import Env, MemorySystem
from memory_sim.cli import main
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.sim.clock import SimClock
from memory_sim.testing import TEST_TOKEN, ServerForTests

from tests.cloudflare.move_helpers import ProductionCatalogue, folder_contents, rows_of, vectors_of

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
QUESTION = "What does Margaret think of Tom?"


def account_flags(server: ServerForTests, account: str) -> list[str]:
    return ["--account-id", account, "--api-token", TEST_TOKEN, "--base-url", server.base_url]


def cloudflare_env(server: ServerForTests, account: str, data: Path, **settings: Any) -> Env:
    """The default settings but the data folder: its embedding cache is the test's own (the catalogue's BGE is a
    stand-in whose vectors must not reach the working directory's cache)."""
    return Env.cloudflare(account, TEST_TOKEN, "memories", base_url=server.base_url, environ={}, data_dir=data,
                          **settings)


@pytest.mark.timeout(120)
def test_village_pushed_recalled_reembedded_and_pulled_back(production: ServerForTests, catalogue: ProductionCatalogue,
                                                            tmp_path: Path) -> None:
    started = time.perf_counter()
    village, account = tmp_path / "village", production.fresh_account_id()
    assert main(["--data", str(village), "--model", "fake/hashing", "demo", "--days", "2", "--npcs", "3"]) == 0
    with Env.local(village, environ={}) as env:
        local_answer = [r.id for r in MemorySystem(env, clock=SimClock()).recall("margaret", QUESTION, top_k=5)]
    assert main(["--data", str(village), "push", *account_flags(production, account)]) == 0

    with cloudflare_env(production, account, tmp_path / "cache") as env:  # the default settings: the model the index records
        remote_answer = MemorySystem(env, clock=SimClock()).recall("margaret", QUESTION, top_k=5)
    assert [r.id for r in remote_answer] == local_answer and "vectorize" in {r.source for r in remote_answer}

    pulled = tmp_path / "pulled"
    assert main(["--data", str(pulled), "pull", *account_flags(production, account)]) == 0
    assert folder_contents(pulled) == folder_contents(village)  # ids, values, metadata, rows, the index's model
    assert main(["--data", str(village), "pull", *account_flags(production, account)]) == 2  # not over a folder's own

    environ = {"CLOUDFLARE_ACCOUNT_ID": account, "CLOUDFLARE_API_TOKEN": TEST_TOKEN,
               "CLOUDFLARE_BASE_URL": production.base_url}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in environ.items():
            patch.setenv(name, value)
        patch.delenv("MEMORY_SIM_MODEL", raising=False)
        assert main(["--backend", "cloudflare", "reembed", "--model", MINILM]) == 0
    assert MINILM not in catalogue.calls  # MiniLM ran here: Workers AI has none
    with cloudflare_env(production, account, tmp_path / "cache") as env:
        assert env.embedder.model == MINILM and env.VECTORIZE.describe().dimensions == 384
        answer = MemorySystem(env, clock=SimClock()).recall("margaret", QUESTION, top_k=5, mode="vector")
        assert answer and {r.source for r in answer} == {"vectorize"}
        remote_vectors, remote_rows = vectors_of(env.vectorize_account, "memories"), rows_of(env.DB)
        assert "memories-reembed" not in {d.name for d in env.vectorize_account.list_indexes()}

    back = tmp_path / "back"
    assert main(["--data", str(back), "pull", *account_flags(production, account)]) == 0
    vectors, rows, description = folder_contents(back)
    assert vectors == remote_vectors and rows == remote_rows and f"model={MINILM}" in description
    assert len(vectors) == len(folder_contents(village)[0])
    with Env.local(back, environ={}) as env:  # the pulled folder replays offline with the model it records
        offline = MemorySystem(env, clock=SimClock()).recall("margaret", QUESTION, top_k=5, mode="vector")
    assert [r.id for r in offline] == [r.id for r in answer]
    print(f"journey: {time.perf_counter() - started:.1f} s")


@pytest.mark.timeout(60)
def test_a_new_account_opens_with_the_default_settings_on_production_bge(
    production: ServerForTests, catalogue: ProductionCatalogue, tmp_path: Path
) -> None:
    with cloudflare_env(production, production.fresh_account_id(), tmp_path) as env:
        system = MemorySystem(env, clock=SimClock())
        system.remember(ShortTermMemory("margaret", "The blacksmith mended my oven door.", 0.9, WorldTime(3, 14)))
        found = system.recall("margaret", "oven door", top_k=1, mode="vector")
        assert env.embedder.model == "@cf/baai/bge-base-en-v1.5" and env.VECTORIZE.describe().dimensions == 768
    assert found[0].source == "vectorize" and catalogue.calls.get("@cf/baai/bge-base-en-v1.5", 0) >= 2
