"""Faults injected into the real bindings while the village runs: nothing is lost, recall degrades to D1's
short-term memories and recovers by itself, and the errors say what happened."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from memory_env import build_env
from memory_faults import FlakyIndex
from reliability_faults import ChaosEmbedder, FaultPlan, ServerFaults

from memory_sim.check import check
from memory_sim.memory.ledger import store
from memory_sim.memory.models import MemoryConfig, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from memory_sim.sim.driver import run_village
from memory_sim.sim.world import Village


def observations_in_d1(system: MemorySystem) -> int:
    return store.count_memories(system.env.DB, "kind = 'observation'")


def sources(system: MemorySystem, npc: str = "margaret") -> set[str]:
    return {r.source for r in system.recall(npc, "the bread at the bakery and the forge", top_k=5)}


def test_embedder_failing_30_percent_then_a_whole_day_recovers(clock: SimClock) -> None:
    env = build_env(clock)
    chaos = ChaosEmbedder(env.embedder, random.Random(30), rate=0.3)
    env.embedder = chaos  # type: ignore[assignment]
    system, village = MemorySystem(env, clock=clock), Village(npcs=6, seed=5)
    made = run_village(system, village, clock, days=2).memories  # 30% of calls fail at random
    assert chaos.failures > 0 and observations_in_d1(system) == made

    chaos.rate, chaos.down = 0.0, True  # then nothing embeds for one sim day
    during: list[set[str]] = []
    made += run_village(system, village, clock, days=1, on_hour=lambda t: t.hour == 20 and during.append(sources(system))).memories
    assert during == [{"short_term"}]  # recall degraded to D1's short-term memories, and said so
    assert observations_in_d1(system) == made  # nothing lost
    errors = {r["last_error"] for r in env.DB.prepare("SELECT last_error FROM embedding_outbox").all().results}
    assert errors == {"injected: the embedding provider answered HTTP 503 (Service Unavailable)"}

    chaos.down = False
    made += run_village(system, village, clock, days=2).memories  # the hourly retry job drains the outbox
    assert observations_in_d1(system) == made and store.outbox_size(env.DB) == 0
    assert check(env).clean and sources(system) == {"vectorize"}
    assert system.stats()["retries"] > 0 and system.stats()["fallbacks"] >= 1


def test_index_failing_for_a_day_loses_nothing_and_recovers(clock: SimClock) -> None:
    env = build_env(clock)
    index = FlakyIndex(env.VECTORIZE)
    env.VECTORIZE = index  # type: ignore[assignment]
    config = MemoryConfig(forget_threshold=0.09)  # decay drops memories from the index during the outage too
    system, village = MemorySystem(env, clock=clock, config=config), Village(npcs=6, seed=6)
    made = run_village(system, village, clock, days=3).memories
    index.down = True
    during: list[set[str]] = []
    made += run_village(system, village, clock, days=1, on_hour=lambda t: t.hour == 20 and during.append(sources(system))).memories
    assert during == [{"short_term"}] and observations_in_d1(system) == made
    index.down = False
    made += run_village(system, village, clock, days=2).memories
    assert observations_in_d1(system) == made and store.outbox_size(env.DB) == 0
    assert check(env).clean and sources(system) == {"vectorize"}
    assert system.stats()["prunes"] > 0


@pytest.fixture
def faulty_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, FaultPlan]]:
    from memory_sim.testing import ServerForTests

    plan = FaultPlan(random.Random(503))
    server = ServerForTests(tmp_path_factory.mktemp("faulty-server"))
    server.app.add_middleware(ServerFaults, plan=plan)
    with server:
        yield server, plan


def cloudflare_env(server: Any, clock: SimClock, timeout_s: float) -> Any:
    """Env over the Cloudflare adapters against the faulty server; retries sleep on nothing (injected)."""
    from memory_env import DIMENSIONS

    from memory_sim.builder import build_cloudflare_env
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.local.vectorize.oracle import OracleAccount
    from memory_sim.retry import Backoff
    from memory_sim.settings import Settings

    client = server.client(timeout_s=timeout_s, sleep=lambda s: None,
                           backoff=Backoff(attempts=6, base_s=0.01, cap_s=0.05, deadline_s=60.0))
    server.app.state.accounts.get(client.account_id).adopt_vectorize(OracleAccount(clock=clock))
    settings = Settings.load(environ={}, backend="cloudflare", account_id=client.account_id,
                             api_token=client.api_token, embed_model="fake/hashing")
    return build_cloudflare_env(settings, embedder=HashingEmbedder(DIMENSIONS), client=client)


@pytest.mark.slow
def test_server_answering_5xx_and_timing_out(faulty_server: tuple[Any, FaultPlan], clock: SimClock) -> None:
    from memory_sim.errors import MemorySimError

    server, plan = faulty_server
    env = cloudflare_env(server, clock, timeout_s=0.25)
    system, village = MemorySystem(env, clock=clock), Village(npcs=4, seed=9)
    system.register_npc("margaret", "Margaret")  # recalled before her first memory: known, so [] rather than refused
    plan.error_rate, plan.slow_rate = 0.2, 0.03
    acked: set[str] = set()
    errors: list[str] = []
    for hour in range(7, 23):  # one village day, remembering and recalling through the faulty server
        when = WorldTime(0, hour)
        clock.advance_to(when)
        memories = village.tick(when).memories
        try:
            system.remember_many(memories)
            acked |= {m.id for m in memories}
            system.recall("margaret", "the forge")
        except MemorySimError as exc:  # retries exhausted: the caller is told, in the project's words
            errors.append(str(exc))
    plan.error_rate = plan.slow_rate = 0.0
    assert plan.errors > 0 and plan.slow > 0, plan
    print(f"server faults: {plan}, errors surfaced: {errors}")
    assert all(e.startswith(("D1_", "VECTOR_", "INDEX_")) for e in errors), errors
    in_d1 = {m.id for m in store.all_memories(env.DB)}
    assert acked and acked <= in_d1  # nothing remember returned for is lost
    system.retry_pending(clock() + 3600)
    assert check(env).clean
