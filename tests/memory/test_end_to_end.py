"""End to end on the embedded default: Chroma-backed Vectorize, DuckDB-backed D1, the bundled MiniLM."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.env import Env
from memory_sim.memory.models import MemoryConfig, ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from memory_sim.sim.driver import run_village
from memory_sim.sim.world import Village

pytestmark = pytest.mark.slow
STOP = {"the", "a", "my", "was", "by", "for", "who", "on", "about", "of", "to", "and", "in"}


def content_words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower())) - STOP


@pytest.fixture(scope="module")
def village_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("village")
    clock = SimClock()
    with Env.local(data) as env:
        run_village(MemorySystem(env, clock=clock), Village(8, 7), clock, 2)
    return data


def test_recall_by_meaning_with_no_shared_keyword(tmp_path: Path) -> None:
    right = "My oven door was repaired for free by the smith."
    query = "Who fixed the broken stove?"
    assert not content_words(right) & content_words(query)
    clock = SimClock(WorldTime(2, 0))
    with Env.local(tmp_path) as env:
        system = MemorySystem(env, clock=clock)
        for text in (right, "The vicar preached about patience on Sunday.", "Rain flooded the market square.",
                     "Rose sewed a new blue dress for the fair."):
            system.remember(ShortTermMemory("margaret", text, 0.9, WorldTime(1, 9)))
        assert system.recall("margaret", query, top_k=1)[0].text == right


def test_the_village_on_chroma_and_duckdb(village_data: Path) -> None:
    clock = SimClock(WorldTime(2, 0))
    with Env.local(village_data) as env:  # reopened: a restart, same files
        system = MemorySystem(env, clock=clock)
        stats = system.stats()
        assert stats["memories"] > 50 and stats["indexed"] == stats["vectors"] > 0
        found = system.weighted_recall("margaret", "What does Margaret think of Tom?", current_day=2)
        assert found and {r.npc_id for r in found} == {"margaret"} and found[0].source == "vectorize"
        assert system.consolidate().consolidated > 0  # day 1's diaries, written at 23:00 before the stop
        assert system.consolidate().consolidated == 0  # once each, across the restart


def test_cli_recall_json_and_stats(village_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", str(village_data), "recall", "tom", "the bakery", "--weighted", "--json", "--top-k", "3"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 3 and {r["npcId"] for r in rows} == {"tom"} and all("effectiveScore" in r for r in rows)
    assert main(["--data", str(village_data), "stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["memories"] > 50


def test_cli_remember_then_recall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = str(tmp_path)
    assert main(["--data", data, "remember", "tom", "Margaret brought me warm bread at dawn.", "--importance", "0.9",
                 "--day", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["indexed"] is True
    assert main(["--data", data, "recall", "tom", "a gift of food in the morning", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["text"] == "Margaret brought me warm bread at dawn."


def test_demo_runs_and_answers_the_question(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--days", "2", "--npcs", "3", "--data", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "What does Margaret think of Tom?" in out and "[vectorize]" in out
    assert re.search(r"2 days, 3 NPCs: \d+ memories in D1 .* \d+ vectors in the index, \d+ consolidations, 2 decay passes", out)
    assert main(["demo", "--days", "1", "--npcs", "2", "--data", str(tmp_path / "demo")]) == 0  # starts afresh


def test_meaning_finds_what_keywords_miss(village_data: Path) -> None:
    # Margaret's opinions of Tom mostly name him by role: keyword recall of "Tom" sees only those naming him.
    # (Without the registered NPCs' name expansion, which adds his role to any query, keyword mode included.)
    clock = SimClock(WorldTime(2, 0))
    with Env.local(village_data) as env:
        system = MemorySystem(env, clock=clock)
        question = "What does Margaret think of Tom?"
        by_meaning = system.recall("margaret", question, top_k=10)
        plain = MemorySystem(env, clock=clock, config=MemoryConfig(expand_npc_names=False))
        by_keyword = plain.recall("margaret", question, top_k=10, mode="keyword")
        role_only = [r for r in by_meaning if "Tom" not in r.text and re.search(r"smith|forge|horses|ironworker|hammer", r.text)]
        assert role_only and not any(r.id in {k.id for k in by_keyword} for r in role_only)
