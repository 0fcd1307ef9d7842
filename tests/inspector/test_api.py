"""Each `/ui/api/...` route on its own, over real HTTP on loopback, against what the library says of the same
folder (MemorySystem, D1 through the binding, check)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from inspector_helpers import QUESTION, Inspector, inspector

from memory_sim.check import check
from memory_sim.errors import ConfigError
from memory_sim.inspector import Folder
from memory_sim.memory.ledger import store
from memory_sim.memory.models import MemoryConfig
from memory_sim.memory.system import MemorySystem
from memory_sim.settings import Settings


@contextmanager
def library(ui: Inspector) -> Iterator[MemorySystem]:
    """The library's view of the same folder (the inspector's Env, so no second opening is needed)."""
    with ui.folder.env() as env:
        seconds = store.world_seconds(env.DB)
        yield MemorySystem(env, clock=lambda: seconds)


def test_village_lists_every_npc_with_the_ledgers_counts(ui: Inspector) -> None:
    data = ui.json("/ui/api/village")
    with library(ui) as system:
        db = system.env.DB
        npcs = {n.id: n for n in system.npcs()}
        world_day = system.today()
        for npc_id in npcs:
            row = next(n for n in data["npcs"] if n["id"] == npc_id)
            assert row["name"] == npcs[npc_id].name and row["role"] == npcs[npc_id].role
            assert row["memories"] == store.count_memories(db, f"npc_id = '{npc_id}'")
            assert row["vectors"] == store.count_memories(db, f"npc_id = '{npc_id}' AND index_state = 'indexed'")
            assert row["summaries"] == store.count_memories(db, f"npc_id = '{npc_id}' AND kind = 'summary'")
            assert row["pending"] == store.count_memories(db, f"npc_id = '{npc_id}' AND index_state = 'pending'")
            assert sum(row["per_day"].values()) == row["memories"]
            assert row["last_day"] == max(int(d) for d in row["per_day"])
    assert len(data["npcs"]) == len(npcs) == 8 and data["worldDay"] == world_day > 0
    assert [n["id"] for n in ui.json("/ui/api/village", q="MARG")["npcs"]] == ["margaret"]  # by id or name, any case
    assert ui.json("/ui/api/village", q="nobody-here")["npcs"] == []


def test_npc_has_every_memory_in_time_order_and_its_consolidation_days(ui: Inspector) -> None:
    data = ui.json("/ui/api/npcs/margaret")
    with library(ui) as system:
        db = system.env.DB
        everything = db.prepare("SELECT id FROM short_term_memories WHERE npc_id = 'margaret'").all().results
        consolidated = [int(r["day"]) for r in db.prepare(
            "SELECT day FROM diaries WHERE npc_id = 'margaret' AND summary_id IS NOT NULL ORDER BY day").all().results]
        summaries = store.count_memories(db, "npc_id = 'margaret' AND kind = 'summary'")
    assert {m["id"] for m in data["memories"]} == {r["id"] for r in everything}
    assert [(m["day"], m["hour"]) for m in data["memories"]] == sorted((m["day"], m["hour"]) for m in data["memories"])
    assert data["consolidation_days"] == consolidated and consolidated
    assert data["counts"]["summary"] == summaries > 0
    assert data["name"] == "Margaret" and data["registered"] is True


def test_an_unknown_npc_or_memory_is_a_404_with_one_line(ui: Inspector) -> None:
    for path in ("/ui/api/npcs/nobody", "/ui/api/memories/no-such-memory"):
        body = ui.json(path, status=404)
        assert "\n" not in body["error"] and "no " in body["error"]


def test_memory_record_has_the_d1_row_the_index_metadata_and_lineage(ui: Inspector) -> None:
    with library(ui) as system:
        summary = next(m for m in system.memories("margaret", kind="summary").memories)
        lineage = system.lineage(summary.id)
    data = ui.json(f"/ui/api/memories/{summary.id}")
    assert data["row"]["content"] == summary.content and data["state"] == "summary"
    assert data["index"]["present"] is True and data["index"]["metadata"]["npcId"] == "margaret"
    assert [s["id"] for s in data["sources"]] == [m.id for m in lineage.sources] and lineage.sources
    source = ui.json(f"/ui/api/memories/{lineage.sources[0].id}")
    assert [s["id"] for s in source["summaries"]] == [summary.id]


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
@pytest.mark.parametrize("weighted", [False, True])
def test_recall_returns_the_librarys_results_with_score_parts_that_add_up(
    ui: Inspector, mode: str, weighted: bool
) -> None:
    data = ui.json("/ui/api/recall", npc="margaret", q=QUESTION, mode=mode, weighted=str(weighted).lower(), day=5)
    with library(ui) as system:
        if weighted:
            expected = system.weighted_recall("margaret", QUESTION, 5, mode=mode)  # type: ignore[arg-type]
        else:
            expected = system.recall("margaret", QUESTION, mode=mode)  # type: ignore[arg-type]
    assert [r["id"] for r in data["results"]] == [r.id for r in expected] and expected
    for got, want in zip(data["results"], expected, strict=True):
        assert math.isclose(got["score"], want.score, rel_tol=1e-9)
        if mode == "hybrid":
            parts = got["parts"]
            # the same inputs through hybrid.py's pure functions; 1e-6: a ranking computed over float32 arrays
            # a state key's handover (scoring.current_first) and a question's time re-scoring are terms too
            added = (parts["vectorPart"] + parts["keywordPart"] + parts["cueLift"] + parts["neighbourContext"]) * parts[
                "cueFactor"] + parts["keyHandover"] + parts["timeRescore"]
            assert math.isclose(added, want.score, rel_tol=1e-6, abs_tol=1e-9)
            assert math.isclose(parts["total"], want.score, rel_tol=1e-6, abs_tol=1e-9)
            assert parts["vectorSimilarity"] is not None or parts["keywordScore"] is not None or parts[
                "neighbourContext"] > 0 or (parts["keyHandover"] > 0 and want.state_key is not None)
        else:
            assert "parts" not in got
        if weighted:
            w = got["weighting"]
            assert w["age"] == max(0, 5 - want.day)
            assert math.isclose(w["effective"], want.effective_score or 0.0, rel_tol=1e-9)
            formula = w["score"] * w["importance"] / (1 + w["age"] * w["decayFactor"])
            assert math.isclose(min(formula, w["sourceCap"] or formula), w["effective"])
            assert w["sourceCap"] is None or (want.kind == "summary" and w["sourceCap"] < formula)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("question", ["What did Margaret think of Tom yesterday?", "What did I do three days ago?"])
def test_a_question_about_time_shows_its_re_scoring_as_a_part(ui: Inspector, question: str, weighted: bool) -> None:
    """rank_in_time re-scores a question with time words: the parts still add up to the score shown."""
    data = ui.json("/ui/api/recall", npc="margaret", q=question, weighted=str(weighted).lower(), day=5)
    assert data["results"]
    for got in data["results"]:
        parts = got["parts"]
        added = (parts["vectorPart"] + parts["keywordPart"] + parts["cueLift"] + parts["neighbourContext"]) * parts[
            "cueFactor"] + parts["keyHandover"] + parts["timeRescore"]
        assert math.isclose(added, got["score"], rel_tol=1e-6, abs_tol=1e-9)
        if weighted:
            w = got["weighting"]
            formula = w["score"] * w["importance"] / (1 + w["age"] * w["decayFactor"])
            assert math.isclose(formula + w["timeRescore"], got["effectiveScore"] or 0.0, abs_tol=1e-9)
    assert weighted or any(r["parts"]["timeRescore"] for r in data["results"])


def test_recall_refuses_bad_input_in_one_line(ui: Inspector) -> None:
    assert "mode must be one of" in ui.json("/ui/api/recall", status=400, npc="margaret", q="x", mode="fuzzy")["error"]
    assert ui.json("/ui/api/recall", status=400, npc="margaret", q="x", top_k=0)["error"]


def test_relationships_at_the_last_day_are_the_ledgers_and_earlier_days_differ(ui: Inspector) -> None:
    with library(ui) as system:
        current = {(r["npc_id"], r["other_id"]): r["affinity"] for r in system.env.DB.prepare(
            "SELECT npc_id, other_id, affinity FROM relationships").all().results}
    last = ui.json("/ui/api/relationships")
    assert last["history"] is True
    assert {(e["from"], e["to"]): e["affinity"] for e in last["edges"]} == current
    first = ui.json("/ui/api/relationships", day=0)
    assert first["day"] == 0 and len(first["edges"]) == len(current) == 8 * 7
    assert {(e["from"], e["to"]): e["affinity"] for e in first["edges"]} != current  # affinities moved since


def test_one_pairs_history_ends_at_todays_affinity_with_the_memories_that_moved_it(ui: Inspector) -> None:
    data = ui.json("/ui/api/relationships/margaret/tom")
    with library(ui) as system:
        now = system.env.DB.prepare("SELECT affinity FROM relationships WHERE npc_id = 'margaret' AND "
                                    "other_id = 'tom'").first("affinity")
    assert data["aToB"][-1][1] == now and data["bToA"]
    assert data["memories"] and all(m["type"] in ("relationship", "opinion") for m in data["memories"])
    assert {m["npc_id"] for m in data["memories"]} <= {"margaret", "tom"}


def test_health_shows_the_outbox_jobs_counters_and_a_clean_check(ui: Inspector) -> None:
    data = ui.json("/ui/api/health")
    with library(ui) as system:
        stats = system.stats()
        jobs = system.env.DB.prepare("SELECT job FROM job_runs ORDER BY job").all().results
        report = check(system.env)
    assert data["outboxTotal"] == stats["pending"] and data["counters"]["consolidations"] == stats["consolidations"]
    assert [j["job"] for j in data["jobs"]] == [r["job"] for r in jobs] and data["jobs"]
    assert data["backoff"][0]["delayS"] == MemoryConfig().retry_base_s
    drift = ui.json("/ui/api/health/check")
    assert drift["clean"] is report.clean is True and drift["vectors"] == report.vectors > 0


def test_an_empty_folder_answers_with_empty_pages_not_errors(tmp_path: Path) -> None:
    with inspector(tmp_path) as empty:
        assert empty.json("/ui/api/village") == {"folder": str(tmp_path), "worldDay": 0, "worldTime": "day 0 00:00",
                                                 "query": "", "throughOwner": None, "npcs": []}
        page = empty.get("/ui/")
        assert page.status_code == 200 and "No NPCs yet" in page.text
        assert "No relationships recorded" in empty.get("/ui/relationships").text
        assert empty.json("/ui/api/health")["outbox"] == []


def test_a_missing_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no data folder"):
        Folder.from_settings(Settings.load(environ={}, data_dir=tmp_path / "typo"))


def test_a_stopped_folder_is_never_held_between_requests(village_folder: Path, tmp_path: Path) -> None:
    import shutil

    from memory_sim.env import Env

    folder = tmp_path / "copy"
    shutil.copytree(village_folder, folder)
    with inspector(folder) as looking:
        for path in ("/ui/api/village", "/ui/api/npcs/margaret", "/ui/", "/ui/relationships", "/ui/health"):
            assert looking.get(path).status_code == 200
            assert not looking.folder.held
            with Env.local(folder, environ={}, serve_owner=False) as env:  # free at once, for `run` too
                assert store.count_memories(env.DB) > 0
        assert looking.json("/ui/api/village")["npcs"]  # and the next look opens it again
