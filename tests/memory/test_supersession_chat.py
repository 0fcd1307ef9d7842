"""A chat model's word on the supersession rule's pairs (memory/beliefs/chat.py), against the fake
OpenAI-compatible server: it may confirm, refuse or add a link the rule proposed; an outage leaves the rule's
verdicts."""

from __future__ import annotations

from typing import Any

from fake_chat_server import FakeChatServer
from memory_env import build_env

from memory_sim.memory.beliefs.chat import ChatJudge
from memory_sim.memory.beliefs.detect import Belief, links
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

TOM = frozenset({"tom"})
AWAY = Belief("away", "mira", "event", 24, "Tom is away at the horse fair.", TOM)
BACK = Belief("back", "mira", "event", 120, "Tom is back at the forge now.", TOM)
BREAD = Belief("bread", "mira", "event", 30, "Tom baked bread for the wedding.", TOM)
CAKE = Belief("cake", "mira", "event", 130, "Tom finally finished the wedding cake.", TOM)
SIMILARITY = {("back", "away"): 0.55, ("cake", "bread"): 0.70}  # the bundled model's, as measured


def similarity(pairs: Any) -> list[float]:
    return [SIMILARITY.get((n.id, o.id), 0.0) for n, o in pairs]


def knows_better(messages: list[dict[str, Any]]) -> str:
    return "Yes." if "horse fair" in messages[-1]["content"] else "no"


def test_the_rule_alone_misses_one_and_links_one_wrongly() -> None:
    assert {k: v[0] for k, v in links([AWAY, BACK, BREAD, CAKE], similarity).items()} == {"bread": "cake"}


def test_the_model_adds_the_missed_link_and_refuses_the_wrong_one() -> None:
    with FakeChatServer(knows_better, api_key="key") as server:
        judge = ChatJudge(server.base_url, "judge-model", api_key="key")
        found = links([AWAY, BACK, BREAD, CAKE], similarity, judge.judge)
        assert found == {"away": ("back", "judged")}
        asked = [r["messages"][-1]["content"] for r in server.requests]
        assert all("Answer yes or no" in a for a in asked)
        assert any("horse fair" in a and "back at the forge" in a for a in asked)
        assert any("baked bread" in a and "wedding cake" in a for a in asked)
        assert all(r["model"] == "judge-model" and r["temperature"] == 0 for r in server.requests)


def test_an_outage_or_a_rambling_answer_leaves_the_rules_verdict() -> None:
    with FakeChatServer(knows_better) as server:
        server.behaviour = "error"
        judge = ChatJudge(server.base_url, "judge-model")
        assert {k: v for k, v in links([AWAY, BACK, BREAD, CAKE], similarity, judge.judge).items()} == {
            "bread": ("cake", "update")}
        assert judge.fallbacks == len(server.requests) > 0
    with FakeChatServer(lambda messages: "Perhaps, it depends.") as server:
        judge = ChatJudge(server.base_url, "judge-model")
        assert links([BREAD, CAKE], similarity, judge.judge) == {"bread": ("cake", "update")}
        assert judge.fallbacks == 1


def test_a_memory_system_with_a_judge_ranks_what_the_model_confirmed() -> None:
    clock = SimClock()
    env = build_env(clock)
    with FakeChatServer(knows_better) as server:
        judge = ChatJudge(server.base_url, "judge-model")
        memory = MemorySystem(env, clock=clock, judge=judge)
        memory.remember(ShortTermMemory("mira", AWAY.text, 0.9, WorldTime(1), about=("tom",)))
        memory.remember(ShortTermMemory("mira", BACK.text, 0.8, WorldTime(5), about=("tom",)))
        clock.advance_to(WorldTime(6))
        found = memory.weighted_recall("mira", "Where is Tom, at the horse fair?", top_k=2, mode="vector")
        assert [r.text for r in found] == [BACK.text, AWAY.text] and found[1].superseded_by == found[0].id
        assert server.requests  # the rule proposed the pair (a change cue), the model confirmed it
