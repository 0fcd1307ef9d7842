"""An OpenAI-compatible chat model's word on the detector's pairs, where one is configured (as `ChatSummariser`
does for summaries): the offline rule (detect.py) proposes, the model disposes.

The pairs asked about are those the rule would link on some topic (same NPC, type and subject, with a turn or a
change cue): the model may confirm or refuse a link, and may link a pair whose embeddings the rule found too far
apart. It never links a pair the rule did not propose. Degrades, never loses: an outage, an HTTP error or an
answer that is not yes or no leaves the rule's verdict for that pair, and `fallbacks` counts it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from memory_sim.errors import AiError
from memory_sim.memory.beliefs.detect import Belief
from memory_sim.memory.consolidation.summarise import chat_completion

log = logging.getLogger(__name__)
MAX_PAIRS = 8  # a recall asks about at most this many pairs; the rest keep the rule's verdict


class ChatJudge:
    """`judge(pairs)` over `POST {base_url}/chat/completions` (llama.cpp's `llama-server`, vLLM, Ollama, LM
    Studio, OpenAI). `transport` is httpx's seam."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *, timeout_s: float = 30.0,
                 transport: Any = None) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model, self.fallbacks = model, 0
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s,
                                    transport=transport)

    @staticmethod
    def prompt(newer: Belief, older: Belief) -> str:
        return (
            "Two memories of one character, the older first. Does the newer one correct or update the older one, "
            "so that the older no longer holds (a changed opinion, a debt paid, a move, a recovery)? Answer yes or "
            f"no.\nOlder (day {older.hours // 24}): {older.text}\nNewer (day {newer.hours // 24}): {newer.text}"
        )

    def judge(self, pairs: Sequence[tuple[Belief, Belief]]) -> list[bool | None]:
        """For each (newer, older): True (it supersedes), False (it does not) or None (no usable answer)."""
        return [self._one(newer, older) if i < MAX_PAIRS else None for i, (newer, older) in enumerate(pairs)]

    def _one(self, newer: Belief, older: Belief) -> bool | None:
        try:
            answer = self._ask(self.prompt(newer, older)).strip().lower()
        except AiError as exc:
            self.fallbacks += 1
            log.warning("chat judge failed, the offline rule's verdict stands: %s", exc)
            return None
        word = answer.split()[0].strip(".,!:;\"'") if answer.split() else ""
        if word not in ("yes", "no"):
            self.fallbacks += 1
            log.warning("chat judge answered neither yes nor no (%r); the offline rule's verdict stands", answer[:80])
            return None
        return word == "yes"

    def _ask(self, prompt: str) -> str:
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 4,
                "temperature": 0}
        return chat_completion(self._client, body, "judge")

    def close(self) -> None:
        self._client.close()
