"""Registered NPCs (name expansion, case rules) and memories listed, fixed and forgotten (D1 and the index)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_sim.check import check
from memory_sim.errors import InvalidInput, NotFound
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.memory.writing import forgetting
from memory_sim.sim.clock import SimClock
from tests.memory.memory_env import build_env
from tests.memory.memory_faults import FlakyIndex


@pytest.fixture
def system() -> MemorySystem:
    clock = SimClock()
    clock.advance_to(WorldTime(5, 12))
    return MemorySystem(build_env(clock), clock=clock)


def remember(system: MemorySystem, npc: str, text: str, day: int, importance: float = 0.9) -> str:
    memory = ShortTermMemory(npc, text, importance, WorldTime(day, 10))
    system.remember(memory)
    return memory.id


def test_register_list_read_and_update_npcs(system: MemorySystem) -> None:
    system.register_npc("tom", "Tom", "the blacksmith", aliases=("Old Tom",), traits=("broad-shouldered",))
    system.register_npc("ada", "Ada")
    assert [n.id for n in system.npcs()] == ["ada", "tom"]
    assert system.npc("tom").aliases == ("Old Tom",)
    updated = system.update_npc("tom", role="the smith at the forge")
    assert (updated.name, updated.role, updated.traits) == ("Tom", "the smith at the forge", ("broad-shouldered",))
    with pytest.raises(NotFound, match="no NPC 'nobody'"):
        system.npc("nobody")


@pytest.mark.parametrize("bad", ["", " ", "a,b", "x" * 65, "ctrl\x01"])
def test_bad_npc_ids_are_refused_at_registration(system: MemorySystem, bad: str) -> None:
    with pytest.raises(InvalidInput):
        system.register_npc(bad, "Someone")
    assert system.npcs() == []


def test_an_npc_registered_by_the_user_gets_name_expansion(system: MemorySystem) -> None:
    """A memory naming only the role is found by a query naming only the NPC, once the NPC is registered."""
    from memory_sim.memory.ledger import store
    from memory_sim.memory.recalling import recall

    system.register_npc("tom", "Tom", "the blacksmith", aliases=("Old Tom",), traits=("smith at the forge",))
    expanded = recall.expand_query("What about Old Tom?", store.npc_profiles(system.env.DB))
    assert "the blacksmith" in expanded and "smith at the forge" in expanded
    assert recall.expand_query("What about Tomato soup?", store.npc_profiles(system.env.DB)) == "What about Tomato soup?"
    system.register_npc("margaret", "Margaret")  # known without a memory yet (an unknown NPC is refused)
    context = system.relationship_context("margaret", "tom")
    assert context.npc_b == "tom"


def test_another_case_of_a_registered_id_is_refused_with_a_hint(system: MemorySystem) -> None:
    system.register_npc("margaret", "Margaret", "the baker")
    remember(system, "margaret", "Tom mended my oven door.", 3)
    assert system.recall("margaret", "oven")
    with pytest.raises(InvalidInput, match="did you mean 'margaret'"):
        system.recall("Margaret", "oven")
    with pytest.raises(InvalidInput, match="did you mean 'margaret'"):
        system.decision_context("Margaret", "bake today?")
    with pytest.raises(InvalidInput, match="only in case"):
        system.register_npc("Margaret", "Margaret")
    with pytest.raises(NotFound, match="did you mean 'margaret'"):
        system.npc("MARGARET")


def test_memories_lists_pages_and_filters(system: MemorySystem) -> None:
    ids = [remember(system, "tom", f"memory number {i} about bread", day=i % 4) for i in range(7)]
    remember(system, "ada", "not tom's", 1)
    first = system.memories("tom", limit=3)
    assert [m.id for m in first.memories] == ids[:3] and first.cursor is not None
    rest = system.memories("tom", limit=3, cursor=first.cursor)
    last = system.memories("tom", limit=3, cursor=rest.cursor)
    assert [m.id for m in rest.memories + last.memories] == ids[3:] and last.cursor is None
    assert {m.day for m in system.memories("tom", since_day=1, until_day=2).memories} == {1, 2}
    assert system.memory(ids[0]).content == "memory number 0 about bread"
    for bad in ({"limit": 0}, {"limit": 101}, {"state": "sleeping"}, {"cursor": "x"}, {"since_day": -1}):
        with pytest.raises(InvalidInput):
            system.memories("tom", **bad)  # type: ignore[arg-type]


def test_update_importance_changes_d1_and_the_index(system: MemorySystem) -> None:
    memory_id = remember(system, "tom", "Margaret brought bread at dawn.", 2)
    assert system.update_importance(memory_id, 0.3).importance == pytest.approx(0.3)
    assert system.env.VECTORIZE.get_by_ids([memory_id])[0].metadata["importance"] == pytest.approx(0.3)
    assert check(system.env).clean
    with pytest.raises(InvalidInput, match="importance"):
        system.update_importance(memory_id, 1.5)
    with pytest.raises(NotFound):
        system.update_importance("no-such-id", 0.5)


def test_forget_removes_from_d1_readers_and_the_index_and_is_not_drift(system: MemorySystem) -> None:
    keep = remember(system, "tom", "Margaret brought warm bread at dawn.", 2)
    gone = remember(system, "tom", "The bread was burnt and smelled of smoke.", 3)
    low = remember(system, "tom", "A burnt crust by the door.", 3, importance=0.1)  # D1 only
    assert system.forget([gone, low], "the player asked") == sorted([gone, low])
    for mode in ("vector", "keyword", "hybrid"):
        assert {r.id for r in system.recall("tom", "burnt bread smoke", top_k=10, mode=mode)} <= {keep}
    assert [m.id for m in system.memories("tom").memories] == [keep]
    assert {m.id for m in system.memories("tom", state="forgotten").memories} == {gone, low}
    assert system.memory(gone).index_state == "forgotten"
    assert system.env.VECTORIZE.get_by_ids([gone]) == []
    report = check(system.env)
    assert report.clean, report
    assert system.forget(gone, "again") == []  # re-running is harmless
    with pytest.raises(NotFound):
        system.forget(["no-such-id"], "x")
    with pytest.raises(InvalidInput, match="reason"):
        system.forget(keep, "")


def test_a_forget_cut_short_by_the_index_is_finished_by_retry(system: MemorySystem) -> None:
    gone = remember(system, "tom", "The bread was burnt.", 3)
    index = FlakyIndex(system.env.VECTORIZE)
    system.env.VECTORIZE = index  # type: ignore[assignment]
    index.down = True
    system.forget(gone, "oops")
    assert system.memory(gone).index_state == "forgetting"
    assert system.recall("tom", "burnt bread", mode="keyword") == []  # already invisible
    index.down = False
    assert check(system.env).clean  # a half-done forget is not drift
    system.retry_pending()
    assert system.memory(gone).index_state == "forgotten"
    assert index.get_by_ids([gone]) == [] and check(system.env).clean


def test_forget_npc(system: MemorySystem) -> None:
    system.register_npc("tom", "Tom")
    remember(system, "tom", "Bread at dawn.", 1)
    remember(system, "ada", "Ada's own memory.", 1)
    assert len(system.forget_npc("tom")) == 1
    assert system.memories("tom").memories == [] and [n.id for n in system.npcs()] == []
    assert len(system.memories("ada").memories) == 1
    assert forgetting.finish(system.env) == 0


def test_the_command_line_registers_lists_and_forgets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memory_sim.cli import main

    def run(*argv: str) -> Any:
        capsys.readouterr()
        assert main(["--data", str(tmp_path), "--model", "fake/hashing", "--d1-engine", "sqlite", *argv, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    assert run("npc", "tom", "--name", "Tom", "--role", "the blacksmith", "--alias", "Old Tom")["aliases"] == ["Old Tom"]
    assert [n["id"] for n in run("npcs")] == ["tom"]
    memory_id = run("remember", "margaret", "The blacksmith mended my oven door.", "--importance", "0.8", "--day", "3")["id"]
    assert [m["id"] for m in run("memories", "margaret")["memories"]] == [memory_id]
    assert [r["id"] for r in run("relationship", "margaret", "tom")["margaret"]] == [memory_id]
    assert [r["id"] for r in run("context", "margaret", "visit Old Tom?")] == [memory_id]
    assert run("forget", memory_id, "--reason", "the player asked") == {"forgotten": [memory_id]}
    assert run("memories", "margaret")["memories"] == []
    assert run("context", "margaret", "visit Old Tom?") == []
    assert main(["--data", str(tmp_path), "--model", "fake/hashing", "--d1-engine", "sqlite", "context", "Tom", "x"]) == 2
