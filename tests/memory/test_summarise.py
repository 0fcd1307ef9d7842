"""The extractive summariser, and the LLM one against an OpenAI-compatible chat server on loopback."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fake_chat_server import FakeChatServer

from memory_sim.env import Env
from memory_sim.errors import AiError, EmbeddingUnavailable
from memory_sim.memory.consolidation.summarise import (
    ChatSummariser,
    ExtractiveSummariser,
    split_sentences,
)
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

DAY = [
    ("I baked rye loaves at dawn.", 0.2),
    ("The blacksmith mended my oven door and would not take a penny.", 0.9),
    ("It rained on the market.", 0.1),
    ("I thanked the blacksmith for the oven door at the forge.", 0.6),
]


def test_extractive_keeps_the_central_important_sentences_in_order() -> None:
    summary = ExtractiveSummariser().summarise(DAY, max_sentences=2)
    assert summary == (
        "The blacksmith mended my oven door and would not take a penny. "
        "I thanked the blacksmith for the oven door at the forge."
    )
    assert len(split_sentences(summary)) == 2


def test_extractive_handles_one_and_none() -> None:
    assert ExtractiveSummariser().summarise([("Alone.", 0.1)]) == "Alone."
    assert ExtractiveSummariser().summarise([]) == ""


def fever_day(messages: list[dict[str, Any]]) -> str:
    return "I fell ill, and the blacksmith's kindness with my oven stayed with me."


def test_chat_summariser_speaks_openai_chat_on_loopback() -> None:
    with FakeChatServer(fever_day, api_key="key") as server:
        summariser = ChatSummariser(server.base_url, "tiny", "key")
        assert summariser.summarise(DAY) == fever_day([])
        [body] = server.requests
        assert body["model"] == "tiny" and body["messages"][0]["role"] == "user"
        assert all(text in body["messages"][0]["content"] for text, _ in DAY)
        assert summariser.fallbacks == 0


@pytest.mark.parametrize("behaviour", ["error", "slow", "bad-json", "no-choices", "unauthorized", "down"])
def test_chat_summariser_falls_back_to_the_extractive_summary(behaviour: str) -> None:
    with FakeChatServer(fever_day, api_key="key", delay_s=60.0) as server:
        server.behaviour = behaviour
        url = server.base_url
        key = "wrong" if behaviour == "unauthorized" else "key"
        if behaviour == "down":
            server.__exit__()
        summariser = ChatSummariser(url, "tiny", key, timeout_s=2.0)
        started = time.perf_counter()
        assert summariser.summarise(DAY) == ExtractiveSummariser().summarise(DAY)
        # the timeout held: "slow" answers after 60 s; the bound leaves any load room, not a speed claim
        assert summariser.fallbacks == 1 and time.perf_counter() - started < 40.0


@pytest.mark.parametrize(("behaviour", "error"), [("error", EmbeddingUnavailable), ("bad-json", AiError)])
def test_chat_summariser_without_fallback_raises(behaviour: str, error: type[Exception]) -> None:
    with FakeChatServer(fever_day) as server:
        server.behaviour = behaviour
        with pytest.raises(error):
            ChatSummariser(server.base_url, "tiny", fallback=None).summarise(DAY)


def test_consolidation_through_a_chat_summariser_degrades_and_never_loses(clock: SimClock) -> None:
    """The LLM's summary of a topic is stored with every memory of that topic as its sources (the fever, which
    names no one, is a topic of its own); while the server is down the next day gets the extractive summary, so no
    day waits or is lost."""
    with FakeChatServer(lambda messages: "Bram fell ill; Cora, the herbalist, brought willow bark tea.") as server:
        system = MemorySystem(Env.in_memory(clock), clock=clock, summariser=ChatSummariser(server.base_url, "tiny"))
        day5 = [("I woke with a burning fever.", 0.85, "event", ()), ("Cora left willow bark tea at my door.", 0.6,
                "relationship", ("cora",)), ("The herbalist cured my fever. Maybe I was wrong about her.", 0.9,
                "opinion", ("cora",))]
        for day in (5, 6):
            system.remember_many([ShortTermMemory("bram", text, imp, WorldTime(day, 9 + i), type=kind, about=about)  # type: ignore[arg-type]
                                  for i, (text, imp, kind, about) in enumerate(day5)])
            system.write_diary("bram", day)
            if day == 6:
                server.__exit__()
            clock.advance_to(WorldTime(day + 2))
            assert system.consolidate().details == [f"summary-bram-{day}"]
    llm, extractive = (store.memories_by_ids(system.env.DB, [f"summary-bram-{d}"])[f"summary-bram-{d}"] for d in (5, 6))
    assert llm.content == "Bram fell ill; Cora, the herbalist, brought willow bark tea."
    assert (llm.type, llm.about) == ("opinion", ("cora",))
    assert len(system.lineage(llm.id).sources) == 2  # an abstractive summary draws on its whole topic
    assert extractive.content == ("Cora left willow bark tea at my door. The herbalist cured my fever. Maybe I was "
                                  "wrong about her.")
    assert [s.content for s in system.lineage(extractive.id).sources] == [day5[1][0], day5[2][0]]
    assert system.summariser.fallbacks == 1  # type: ignore[attr-defined]


def readme_example() -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Consolidation with a local LLM", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
def test_the_readme_example_runs_against_a_local_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code = readme_example()
    assert "http://127.0.0.1:8080/v1" in code
    with FakeChatServer(lambda messages: "A fever, and tea from Cora.") as server:
        monkeypatch.chdir(tmp_path)
        example = compile(code.replace("http://127.0.0.1:8080/v1", server.base_url), "README.md", "exec")
        exec(example, {})  # noqa: S102 - the README's own example, as a user would run it
        assert len(server.requests) == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[-2:] == ["['summary-bram-5']",
                            "['Cora says my fever will break by Sunday.', 'Cora left willow bark tea at my door.']"]
