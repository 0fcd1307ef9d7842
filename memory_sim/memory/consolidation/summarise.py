"""Condensing a day into one or two sentences.

The default is extractive and offline: each passage (a memory's text) is scored by its centrality (mean
word-overlap cosine with the others, so what the day keeps coming back to wins) and its importance, and the
best one or two are returned in their original order. `ChatSummariser` asks an OpenAI-compatible chat endpoint
instead, falling back to the extractive summary when it fails; it is opt-in, and nothing else changes when it is
plugged in. What is done with the result (linked or stored, lineage, type) is memory/consolidation/condense.py's.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from memory_sim.errors import AiError, EmbeddingUnavailable

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-z']+")
_STOP = frozenset(
    "a an the and or but of to in on at for with by from is was were be been it its this that i me my we our "
    "he she him her his they them their you your as so not no".split()
)

Sentence = tuple[str, float]  # a passage (consolidation passes each memory's text) and its importance 0..1
log = logging.getLogger(__name__)


@runtime_checkable
class Summariser(Protocol):
    def summarise(self, sentences: Sequence[Sentence], max_sentences: int = 2) -> str: ...


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _bag(text: str) -> Counter[str]:
    return Counter(w for w in _WORD.findall(text.lower()) if w not in _STOP)


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(count * b[word] for word, count in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def centrality(texts: Sequence[str]) -> list[float]:
    """Mean cosine of each sentence with the others; a lone sentence is fully central."""
    bags = [_bag(t) for t in texts]
    if len(bags) == 1:
        return [1.0]
    return [sum(_cosine(b, o) for j, o in enumerate(bags) if j != i) / (len(bags) - 1) for i, b in enumerate(bags)]


class ExtractiveSummariser:
    """The most central, most important sentences, in their original order. Deterministic and offline."""

    def __init__(self, centrality_weight: float = 0.5) -> None:
        self.centrality_weight = centrality_weight

    def summarise(self, sentences: Sequence[Sentence], max_sentences: int = 2) -> str:
        unique = list(dict.fromkeys((t.strip(), i) for t, i in sentences if t.strip()))
        if not unique:
            return ""
        texts = [t for t, _ in unique]
        central = centrality(texts)
        scores = [
            (1 - self.centrality_weight) * imp + self.centrality_weight * c
            for (_, imp), c in zip(unique, central, strict=True)
        ]
        best = sorted(range(len(texts)), key=lambda i: (-scores[i], i))[:max_sentences]
        return " ".join(texts[i] for i in sorted(best))


_EXTRACTIVE = ExtractiveSummariser()

class ChatSummariser:
    """Any OpenAI-compatible `POST {base_url}/chat/completions` endpoint over httpx: a local llama.cpp
    `llama-server`, vLLM, Ollama, LM Studio, or OpenAI itself (`base_url` ends in `/v1`).

    Degrades, never loses: when the endpoint is unreachable, slower than `timeout_s`, answers an HTTP error, or
    answers something that is not a summary, the day is condensed by `fallback` (the extractive summariser) and
    `fallbacks` counts it. `fallback=None` raises instead (`EmbeddingUnavailable` for outages, `AiError` for
    the rest), and consolidation leaves the day for its next run. `transport` is httpx's seam.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 30.0,
        max_tokens: int = 160,
        fallback: Summariser | None = _EXTRACTIVE,
        transport: Any = None,
    ) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model, self.max_tokens, self.fallback, self.fallbacks = model, max_tokens, fallback, 0
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s, transport=transport
        )

    def _prompt(self, sentences: Sequence[Sentence], max_sentences: int) -> str:
        lines = "\n".join(f"- ({imp:.2f}) {text}" for text, imp in sentences)
        return (
            f"Condense this character's day into at most {max_sentences} sentences in the first person, keeping "
            f"what matters most (importance in brackets) and adding nothing that did not happen. Answer with the "
            f"sentences only.\n{lines}"
        )

    def summarise(self, sentences: Sequence[Sentence], max_sentences: int = 2) -> str:
        try:
            return self._ask(sentences, max_sentences)
        except AiError as exc:
            if self.fallback is None:
                raise
            self.fallbacks += 1
            log.warning("chat summariser failed, the extractive summary is used instead: %s", exc)
            return self.fallback.summarise(sentences, max_sentences)

    def _ask(self, sentences: Sequence[Sentence], max_sentences: int) -> str:
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": self._prompt(sentences, max_sentences)}],
            "max_tokens": self.max_tokens,
            "temperature": 0,
        }
        content = chat_completion(self._client, body, "summariser")
        if not content.strip():
            raise AiError("summariser answered no text")
        return content.strip()

    def close(self) -> None:
        self._client.close()


def chat_completion(client: Any, body: dict[str, Any], who: str) -> str:
    """The text an OpenAI-compatible server answers to `body` at /chat/completions (an `httpx.Client` with its
    base URL). Unreachable, 5xx or 429: EmbeddingUnavailable (try again later); any other failure: AiError."""
    import httpx

    try:
        response = client.post("/chat/completions", json=body)
    except httpx.HTTPError as exc:  # refused, reset, timed out
        raise EmbeddingUnavailable(f"{who} unreachable: {type(exc).__name__}: {exc}") from exc
    if response.status_code >= 500 or response.status_code == 429:
        raise EmbeddingUnavailable(f"{who} failed with HTTP {response.status_code}")
    if response.status_code >= 400:
        raise AiError(f"{who} rejected the request: HTTP {response.status_code}: {response.text[:200]}")
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise AiError(f"{who} answered an unexpected shape: {response.text[:200]}") from exc
    if not isinstance(content, str):
        raise AiError(f"{who} answered no text: {response.text[:200]}")
    return content
