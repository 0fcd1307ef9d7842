"""Agent Memory's REST routes on the local server: the v4 envelope, the token rules shared with the other APIs,
the wire's field names, and a profile's memories in the same ledger and index as the NPC memory."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory_sim.testing import TEST_TOKEN

BASE = "/client/v4/accounts/acct-wire/agent-memory/namespaces"


@pytest.fixture
def http(served: Any) -> Any:
    with httpx.Client(base_url=served.base_url.removesuffix("/client/v4"),
                      headers={"Authorization": f"Bearer {TEST_TOKEN}"}) as client:
        yield client


def test_envelope_and_wire_names(http: Any) -> None:
    made = http.post(BASE, json={"name": "wire-ns"}).json()
    assert made["success"] is True and made["errors"] == [] and made["messages"] == []
    assert set(made["result"]) == {"id", "name", "created_at", "updated_at"}
    assert made["result"]["created_at"].endswith("Z")
    taken = http.post(BASE, json={"name": "wire-ns"})
    assert taken.status_code == 409
    assert taken.json() == {"success": False, "result": None, "messages": [],
                            "errors": [{"code": 10008, "message": "Namespace name already exists"}]}
    profile = f"{BASE}/wire-ns/profiles/alice"
    assert http.get(f"{profile}/memories").status_code == 404  # never written to
    assert http.get(f"{profile}/memories").json()["errors"][0]["message"] == "Profile not found"
    assert http.post(f"{profile}/ingest", json={"messages": [{"role": "user", "content": "I am a nurse."}],
                                                "sessionId": "s1"}).json()["result"] is None
    listed = http.get(f"{profile}/memories", params={"per_page": 5}).json()
    assert listed["result_info"] == {"cursor": "", "per_page": 5, "count": 1}
    assert set(listed["result"][0]) == {"id", "type", "summary", "sessionId", "createdAt", "updatedAt"}
    one = http.get(f"{profile}/memories/{listed['result'][0]['id']}").json()["result"]
    assert one["content"] == "I am a nurse." and one["sessionId"] == "s1"
    recalled = http.post(f"{profile}/recall", json={"query": "What is my job? nurse"}).json()["result"]
    assert set(recalled) == {"count", "answer", "candidates"} and recalled["count"] == 1
    assert set(recalled["candidates"][0]) == {"id", "summary", "sessionId", "score"}
    assert http.post(f"{profile}/summary", json={}).json()["result"]["summary"].startswith("## Key Facts")
    bad = http.get(f"{profile}/memories", params={"per_page": "many"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["code"] == 10027
    assert http.delete(f"{BASE}/wire-ns").json() == {"success": True, "errors": [], "messages": [], "result": None}


def test_tokens(served: Any) -> None:
    url = served.base_url + "/accounts/acct-wire/agent-memory/namespaces"
    assert httpx.get(url).status_code == 401
    wrong = httpx.get(url, headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 403 and wrong.json()["errors"][0]["code"] == 9109


def test_a_bad_body_is_refused_in_the_envelope(http: Any) -> None:
    answer = http.post(BASE, content=b"{not json", headers={"Content-Type": "application/json"})
    assert answer.status_code == 400 and answer.json()["success"] is False


def test_profile_memories_live_in_the_npc_memory(clock: Any) -> None:
    from tests.agent_memory.am_helpers import local_service

    service = local_service(clock)
    account = service.account()
    account.create_namespace("game")
    profile = account.namespace("game").get_profile("mira")
    made = profile.remember("I use VS Code as my editor.")
    npc = {n.id: n for n in service.system.npcs()}["game/mira"]
    assert npc.name == "mira"
    stored = service.system.memory(made.id)
    assert stored.npc_id == "game/mira" and stored.content == "The user uses VS Code as their editor."
    assert stored.index_state == "indexed"  # a fact is embedded, as Cloudflare embeds non-task memories
    task = profile.remember("I need to renew my passport.")
    assert service.system.memory(task.id).index_state == "none"  # tasks are not
    from memory_sim.inspector import Folder
    from memory_sim.inspector.api import npc_data

    shown = npc_data(Folder.of_env(service.system.env), "game/mira")  # what the inspector's NPC page shows
    assert {m["id"] for m in shown["memories"]} == {made.id, task.id}
    profile.delete(made.id)
    assert made.id not in {m.id for m in service.system.memories("game/mira").memories}


def test_consolidated_days_still_answer(clock: Any) -> None:
    """The memory system's consolidation may fold a profile's day into a summary; recall answers with the
    memories the summary holds."""
    from tests.agent_memory.am_helpers import local_service

    service = local_service(clock)
    account = service.account()
    account.create_namespace("game")
    profile = account.namespace("game").get_profile("mira")
    profile.ingest([{"role": "user", "content": c, "timestamp": "2026-04-01T10:00:00Z"} for c in (
        "I have a dog called Rex.", "I walk Rex every morning.", "Rex likes the park by the river.")])
    day = service.system.memories("game/mira").memories[0].day
    service.system.write_diary("game/mira", day)  # what a scheduler does for every registered NPC
    service.system.consolidate()
    assert service.system.memories("game/mira", kind="summary").memories  # the day was folded into a summary
    found = profile.recall("Tell me about Rex the dog", thinking_level="high")
    assert {c.summary for c in found.candidates} >= {"The user has a dog called Rex."}
    assert all(c.id.startswith("am-") for c in found.candidates)
