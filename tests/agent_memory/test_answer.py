"""recall's answer written by an OpenAI-compatible chat model (tests/memory/fake_chat_server.py), and the
extractive answer standing in when the model fails."""

from __future__ import annotations

from typing import Any

from tests.agent_memory.am_helpers import local_service

from memory_sim.agent_memory import ChatAnswerer
from tests.memory.fake_chat_server import FakeChatServer

CONVERSATION = [{"role": "user", "content": "I use VS Code as my editor."},
                {"role": "user", "content": "I prefer concise answers."}]


def _profile(clock: Any, answerer: Any) -> Any:
    account = local_service(clock, answerer=answerer).account()
    account.create_namespace("chat")
    profile = account.namespace("chat").get_profile("alice")
    profile.ingest(CONVERSATION)
    return profile


def test_a_chat_model_writes_the_answer(clock: Any) -> None:
    def reply(messages: list[dict[str, Any]]) -> str:
        assert "VS Code" in messages[1]["content"] and "Which editor" in messages[1]["content"]
        return "The user edits code in VS Code."

    with FakeChatServer(reply, api_key="k") as server:
        profile = _profile(clock, ChatAnswerer(server.base_url, "some-model", api_key="k"))
        found = profile.recall("Which editor does the user use?", response_length="short")
        assert found.answer == "The user edits code in VS Code."
        assert server.requests[-1]["model"] == "some-model"
        assert "40 words" in server.requests[-1]["messages"][0]["content"]
        assert profile.recall("What is the boiling point of mercury?").answer == ""  # no memory: no model call
        assert len(server.requests) == 1


def test_a_failing_model_leaves_the_extractive_answer(clock: Any) -> None:
    with FakeChatServer(lambda messages: "unused") as server:
        server.behaviour = "error"
        profile = _profile(clock, ChatAnswerer(server.base_url, "m"))
        assert profile.recall("Which editor do I use?").answer == "The user uses VS Code as their editor."
        server.behaviour = "no-choices"
        assert profile.recall("Which editor do I use?").answer == "The user uses VS Code as their editor."
