"""`recall`'s answer: extractive offline (the best candidates' summaries, as many as `responseLength` allows), or
written by an OpenAI-compatible chat model where one is configured (`ChatAnswerer`), which falls back to the
extractive answer when the model fails."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from memory_sim.errors import AiError, EmbeddingUnavailable
from memory_sim.memory.consolidation.summarise import chat_completion

log = logging.getLogger(__name__)
SENTENCES = {"short": 1, "medium": 3, "long": 8}  # how many memories an extractive answer quotes
WORDS = {"short": 40, "medium": 120, "long": 300}  # what a chat model is asked to stay within


@dataclass(frozen=True, slots=True)
class Evidence:
    """A candidate the answer may draw on: its summary, type and when it happened."""

    summary: str
    type: str
    created_at: datetime


class Answerer(Protocol):
    def answer(self, query: str, evidence: Sequence[Evidence], response_length: str, reference: datetime) -> str: ...


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def quoted(item: Evidence) -> str:
    """A summary as the answer quotes it; an event with its date."""
    if item.type != "event":
        return _sentence(item.summary)
    return f"{_sentence(item.summary)[:-1]} ({item.created_at:%Y-%m-%d})."


def extractive(evidence: Sequence[Evidence], response_length: str) -> str:
    """The best candidates' summaries, best first, as many as the response length allows; "" for none."""
    return " ".join(quoted(item) for item in evidence[: SENTENCES[response_length]])


class ExtractiveAnswerer:
    def answer(self, query: str, evidence: Sequence[Evidence], response_length: str, reference: datetime) -> str:
        return extractive(evidence, response_length)


@dataclass
class ChatAnswerer:
    """An OpenAI-compatible `/chat/completions` endpoint writes the answer from the candidates, as Cloudflare's
    synthesis does; the extractive answer stands in when it fails (unreachable, 5xx, a bad answer)."""

    base_url: str
    model: str
    api_key: str = ""
    timeout_s: float = 30.0
    client: Any = None

    def __post_init__(self) -> None:
        if self.client is None:
            import httpx

            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self.client = httpx.Client(base_url=self.base_url, timeout=self.timeout_s, headers=headers)

    def answer(self, query: str, evidence: Sequence[Evidence], response_length: str, reference: datetime) -> str:
        if not evidence:
            return ""
        memories = "\n".join(f"- {quoted(item)}" for item in evidence)
        body = {"model": self.model, "temperature": 0, "messages": [
            {"role": "system", "content": (
                "Answer the question from these memories only, in at most "
                f"{WORDS[response_length]} words. Today is {reference:%Y-%m-%d}. If they do not answer it, "
                "say what they do tell.")},
            {"role": "user", "content": f"Memories:\n{memories}\n\nQuestion: {query}"},
        ]}
        try:
            written = chat_completion(self.client, body, "the answer model").strip()
        except (AiError, EmbeddingUnavailable) as exc:
            log.warning("recall's answer model failed (%s); answering with the memories themselves", exc)
            return extractive(evidence, response_length)
        return written or extractive(evidence, response_length)

    def close(self) -> None:
        self.client.close()
