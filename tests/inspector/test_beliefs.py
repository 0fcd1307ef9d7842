"""The inspector shows how a state changed: a memory's page names its state key, the later memory under the key
that supersedes it, the one before it, and the key's history newest first; the recall page shows each result's
key and marks a result that a later memory supersedes."""

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
    assert data["belief"]["stateKey"] == stale.state_key is not None
    history = [m["id"] for m in data["belief"]["history"]]
    assert history.index(later.id) == history.index(stale.id) - 1  # newest first: the next newer just above it
    assert f"History of <code>{stale.state_key}</code>" in page and "(current)" in page


def test_the_recall_page_marks_a_superseded_result(ui: Inspector) -> None:
    with ui.folder.env() as env:
        seconds = store.world_seconds(env.DB)
        system = MemorySystem(env, clock=lambda: seconds)
        links = [system.belief_links(m.id) for npc in system.npcs()
                 for m in system.memories(npc.id, type="opinion").memories if m.kind == "observation"]
        # a change of view, not a restatement (recall collapses repeated words to one result), both in the index
        stale, later = next((system.memory(b.memory_id), b.superseded_by) for b in links
                            if b.superseded_by and b.superseded_by.content != system.memory(b.memory_id).content
                            and min(b.superseded_by.importance, system.memory(b.memory_id).importance) > 0.7)
    asked = {"npc": stale.npc_id, "q": f"{stale.content} {later.content}", "weighted": "true", "top_k": 10}
    data = ui.json("/ui/api/recall", **asked)
    marked = [r for r in data["results"] if r["supersededBy"]]
    assert marked, [r["text"] for r in data["results"]]
    ids = [r["id"] for r in data["results"]]
    for r in marked:  # the correction, where it is among the results, ranks above what it corrects
        assert r["supersededBy"] not in ids or ids.index(r["supersededBy"]) < ids.index(r["id"])
    # marks come from state keys (scoring.current_first): each marked result's correction is the next newer memory
    # under its own key, and the asked key's current memory is among the results, named by its key
    for r in marked:
        assert r["stateKey"] and ui.json(f"/ui/api/memories/{quote(r['supersededBy'])}")["belief"]["stateKey"] == r[
            "stateKey"]
    assert next(r for r in data["results"] if r["id"] == later.id)["stateKey"] == stale.state_key
    assert "superseded by" in ui.get("/ui/recall", **asked).text


def test_the_recall_page_orders_by_the_score_it_shows(ui: Inspector) -> None:
    """Seen on main: 0.8896 ranked above 1.0257, and weighted scores above score x importance."""
    with ui.folder.env() as env:
        seconds = store.world_seconds(env.DB)
        system = MemorySystem(env, clock=lambda: seconds)
        npc = system.npcs()[0].id
    for mode in ("hybrid", "vector", "keyword"):
        plain = ui.json("/ui/api/recall", npc=npc, q="what do I think of my neighbours", mode=mode, top_k=10)
        scores = [r["score"] for r in plain["results"]]
        assert scores == sorted(scores, reverse=True), (mode, scores)
        weighted = ui.json("/ui/api/recall", npc=npc, q="what do I think of my neighbours", mode=mode, top_k=10,
                           weighted="true")
        shown = [r["effectiveScore"] for r in weighted["results"]]
        assert shown == sorted(shown, reverse=True), (mode, shown)
        for r in weighted["results"]:
            assert r["weighting"]["effective"] == r["effectiveScore"] and r["weighting"]["sourceCap"] in (
                None, r["effectiveScore"]), r
