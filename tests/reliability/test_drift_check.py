"""`check` finds each kind of drift between D1 and the index, `repair` removes it from the ledger, and the CLI
reports it with exit code 1 (0 once repaired)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_sim.bindings.vectorize import Vector, VectorIdPage
from memory_sim.check import DriftReport, check, compare_metadata, repair
from memory_sim.env import Env
from memory_sim.memory import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

from memory_env import build_env


def mem(i: int, npc: str = "margaret", importance: float = 0.9) -> ShortTermMemory:
    return ShortTermMemory(npc, f"memory number {i} about the forge and the bakery", importance, WorldTime(1, i % 24))


@pytest.fixture
def system(clock: SimClock) -> MemorySystem:
    system = MemorySystem(build_env(clock), clock=clock)
    system.remember_many([mem(i) for i in range(6)] + [mem(9, importance=0.2)])
    return system


def ids_of(system: MemorySystem) -> list[str]:
    return sorted(m.id for m in store.all_memories(system.env.DB))


def test_clean_after_remember(system: MemorySystem) -> None:
    report = check(system.env)
    assert report.clean and report.drift == 0
    assert (report.memories, report.due, report.vectors) == (7, 6, 6)


def test_each_kind_of_drift_is_found_and_repaired_from_d1(system: MemorySystem) -> None:
    env = system.env
    indexed = [m.id for m in store.memories_in_state(env.DB, ["indexed"])]
    low = next(m.id for m in store.all_memories(env.DB) if m.importance < 0.5)
    env.VECTORIZE.delete_by_ids([indexed[0]])  # missing: D1 says indexed
    env.VECTORIZE.upsert([Vector("ghost-1", [1.0] + [0.0] * 63, {"npcId": "tom"})])  # unknown to D1
    env.DB.batch(store.set_state(env.DB, [indexed[1]], "unindexed"))  # disowned: D1 dropped it, index kept it
    stale = store.memories_by_ids(env.DB, [indexed[2]])[indexed[2]]
    [vec] = env.VECTORIZE.get_by_ids([stale.id])
    env.VECTORIZE.upsert([Vector(stale.id, vec.values, {**(vec.metadata or {}), "npcId": "tom"})])  # metadata
    # stranded: pending, its outbox row out of attempts (pending with no outbox row is the retry job's work)
    env.DB.batch(store.set_state(env.DB, [low], "pending") + store.enqueue_many(env.DB, [low], 0.0)
                 + [store.reschedule(env.DB, low, system.config.retry_max_attempts, 0.0, "injected")])
    assert system.retry_pending(system.clock() + 1).embedded == 0  # no retry takes it

    report = check(env)
    assert report.missing == [indexed[0]] and report.unknown == ["ghost-1"] and report.disowned == [indexed[1]]
    assert [(m.id, m.field, m.ledger, m.index) for m in report.metadata] == [(stale.id, "npcId", "margaret", "tom")]
    assert report.stranded == [low] and not report.clean and report.drift == 5

    fixed = repair(env, report)
    assert (fixed.upserted, fixed.deleted, fixed.requeued) == (2, 2, 1)
    assert check(env).clean
    listed = set(env.VECTORIZE.list_vectors(1000).ids)
    assert listed == {m.id for m in store.memories_in_state(env.DB, ["indexed"])}
    assert system.retry_pending(system.clock() + 1).embedded == 1  # the stranded memory is retried again


class RepeatingIndex:
    """An index whose listing shows one id twice, as a damaged backend would."""

    def __init__(self, inner: Any, repeat: str) -> None:
        self.inner, self.repeat = inner, repeat

    def list_vectors(self, count: int = 100, cursor: str | None = None) -> VectorIdPage:
        page = self.inner.list_vectors(count, cursor)
        return VectorIdPage(page.ids + [self.repeat], page.total_count + 1, page.is_truncated, page.next_cursor)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_duplicated_listing_is_drift_and_rewritten(system: MemorySystem) -> None:
    env = system.env
    target = ids_of(system)[0]
    env.VECTORIZE = RepeatingIndex(env.VECTORIZE, target)  # type: ignore[assignment]
    report = check(env)
    assert report.duplicated == [target] and not report.clean
    assert repair(env, report).upserted == 1


def test_compare_metadata_is_pure_and_ignores_decay() -> None:
    ledger = {"npcId": "a", "type": "event", "day": 3, "importance": 0.8, "textPreview": "x", "decayFactor": 0.05}
    assert compare_metadata("m", ledger, {**ledger, "decayFactor": 0.5, "importance": 0.8000001}) == []
    assert [d.field for d in compare_metadata("m", ledger, {**ledger, "day": 4})] == ["day"]


def test_report_json_lists_the_kinds() -> None:
    out = DriftReport(memories=2, missing=["a"]).to_json()
    assert out["clean"] is False and out["drift"] == 1 and out["missing"] == ["a"]


@pytest.mark.slow
def test_cli_check_reports_then_repairs_a_real_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memory_sim.cli import main
    from memory_sim.embedding.fake import HashingEmbedder

    clock = SimClock()
    with Env.local(tmp_path, embedder=HashingEmbedder(64)) as env:  # Chroma + DuckDB, the fast embedder
        system = MemorySystem(env, clock=clock)
        system.remember_many([mem(i) for i in range(5)])
        env.VECTORIZE.delete_by_ids([ids_of(system)[0]])
    assert main(["--data", str(tmp_path), "check", "--json"]) == 1
    before = json.loads(capsys.readouterr().out)["before"]
    assert len(before["missing"]) == 1 and before["vectors"] == 4
    assert main(["--data", str(tmp_path), "check", "--repair"]) == 0
    text = capsys.readouterr().out
    assert "1 marked indexed in D1 but absent from the index" in text and "now no drift" in text
    assert main(["--data", str(tmp_path), "check"]) == 0
