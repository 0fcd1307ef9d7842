"""Each memory's state key as `remember` stores it: the game's (confidence 1.0) where the memory names one, else
`infer_key`'s guess (memory/beliefs/keys.py), told the NPCs the memory is about (its `about` and the registered
NPCs its text names, its own NPC left out) and given the env's embedder, or none once the embedder fails. Where a
chat model is configured (settings `key_chat_url` and `key_chat_model`; off by default), it may name a better key
for each inferred one (memory/beliefs/key_chat.py); when it fails, the offline guess is stored.

The registry is read once and kept: `remember` adds no D1 statement for it. A registration made through the same
`MemorySystem` drops the copy (`KeyRegistry.drop`); one made by another process meanwhile is seen after the next
drop, so a memory naming an NPC only that process registered may get no key until then.

So are the keys each NPC holds (its states so far, infer_key's `held`): read from D1 the first time a memory of
that NPC is keyed (one statement for a batch's new NPCs), then kept up to date with the keys this process gives.
Keys another process gives meanwhile are not seen by this one, which then reads those memories as if the NPC
held no such state.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from memory_sim.bindings.d1 import D1Database
from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import AiError
from memory_sim.memory.beliefs import aspect_model
from memory_sim.memory.beliefs.key_chat import ChatKeyRefiner
from memory_sim.memory.beliefs.keys import Embed, KeyGuess, infer_key, key_text
from memory_sim.memory.beliefs.subjects import key_subjects
from memory_sim.memory.ledger import store
from memory_sim.memory.models import KeyOf, ShortTermMemory

log = logging.getLogger(__name__)
GAME, INFERRED = "game", "inferred"


class KeyRefiner(Protocol):
    """A second opinion on an inferred key (`ChatKeyRefiner`); it answers `guess` itself when it has none."""

    def refine(self, text: str, guess: KeyGuess, *, type: str, subjects: tuple[str, ...]) -> KeyGuess: ...


class KeyRegistry:
    """The registered NPCs as key inference reads them, read from D1 once and kept until `drop`, and the
    `refiner` that may refine inferred keys (None: the offline guess stands)."""

    def __init__(self, db: D1Database, refiner: KeyRefiner | None = None) -> None:
        self.db, self.refiner = db, refiner
        self._profiles: list[dict[str, Any]] | None = None
        self._held: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def profiles(self) -> list[dict[str, Any]]:
        with self._lock:
            if self._profiles is None:
                self._profiles = store.npc_profiles(self.db)
            return self._profiles

    def drop(self) -> None:
        with self._lock:
            self._profiles = None

    def held(self, npc_ids: Sequence[str]) -> dict[str, set[str]]:
        """{npc id: a copy of the keys it holds}, read from D1 for those not read before."""
        with self._lock:
            unread = [npc for npc in dict.fromkeys(npc_ids) if npc not in self._held]
        read = store.held_keys(self.db, unread) if unread else {}
        with self._lock:
            for npc, keys in read.items():
                self._held.setdefault(npc, set()).update(keys)
            return {npc: set(self._held.get(npc, ())) for npc in npc_ids}

    def hold(self, keys: Mapping[str, set[str]]) -> None:
        """Keys written since (npc id -> keys), for NPCs already read."""
        with self._lock:
            for npc, more in keys.items():
                if npc in self._held:
                    self._held[npc] |= more


@dataclass(frozen=True, eq=False)
class ModelEmbed:
    """An env's embedder as `infer_key` takes it (texts -> unit rows). `served`: vectors already made, by text,
    handed out without asking the model again (keys_for embeds a batch's texts in one call, then infers)."""

    embedder: Any
    model: str
    served: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if texts and all(text in self.served for text in texts):
            return np.stack([self.served[text] for text in texts])
        vectors: np.ndarray = self.embedder.embed(list(texts))
        return vectors

    def serving(self, texts: Sequence[str]) -> ModelEmbed:
        """This embedder with `texts` embedded in one call (each distinct text once)."""
        wanted = [text for text in dict.fromkeys(texts) if text not in self.served]
        if not wanted:
            return self
        made = dict(zip(wanted, self.embedder.embed(wanted), strict=True))
        return ModelEmbed(self.embedder, self.model, {**self.served, **made})


def env_embed(env: WorkerEnv) -> ModelEmbed | None:
    """The env's embedder for key inference; None for one whose vectors carry no meaning (its keys then come from
    structure and cue words, as without a model): the hashing test embedder says so itself (`carries_meaning`);
    any other is asked, once, to embed two paraphrase pairs (aspect_model.PROBES), so hashing vectors served
    under a real model's name are found out too. An embedder that fails to answer is tried as it comes."""
    embedder = env.embedder
    said = getattr(embedder, "carries_meaning", None)
    if said is False:
        return None
    embed = ModelEmbed(embedder, str(embedder.model))
    if said is True:
        return embed
    try:
        probes = aspect_model.probe_vectors(embed)
    except AiError:
        return embed  # keys_for meets the failure again and goes on with the cue words
    if aspect_model.carries_meaning(probes):
        return embed
    _say_once(embed.model)
    return None


_told: set[str] = set()


def _say_once(model: str) -> None:
    if model not in _told:
        _told.add(model)
        log.warning("the vectors of %s carry no meaning (paraphrases far apart): state keys come from structure "
                    "and cue words alone", model)


def configured_refiner(env: WorkerEnv) -> ChatKeyRefiner | None:
    """The chat key refiner the env's settings configure (`key_chat_url`, `key_chat_model`), or None (the default);
    it is closed with the env."""
    settings = getattr(env, "settings", None)  # an Env has its Settings; a bare WorkerEnv configures none
    url, model = getattr(settings, "key_chat_url", None), getattr(settings, "key_chat_model", None)
    if settings is None or not url or not model:
        return None
    refiner = ChatKeyRefiner(url, model, api_key=settings.key_chat_api_key, timeout_s=settings.key_chat_timeout_s)
    hooks = getattr(env, "close_hooks", None)
    if isinstance(hooks, list):
        hooks.append(refiner.close)
    return refiner


def keys_for(memories: Sequence[ShortTermMemory], registry: KeyRegistry, embed: Embed | None) -> dict[str, KeyOf]:
    """{memory id: its key} for the memories that have one (a summary has none); the game's "no key"
    (`infer_key=False`) is kept as a NULL key from the game, and its state values with its keys. The texts whose
    meaning is read (those structure leaves open: keys.key_text) are embedded in one call first; a text the index
    embeds too is found in the embedder's cache there, so one forward pass serves both. Each memory is read
    knowing the keys its NPC holds: those D1 holds and those of the batch's memories before it."""
    inferred = [m for m in memories if m.state_key is None and m.infer_key and m.kind == "observation"]
    profiles = registry.profiles()
    subjects = {m.id: key_subjects(m.npc_id, m.about, m.content, profiles) for m in inferred}
    names = {str(p["npc_id"]): str(p.get("name") or p["npc_id"]) for p in profiles}  # "npc_0042" is "Margaret"
    if isinstance(embed, ModelEmbed):
        embed = _served(embed, [key_text(m.content, type=m.type, subjects=subjects[m.id], names=names)
                                for m in inferred])
    out = {m.id: KeyOf(m.state_key, 1.0, GAME, m.state_value) for m in memories
           if m.state_key is not None or not m.infer_key}
    held = registry.held([m.npc_id for m in inferred]) if inferred and embed is not None else {}
    for m in memories:
        if m.id in subjects:  # one of `inferred`
            guess, embed = _guess(m, subjects[m.id], embed, names, held.get(m.npc_id, set()))
            if registry.refiner is not None:
                guess = _refined(registry.refiner, m, guess, subjects[m.id])
            if guess.key is not None:
                out[m.id] = KeyOf(guess.key, guess.confidence, INFERRED, m.state_value)
        if m.id in out and out[m.id].key is not None:
            held.setdefault(m.npc_id, set()).add(str(out[m.id].key))
    registry.hold(held)
    return out


def _served(embed: ModelEmbed, texts: Sequence[str | None]) -> ModelEmbed | None:
    """The embedder with the batch's texts embedded; None (the cue words decide) once it fails."""
    try:
        return embed.serving([text for text in texts if text is not None])
    except AiError as exc:
        log.warning("key inference goes on without the embedder: %s", exc)
        return None


def _guess(m: ShortTermMemory, subjects: tuple[str, ...], embed: Embed | None, names: Mapping[str, str],
           held: set[str]) -> tuple[KeyGuess, Embed | None]:
    """infer_key with the embedder; without it (and for the rest of the batch) once it fails."""
    if embed is not None:
        try:
            return infer_key(m.content, type=m.type, subjects=subjects, embed=embed, names=names,
                             held=held), embed
        except AiError as exc:
            log.warning("key inference goes on without the embedder: %s", exc)
    return infer_key(m.content, type=m.type, subjects=subjects, names=names), None


def _refined(refiner: KeyRefiner, m: ShortTermMemory, guess: KeyGuess, subjects: tuple[str, ...]) -> KeyGuess:
    """The refiner's key; the offline guess where it fails (the memory is stored either way)."""
    try:
        return refiner.refine(m.content, guess, type=m.type, subjects=subjects)
    except AiError as exc:
        log.warning("key refiner failed, the offline key stands: %s", exc)
        return guess
