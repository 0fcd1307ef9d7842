"""Condensing a day into one or two sentences.

The default is extractive and offline: each sentence is scored by its centrality (mean word-overlap cosine
with the other sentences, so what the day keeps coming back to wins) times its importance, and the best
one or two are returned in their original order. `ChatSummariser` asks an OpenAI-compatible chat endpoint
instead; it is opt-in, and nothing else changes when it is plugged in.
"""

from __future__ import annotations

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

Sentence = tuple[str, float]  # text, importance 0..1


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


class ChatSummariser:
    """An OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama, vLLM, LM Studio...) over httpx.

    `transport` is httpx's seam: tests pass an `httpx.MockTransport` instead of patching the network.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 30.0,
        transport: Any = None,
    ) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s, transport=transport
        )

    def _prompt(self, sentences: Sequence[Sentence], max_sentences: int) -> str:
        lines = "\n".join(f"- ({imp:.2f}) {text}" for text, imp in sentences)
        return (
            f"Condense this character's day into at most {max_sentences} sentences, keeping what matters most "
            f"(importance in brackets). Answer with the sentences only.\n{lines}"
        )

    def summarise(self, sentences: Sequence[Sentence], max_sentences: int = 2) -> str:
        import httpx

        body = {"model": self.model, "messages": [{"role": "user", "content": self._prompt(sentences, max_sentences)}]}
        try:
            response = self._client.post("/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise EmbeddingUnavailable(f"summariser unreachable: {exc}") from exc
        if response.status_code >= 500 or response.status_code == 429:
            raise EmbeddingUnavailable(f"summariser failed with HTTP {response.status_code}")
        if response.status_code >= 400:
            raise AiError(f"summariser rejected the request: HTTP {response.status_code}: {response.text[:200]}")
        try:
            return str(response.json()["choices"][0]["message"]["content"]).strip()
        except (KeyError, IndexError, ValueError) as exc:
            raise AiError(f"summariser answered an unexpected shape: {response.text[:200]}") from exc
