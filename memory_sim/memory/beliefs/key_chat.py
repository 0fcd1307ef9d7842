"""An OpenAI-compatible chat model's word on a memory's state key, where one is configured (as `ChatSummariser`
does for summaries): `infer_key` guesses offline, the model may name another key of the same vocabulary.

Degrades, never loses: an outage, an HTTP error, or an answer that is not a key of the vocabulary (a wrong
shape, an aspect it does not have, an NPC the memory does not name) leaves the offline guess, and `fallbacks`
counts it. After an outage (unreachable, timed out, 5xx, 429) the model is not asked again for `rest_s` seconds,
so a batch of memories does not wait out one timeout each. The offline default reaches its figures alone
(benchmarks/state_keys.md); this is a refinement.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from memory_sim.errors import AiError, EmbeddingUnavailable, InvalidInput
from memory_sim.memory import rules
from memory_sim.memory.beliefs.aspects import OWN, RELATIONAL, THINGS
from memory_sim.memory.beliefs.keys import KeyGuess
from memory_sim.memory.consolidation.summarise import chat_completion

log = logging.getLogger(__name__)
CHAT_CONFIDENCE = 0.8  # how sure a key the model names is taken to be
VOCABULARY = (
    "opinion:<npc> (how I regard and get on with them: trust, liking, friendship, a feud, making peace); "
    "relationship:<npc> (courting, engaged, married, separated); debt:<npc> (what is owed either way, and its "
    "settling); trade:<npc> (whether and how we do business); health, home, whereabouts (where I am for a while), "
    "work (each of mine, or <aspect>:<npc> for another NPC's); possession:<thing>; plan:<thing> (what the plan "
    "is for); place:<thing> (the condition of a place); none (kinship, habits, one-off events: no state)"
)


class ChatKeyRefiner:
    """`refine(text, guess, type=..., subjects=...)` over `POST {base_url}/chat/completions` (llama.cpp's
    `llama-server`, vLLM, Ollama, LM Studio, OpenAI). `transport` is httpx's seam."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *, timeout_s: float = 30.0,
                 transport: Any = None, rest_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model, self.fallbacks = model, 0
        self.rest_s, self._clock, self._down_until = rest_s, clock, float("-inf")
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s,
                                    transport=transport)

    @staticmethod
    def prompt(text: str, guess: KeyGuess, *, type: str, subjects: tuple[str, ...]) -> str:
        npcs = ", ".join(subjects) or "none"
        return (
            "Which piece of state does this memory of a village character set? Two memories get the same key "
            "exactly when the newer replaces the older. Keys: " + VOCABULARY + ". <npc> is one of the ids "
            f"named here; <thing> one lower-case noun. Answer with the key only, or none.\nMemory ({type}): "
            f"{text}\nNPC ids it names: {npcs}\nA rule guessed: {guess.key or 'none'}"
        )

    def refine(self, text: str, guess: KeyGuess, *, type: str, subjects: tuple[str, ...]) -> KeyGuess:
        """The model's key for the memory, or `guess` where the model gives no usable answer."""
        if self._clock() < self._down_until:
            return self._fallback(guess, "chat key refiner resting after an outage, the offline guess stands")
        try:
            answer = self._ask(self.prompt(text, guess, type=type, subjects=subjects))
        except EmbeddingUnavailable as exc:  # unreachable or overloaded: rest a while
            self._down_until = self._clock() + self.rest_s
            return self._fallback(guess, f"chat key refiner unavailable, the offline guess stands: {exc}")
        except AiError as exc:
            return self._fallback(guess, f"chat key refiner failed, the offline guess stands: {exc}")
        word = answer.strip().strip("`'\".").lower()
        if word == "none":
            return KeyGuess(None, CHAT_CONFIDENCE, "the chat model: sets no state")
        if not well_formed(word, subjects):
            return self._fallback(guess, f"chat key refiner answered no key of the vocabulary ({answer[:80]!r})")
        return KeyGuess(word, CHAT_CONFIDENCE, f"the chat model (the rule guessed {guess.key})")

    def _fallback(self, guess: KeyGuess, message: str) -> KeyGuess:
        self.fallbacks += 1
        log.warning("%s", message)
        return guess

    def _ask(self, prompt: str) -> str:
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 16,
                "temperature": 0}
        return chat_completion(self._client, body, "key refiner")

    def close(self) -> None:
        self._client.close()


def well_formed(key: str, subjects: tuple[str, ...]) -> bool:
    """A key of the vocabulary: valid syntax, a known aspect, and only NPCs the memory names."""
    try:
        rules.state_key(key)
    except InvalidInput:
        return False
    aspect, *rest = key.split(":")
    if aspect in RELATIONAL:
        return len(rest) == 1 and rest[0] in subjects
    if aspect in OWN:
        return not rest or (len(rest) == 1 and rest[0] in subjects)
    if aspect in THINGS:
        return len(rest) == 1 and bool(rest[0]) or (len(rest) == 2 and rest[0] in subjects and bool(rest[1]))
    return False
