"""The village's views as the memory system tells them, against the village's own truth (its turns): what an NPC
thinks of another now, since the day that view began, and the earlier views it held, counted as views (changes of
stance), not as the sentences that restated them. On main the demo's Margaret had "19 earlier views" of Tom,
"since day 13" (a chat about the new bridge keyed as her opinion), while the village had turned her view once."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from memory_env import build_env

from memory_sim.cli import main
from memory_sim.memory.models import WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from memory_sim.sim.driver import run_village
from memory_sim.sim.opinions import VIEW_VALUES
from memory_sim.sim.world import Village

DAYS = 14
STORY = re.compile(r"'s view of .+?, since day (\d+): ")
EARLIER = re.compile(r"Before that \((\d+) earlier views?, newest first\): (.*)$")


@pytest.fixture(scope="module")
def lived() -> tuple[Village, MemorySystem, list[Any]]:
    clock = SimClock()
    system = MemorySystem(build_env(clock), clock=clock)
    village = Village(8, 7)
    start = {pair: feeling.view for pair, feeling in village.feelings.items()}
    run_village(system, village, clock, DAYS)
    return village, system, [start]


def truth(village: Village, start: dict[tuple[str, str], int], npc: str, other: str,
          said_days: list[int]) -> list[tuple[int, str]]:
    """The views `npc` held of `other` that its memories show, oldest first, as (day it began, value): its first
    view from the first day it voiced it (if it did before any turn), then each turn the village recorded."""
    turns = [t for t in village.turns if (t.npc_id, t.other_id) == (npc, other)]
    views = [(t.when.day, VIEW_VALUES[t.view]) for t in turns]
    first_turn = min((t.when.hours for t in turns), default=None)
    voiced_before = [d for d in said_days if first_turn is None or d * 24 < first_turn]
    if voiced_before:
        views.insert(0, (min(voiced_before), VIEW_VALUES[start[(npc, other)]]))  # type: ignore[index]
    return views


def pairs_with_views(system: MemorySystem, village: Village) -> list[tuple[str, str, list[int]]]:
    out = []
    for a in village.npcs:
        for b in village.npcs:
            said = [m.day for m in system.history(a.id, f"opinion:{b.id}")] if a != b else []
            if said:
                out.append((a.id, b.id, said))
    return out


def told(story: str) -> tuple[int, int, list[int]]:
    """From an opinion's story: the day the current view began, how many earlier views it counts, and the days
    the earlier views it quotes began (newest first)."""
    since = STORY.search(story)
    assert since, story
    earlier = EARLIER.search(story)
    if earlier is None:
        assert story.endswith("No earlier view."), story
        return int(since.group(1)), 0, []
    quoted = [int(d) for d in re.findall(r'(?:^|; )day (\d+), "', earlier.group(2))]
    more = re.search(r"; and (\d+) more \((?:day (\d+)|days (\d+) to (\d+))\)\.", earlier.group(2))
    assert int(earlier.group(1)) == len(quoted) + (int(more.group(1)) if more else 0), story  # counts agree
    return int(since.group(1)), int(earlier.group(1)), quoted


def test_chats_and_events_between_two_npcs_set_no_state_and_opinions_set_the_view(lived: Any) -> None:
    village, system, _ = lived
    rows = system.env.DB.prepare("SELECT type, about, state_key, state_value, key_source FROM short_term_memories"
                                 " WHERE kind = 'observation'").all().results
    between = [r for r in rows if r["type"] in ("relationship", "event") and r["about"]]
    assert len(between) > 100
    assert all(r["state_key"] is None and r["key_source"] == "game" for r in between)
    opinions = [r for r in rows if r["type"] == "opinion" and "," not in r["about"]]
    assert opinions and all(r["state_key"] == f"opinion:{r['about']}" and r["state_value"] in ("warm", "cold")
                            for r in opinions)
    tom = [m.content for m in system.history("margaret", "opinion:tom")]
    assert not [t for t in tom if "told me all about" in t or "talked about" in t]


def test_the_story_counts_changes_of_view_not_restatements(lived: Any) -> None:
    village, system, (start,) = lived
    checked = 0
    for npc, other, said in pairs_with_views(system, village):
        views = truth(village, start, npc, other, said)
        _, count, quoted = told(system.opinion(npc, other))
        assert count == len(views) - 1, (npc, other, system.opinion(npc, other), views)
        assert quoted == [day for day, _ in reversed(views[:-1])][: len(quoted)]
        checked += 1
    assert checked >= 20  # siblings, not only Margaret and Tom


def test_since_day_is_the_day_the_current_view_began(lived: Any) -> None:
    village, system, (start,) = lived
    for npc, other, said in pairs_with_views(system, village):
        views = truth(village, start, npc, other, said)
        since, _, _ = told(system.opinion(npc, other))
        assert since == views[-1][0], (npc, other, system.opinion(npc, other), views)
    margaret = system.opinion("margaret", "tom")
    assert told(margaret)[:2] == (10, 1), margaret  # the kindness at the smithy on day 10 turned her view


def test_relationship_json_carries_the_views(lived: Any) -> None:
    village, system, (start,) = lived
    context = system.relationship_context("margaret", "tom")
    views = [(v["sinceDay"], v["value"]) for v in context.a_views]
    said = [m.day for m in system.history("margaret", "opinion:tom")]
    assert views == list(reversed(truth(village, start, "margaret", "tom", said)))
    assert sum(int(v["times"]) for v in context.a_views) == len(said)  # each memory under the key told once


def test_the_demo_answer_counts_and_days_agree_with_the_village(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--data", str(tmp_path / "demo"), "--json", "--model", "fake/hashing"]) == 0
    out = json.loads(capsys.readouterr().out)
    verdict, day = out["verdict"], out["day"]
    village = Village(8, 7)
    start = {pair: feeling.view for pair, feeling in village.feelings.items()}
    said = [m.world_time.day for h in range(DAYS * 24) for m in village.tick(WorldTime.from_hours(h)).memories
            if m.npc_id == "margaret" and m.type == "opinion" and m.about == ("tom",)]
    views = truth(village, start, "margaret", "tom", said)
    since, count, quoted = told(verdict)
    assert (since, count) == (views[-1][0], len(views) - 1), verdict
    assert quoted == [d for d, _ in reversed(views[:-1])][: len(quoted)] and all(d <= since for d in quoted)
    again = re.search(r"\(said again (once|twice|\d+ times), last on day (\d+)\)", verdict)
    assert again is None or since <= int(again.group(2)) <= day
    turned = [t for t in village.turns if (t.npc_id, t.other_id) == ("margaret", "tom")]
    assert [(t["day"], t["memory"]) for t in out["turns"]] == [(t.when.day, t.cause_id) for t in turned]
    causes = verdict.split(" It changed ")[1] if turned else ""
    told_days = [int(d) for d in re.findall(r"(?:^|; )on day (\d+), after ", causes)]
    assert told_days == [t.when.day for t in turned], verdict
    affinity = float(re.search(r"Affinity ([+-]\d\.\d\d)", verdict).group(1))  # type: ignore[union-attr]
    assert (affinity > 0) == (views[-1][1] == "warm"), verdict  # the affinity agrees with the view it tells
