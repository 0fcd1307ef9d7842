"""What the pages say about odd NPC ids and about time: an id with `/` has its pages, and world time is shown
as the world's day and hour, the folder's latest (not raw seconds, not an older day)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from inspector_helpers import Inspector, inspector

from memory_sim.env import Env
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem

NPC = "guild/alice"
FORGOT_AT = WorldTime(3, 0).to_seconds()  # 259200.0


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Inspector, dict[str, str]]]:
    """Memories of an NPC whose id holds `/`, made on day 1; one forgotten on day 3, when the clock stood there."""
    folder = tmp_path_factory.mktemp("odd")
    clock = [WorldTime(1, 5).to_seconds()]
    with Env.local(folder, embed_model="fake/hashing", environ={}, serve_owner=False) as env:
        system = MemorySystem(env, clock=lambda: clock[0])
        kept = ShortTermMemory(NPC, "The guild hall roof leaks again.", 0.9, WorldTime(1, 5))
        gone = ShortTermMemory(NPC, "I owe the miller two coins.", 0.8, WorldTime(1, 6))
        system.remember_many([kept, gone])
        clock[0] = FORGOT_AT
        system.forget(gone.id, "settled the debt")
    with inspector(folder) as served:
        yield served, {"kept": kept.id, "gone": gone.id}


def test_an_npc_whose_id_holds_a_slash_has_its_pages(odd: tuple[Inspector, dict[str, str]]) -> None:
    ui, ids = odd
    village = ui.get("/ui/")
    link = re.search(r'href="(/ui/npcs/[^"]*)"', village.text)
    assert link is not None and ui.get(link[1]).status_code == 200  # the village's own link to it
    assert ui.json(f"/ui/api/npcs/{NPC}")["id"] == NPC
    page = ui.get(f"/ui/npcs/{NPC}")
    assert page.status_code == 200 and "The guild hall roof leaks again." in page.text
    assert ui.get("/ui/npcs/guild%2Falice").status_code == 200  # encoded as the timeline's links encode it
    assert ui.json(f"/ui/api/memories/{ids['kept']}")["npcId"] == NPC
    assert ui.get(f"/ui/memories/{ids['kept']}").status_code == 200


def test_world_time_is_the_folders_latest_as_day_and_hour(odd: tuple[Inspector, dict[str, str]]) -> None:
    ui, ids = odd
    village = ui.json("/ui/api/village")
    assert (village["worldDay"], village["worldTime"]) == (3, "day 3 00:00")  # the forget happened on day 3
    assert ui.json("/ui/api/health")["worldTime"] == "day 3 00:00"
    assert "world time day 3 00:00" in ui.get("/ui/").text
    forgotten = ui.json(f"/ui/api/memories/{ids['gone']}")["forgotten"]
    assert forgotten["forgotten_at"] == FORGOT_AT and forgotten["when"] == "day 3 00:00"
    page = ui.get(f"/ui/memories/{ids['gone']}").text
    shown = re.search(r'<dl class="kv" id="forgotten">(.*?)</dl>', page, re.S)
    assert shown is not None and "day 3 00:00" in shown[1] and "259200" not in shown[1]
    assert "settled the debt" in shown[1]
