"""The chat key refiner wired into `remember`: where the settings name a chat model (`key_chat_url`,
`key_chat_model`) it may replace each inferred key, against the fake OpenAI-compatible server on loopback; off by
default; a failing model leaves the offline key and the memory is stored either way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fake_chat_server import FakeChatServer
from memory_env import build_env

from memory_sim.env import Env
from memory_sim.memory.beliefs.key_chat import ChatKeyRefiner
from memory_sim.memory.beliefs.keys import KeyGuess
from memory_sim.memory.models import ShortTermMemory, StoredMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.settings import Settings, SettingsError

# Offline (the hashing embedder: cue words and structure) "I owe Mira three silver." is debt:mira.
OWE = ShortTermMemory("ada", "I owe Mira three silver.", 0.5, WorldTime(1, 9), about=("mira",))
RAIN = ShortTermMemory("ada", "It rained on the market all afternoon.", 0.5, WorldTime(1, 12))
GAME_KEYED = ShortTermMemory("ada", "I live by the mill.", 0.5, WorldTime(1, 15), type="place", state_key="home")


def _system(server: FakeChatServer | None, **settings: Any) -> tuple[Env, MemorySystem]:
    env = build_env(lambda: 0.0)
    if server is not None:
        settings = {"key_chat_api_key": "key", **settings}
        env.settings = Settings.load(environ={}, key_chat_url=server.base_url, key_chat_model="key-model", **settings)
    system = MemorySystem(env, clock=lambda: 0.0)
    system.register_npc("ada", "Ada")
    system.register_npc("mira", "Mira")
    return env, system


def _stored(system: MemorySystem, memory: ShortTermMemory) -> StoredMemory:
    return system.memory(memory.id)


@pytest.fixture()
def chat() -> Iterator[Callable[[str], FakeChatServer]]:
    servers: list[FakeChatServer] = []

    def start(answer: str) -> FakeChatServer:
        server = FakeChatServer(lambda messages: answer, api_key="key", delay_s=1.5).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


def test_off_by_default_the_offline_key_is_stored() -> None:
    env, system = _system(None)
    with env:
        system.remember_many([OWE, RAIN])
        assert _stored(system, OWE).state_key == "debt:mira"
        assert _stored(system, RAIN).state_key is None


def test_a_configured_chat_model_names_the_key_remember_stores(chat: Callable[[str], FakeChatServer]) -> None:
    server = chat("trade:mira")
    env, system = _system(server)
    with env:
        system.remember_many([OWE, GAME_KEYED])
        stored = _stored(system, OWE)
        assert (stored.state_key, stored.key_confidence, stored.key_source) == ("trade:mira", 0.8, "inferred")
        assert _stored(system, GAME_KEYED).state_key == "home"  # the game's key is never asked about
        prompts = [request["messages"][0]["content"] for request in server.requests]
        assert len(prompts) == 1 and OWE.content in prompts[0] and "debt:mira" in prompts[0]


def test_the_chat_model_may_give_a_key_the_offline_guess_had_not(chat: Callable[[str], FakeChatServer]) -> None:
    env, system = _system(chat("place:market"))
    with env:
        system.remember(RAIN)
        assert _stored(system, RAIN).state_key == "place:market"


def test_an_answer_outside_the_vocabulary_keeps_the_offline_key(chat: Callable[[str], FakeChatServer]) -> None:
    env, system = _system(chat("debt:tom"))  # Tom is not named by the memory
    with env:
        system.remember(OWE)
        assert _stored(system, OWE).state_key == "debt:mira"


@pytest.mark.parametrize(("behaviour", "api_key"), [
    ("error", "key"), ("slow", "key"), ("bad-json", "key"), ("no-choices", "key"), ("ok", "a wrong key"),
])
def test_a_failing_chat_model_stores_the_memory_with_the_offline_key(
    chat: Callable[[str], FakeChatServer], behaviour: str, api_key: str
) -> None:
    server = chat("trade:mira")
    server.behaviour = behaviour
    env, system = _system(server, key_chat_timeout_s=0.5, key_chat_api_key=api_key)
    with env:
        system.remember_many([OWE, RAIN])
        assert _stored(system, OWE).state_key == "debt:mira"
        assert _stored(system, RAIN).state_key is None


def test_an_unreachable_chat_model_stores_the_memory_with_the_offline_key() -> None:
    with FakeChatServer(lambda messages: "trade:mira") as server:
        url = server.base_url
    env = build_env(lambda: 0.0)  # the server is gone: its port refuses
    env.settings = Settings.load(environ={}, key_chat_url=url, key_chat_model="key-model", key_chat_timeout_s=0.5)
    with env:
        system = MemorySystem(env, clock=lambda: 0.0)
        system.register_npc("mira", "Mira")
        assert system.remember(OWE) is False  # stored in D1 only (importance 0.5), not lost
        assert _stored(system, OWE).state_key == "debt:mira"


def test_after_an_outage_the_model_rests_instead_of_timing_out_on_every_memory() -> None:
    now = [0.0]
    guess = KeyGuess("debt:mira", 0.6, "a rule")
    with FakeChatServer(lambda messages: "trade:mira") as server:
        server.behaviour = "error"
        refiner = ChatKeyRefiner(server.base_url, "key-model", timeout_s=0.5, rest_s=60.0, clock=lambda: now[0])
        try:
            for _ in range(3):
                assert refiner.refine(OWE.content, guess, type="event", subjects=("mira",)) == guess
            assert len(server.requests) == 1 and refiner.fallbacks == 3
            server.behaviour, now[0] = "ok", 61.0
            assert refiner.refine(OWE.content, guess, type="event", subjects=("mira",)).key == "trade:mira"
        finally:
            refiner.close()


def test_the_settings_name_the_chat_model_from_the_environment() -> None:
    settings = Settings.load(environ={"MEMORY_SIM_KEY_CHAT_URL": "http://127.0.0.1:11434/v1",
                                      "MEMORY_SIM_KEY_CHAT_MODEL": "llama3.1"})
    assert (settings.key_chat_url, settings.key_chat_model) == ("http://127.0.0.1:11434/v1", "llama3.1")
    assert Settings.load(environ={}).key_chat_url is None
    with pytest.raises(SettingsError, match="key_chat_model .*name the chat model"):
        Settings.load(environ={"MEMORY_SIM_KEY_CHAT_URL": "http://127.0.0.1:11434/v1"})
    with pytest.raises(SettingsError, match="key_chat_url"):
        Settings.load(environ={"MEMORY_SIM_KEY_CHAT_URL": "ftp://models"}, key_chat_model="m")
