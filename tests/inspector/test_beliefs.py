"""The inspector shows how a belief changed: a memory's page names the later memory that corrects it and the
earlier ones it corrects, and the recall page marks a result that a later memory supersedes."""

from __future__ import annotations

from urllib.parse import quote

from inspector_helpers import Inspector

from memory_sim.memory.ledger import store
from memory_sim.memory.system import MemorySystem


def test_a_memorys_page_shows_what_corrects_it_and_what_it_corrects(ui: Inspector) -> None:
    with ui.folder.env() as env:
        seconds = store.world_seconds(env.DB)
        system = MemorySystem(env, clock=lambda: seconds)
        opinions = [m for npc in system.npcs() for m in system.memories(npc.id, type="opinion").memories
                    if m.kind == "observation"]
        stale = next(m for m in opinions if system.belief_links(m.id).superseded_by is not None)
        later = system.belief_links(stale.id).superseded_by
    assert later is not None and (later.day, later.hour) > (stale.day, stale.hour)
    data = ui.json(f"/ui/api/memories/{quote(stale.id)}")
    assert data["belief"]["supersededBy"] == {"id": later.id, "day": later.day, "hour": later.hour,
                                              "content": later.content}
    assert stale.id in [m["id"] for m in ui.json(f"/ui/api/memories/{quote(later.id)}")["belief"]["supersedes"]]
    page = ui.get(f"/ui/memories/{quote(stale.id)}").text
    assert "Superseded by a later memory" in page and later.content.split(";")[0] in page
    assert "Corrects or updates:" in ui.get(f"/ui/memories/{quote(later.id)}").text


def test_the_recall_page_marks_a_superseded_result(ui: Inspector) -> None:
    with ui.folder.env() as env:
        seconds = store.world_seconds(env.DB)
        system = MemorySystem(env, clock=lambda: seconds)
        links = [system.belief_links(m.id) for npc in system.npcs()
                 for m in system.memories(npc.id, type="opinion").memories if m.kind == "observation"]
        stale, later = next((system.memory(b.memory_id), b.superseded_by) for b in links if b.superseded_by)
    asked = {"npc": stale.npc_id, "q": f"{stale.content} {later.content}", "weighted": "true", "top_k": 10}
    data = ui.json("/ui/api/recall", **asked)
    marked = [r for r in data["results"] if r["supersededBy"]]
    assert marked, [r["text"] for r in data["results"]]
    ids = [r["id"] for r in data["results"]]
    for r in marked:  # the correction, where it is among the results, ranks above what it corrects
        assert r["supersededBy"] not in ids or ids.index(r["supersededBy"]) < ids.index(r["id"])
    assert "superseded by" in ui.get("/ui/recall", **asked).text
