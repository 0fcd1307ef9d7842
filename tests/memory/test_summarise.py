"""The extractive summariser, and the LLM one over a transport seam."""

from __future__ import annotations

import httpx
import pytest

from memory_sim.errors import EmbeddingUnavailable
from memory_sim.memory.summarise import ChatSummariser, ExtractiveSummariser, Summariser, split_sentences

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


def test_chat_summariser_speaks_openai_chat() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"choices": [{"message": {"content": " Tom fixed the oven. "}}]})

    summariser: Summariser = ChatSummariser("http://llm.local/v1", "tiny", "key", transport=httpx.MockTransport(answer))
    assert summariser.summarise(DAY) == "Tom fixed the oven."
    assert seen[0].url.path == "/v1/chat/completions" and seen[0].headers["authorization"] == "Bearer key"


def test_chat_summariser_maps_server_errors_to_unavailable() -> None:
    summariser = ChatSummariser("http://llm.local/v1", "tiny", transport=httpx.MockTransport(lambda r: httpx.Response(503)))
    with pytest.raises(EmbeddingUnavailable):
        summariser.summarise(DAY)
