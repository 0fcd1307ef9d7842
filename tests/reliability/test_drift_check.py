"""`check` finds each kind of drift between D1 and the index, `repair` removes it from the ledger, and the CLI
reports it with exit code 1 (0 once repaired)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memory_env import build_env

from memory_sim.bindings.vectorize import Vector, VectorIdPage
from memory_sim.check import DriftReport, check, compare_metadata, repair
from memory_sim.env import Env
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock


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


# --- the metadata indexes the memory system declares ---------------------------------------------------------


def test_a_deleted_metadata_index_is_drift_and_repair_makes_old_vectors_filterable_again(system: MemorySystem) -> None:
    env = system.env
    env.VECTORIZE.delete_metadata_index("npcId")  # as an older version, a script or a visitor could
    env.VECTORIZE.create_metadata_index("npcId", "string")  # re-created: old vectors stay unfilterable
    env.VECTORIZE.delete_metadata_index("day")
    report = check(env)
    assert not report.clean and report.metadata_indexes == ["day (number): missing", "npcId (string): not filled"]
    assert report.to_json()["clean"] is False
    fixed = repair(env, report)
    assert fixed.metadata_indexes == 2 and fixed.reindexed == 6
    assert check(env).clean
    found = system.recall("margaret", "the forge", top_k=3, mode="vector")
    assert found and {r.source for r in found} == {"vectorize"}


def test_recall_falls_back_to_d1_when_the_index_cannot_filter_by_npc(system: MemorySystem,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    system.env.VECTORIZE.delete_metadata_index("npcId")
    for mode in ("vector", "hybrid"):
        with caplog.at_level("WARNING", logger="memory_sim.memory"):
            found = system.recall("margaret", "the forge and the bakery", top_k=3, mode=mode)  # type: ignore[arg-type]
        assert found and {r.source for r in found} == {"short_term"}, mode
        assert any("40009" in m and "D1" in m for m in caplog.messages), caplog.messages
        caplog.clear()


def test_the_owner_refuses_deleting_a_metadata_index_the_memory_system_declares(tmp_path: Path) -> None:
    import cloudflare

    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.owner import LOCAL_ACCOUNT, serve_env
    from memory_sim.testing import TEST_TOKEN, ServerForTests, scratch_folder

    with Env.local(tmp_path / "data", embedder=HashingEmbedder(64)) as env:
        MemorySystem(env, clock=SimClock()).remember_many([mem(i) for i in range(4)])
        with scratch_folder(tmp_path / "server") as folder, ServerForTests(folder) as server:
            serve_env(server.app, env)
            sdk = cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=server.base_url, max_retries=0)
            indexes = sdk.vectorize.indexes.metadata_index
            with pytest.raises(cloudflare.BadRequestError) as refused:
                indexes.delete("memories", account_id=LOCAL_ACCOUNT, property_name="npcId")
            error = refused.value.body["errors"][0]
            assert error["code"] == 40011 and "npcId" in error["message"] and "in use" in error["message"]
            indexes.create("memories", account_id=LOCAL_ACCOUNT, property_name="mood", index_type="string")
            indexes.delete("memories", account_id=LOCAL_ACCOUNT, property_name="mood")  # not the memory's own
            sdk.close()
        assert {m.property_name for m in env.VECTORIZE.list_metadata_indexes()} >= {"npcId", "type", "day"}


def test_cli_refuses_deleting_the_npc_index_and_check_repair_restores_a_lost_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memory_sim.cli import main
    from memory_sim.embedding.fake import HashingEmbedder

    with Env.local(tmp_path, embedder=HashingEmbedder(64)) as env:  # Chroma + DuckDB, the fast embedder
        MemorySystem(env, clock=SimClock()).remember_many([mem(i) for i in range(5)])
    assert main(["--data", str(tmp_path), "vectorize", "delete-metadata-index", "memories",
                 "--property-name", "npcId"]) == 2
    err = capsys.readouterr().err
    assert "'npcId'" in err and "in use" in err and err.count("\n") == 1
    with Env.local(tmp_path, embedder=HashingEmbedder(64)) as env:  # lost another way (an older version, a script)
        env.VECTORIZE.delete_metadata_index("npcId")
    assert main(["--data", str(tmp_path), "check"]) == 1
    assert "metadata index npcId (string): missing" in capsys.readouterr().out
    assert main(["--data", str(tmp_path), "check", "--repair"]) == 0
    assert "1 metadata indexes restored (5 vectors re-upserted)" in capsys.readouterr().out
    with Env.local(tmp_path, embedder=HashingEmbedder(64)) as env:
        found = MemorySystem(env, clock=SimClock()).recall("margaret", "the forge", top_k=2, mode="vector")
    assert found and {r.source for r in found} == {"vectorize"}
