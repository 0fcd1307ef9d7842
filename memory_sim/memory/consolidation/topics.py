"""Grouping a day's memories by what they are about, so that one summary says one thing. Pure: no I/O.

A memory's subjects are, first, the registered NPCs its text names by id, name, alias or role (`Names`: "the
baker" and "Hilda" are both 'hilda'); else the NPCs it is filed `about`; else the other proper names in its
text (a place, someone unregistered: a capitalised word inside a sentence, or a sentence's first word when it
is possessive, "Hilda's pies"). The text comes first because a summary quotes texts: a memory filed `about` one
NPC that names another would otherwise carry that other into its summary; and a place named beside an NPC is
where something happened, not what it is about.

Topics are made in order of importance, the most important memory of each seeding it:
- a memory with subjects joins the first topic whose seed shares one (the seed's, not the topic's growing set,
  so "Tom", "Tom and Rose", "Rose" do not chain into one topic), else it seeds a topic of its own;
- a memory with none joins the topic holding its most similar memory, when that similarity reaches the
  threshold, else it seeds a topic of its own. Similarity is the cosine of the two memories' vectors where both
  have one (consolidation passes those it has without a model call), else the cosine of their content words;
- memories naming different subjects never share a topic, however alike their words ("Tom is kind", "Agnes is
  kind").
Topics come back most important seed first, each topic's memories in the order given.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memory_sim.memory.models import StoredMemory

_WORD = re.compile(r"[a-z]+")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_STOP = frozenset(
    "a an the and or but of to in on at for with by from is was were be been it its this that i me my we our he "
    "she him her his they them their you your as so not no all up out about after again over too very just then "
    "there here what when who how why s".split()
)
# capitalised words that name no one even inside a sentence
_NOT_NAMES = frozenset("i i'm i've i'd i'll god mr mrs miss sir lady lord".split())


@dataclass(frozen=True, slots=True)
class TopicParams:
    """How alike two memories must be for one naming no one to join another's topic: `min_cosine` for
    embeddings (MiniLM / BGE: unrelated sentences score 0.0-0.35), `min_overlap` for content words."""

    min_cosine: float = 0.5
    min_overlap: float = 0.25


@dataclass(frozen=True, slots=True)
class Names:
    """Who the registered NPCs are, as texts name them: NPC id -> the lower-cased names, aliases and role."""

    known: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(cls, npcs: Sequence[tuple[str, Sequence[str]]]) -> Names:
        """From (id, [name, alias..., role]) pairs; blank labels are dropped."""
        return cls({npc_id: tuple(_phrase(n) for n in (npc_id, *labels) if _phrase(n)) for npc_id, labels in npcs})

    def named_in(self, words: str) -> set[str]:
        """The NPC ids whose id, name, alias or role appears whole in `words` (lower-cased, space-joined)."""
        padded = f" {words} "
        return {npc_id for npc_id, names in self.known.items() if any(f" {n} " in padded for n in names)}


NO_NAMES = Names({})


def _phrase(text: str) -> str:
    return " ".join(_WORD.findall(text.lower().replace("'s ", " ")))


def _plain(token: str) -> str:
    """A token without a possessive ending: "Hilda's" -> "hilda"."""
    return re.sub(r"['\u2019]s$|['\u2019]$", "", token).lower()


def proper_names(text: str) -> set[str]:
    """Capitalised words that name someone or somewhere: inside a sentence, or first and possessive."""
    found: set[str] = set()
    for sentence in _SENTENCE.split(text.strip()):
        for position, token in enumerate(_TOKEN.findall(sentence)):
            word = _plain(token)
            first_plain = position == 0 and word == token.lower()
            if token[0].isupper() and not first_plain and word not in _NOT_NAMES and word not in _STOP:
                found.add(word)
    return found


def subjects(memory: StoredMemory, names: Names = NO_NAMES) -> frozenset[str]:
    """Who and what the memory is about (see the module's docstring): NPC ids for registered NPCs, "~word" for
    another proper name; its `about` when its text names no one."""
    named = names.named_in(_phrase(memory.content))
    spelled = {word for npc in named for name in names.known[npc] for word in name.split()}
    if named or memory.about:  # a place named beside an NPC is where it happened, not what it is about
        return frozenset(named or memory.about)
    return frozenset(f"~{w}" for w in proper_names(memory.content) if w not in spelled)


def _bag(text: str) -> Counter[str]:
    return Counter(_plain(w) for w in _TOKEN.findall(text) if _plain(w) not in _STOP)


def _word_cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(count * b[word] for word, count in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def group_by_topic(
    memories: Sequence[StoredMemory],
    names: Names = NO_NAMES,
    vectors: Mapping[str, np.ndarray] | None = None,
    params: TopicParams = TopicParams(),
) -> list[tuple[StoredMemory, ...]]:
    """The memories split into topics (see the module's docstring); `vectors` by memory id, unit length."""
    given = {m.id: i for i, m in enumerate(memories)}
    about = {m.id: subjects(m, names) for m in memories}
    bags = {m.id: _bag(m.content) for m in memories}
    vectors = vectors or {}

    def alike(a: StoredMemory, b: StoredMemory) -> bool:
        if a.id in vectors and b.id in vectors:
            return float(np.dot(vectors[a.id], vectors[b.id])) >= params.min_cosine
        return _word_cosine(bags[a.id], bags[b.id]) >= params.min_overlap

    def similarity(a: StoredMemory, b: StoredMemory) -> float:
        if a.id in vectors and b.id in vectors:
            return float(np.dot(vectors[a.id], vectors[b.id]))
        return _word_cosine(bags[a.id], bags[b.id])

    topics: list[_Topic] = []
    for m in sorted(memories, key=lambda m: (-m.importance, given[m.id])):
        mine = about[m.id]
        home = next((t for t in topics if t.key & mine), None) if mine else None
        if home is None:  # by likeness, into a topic naming no one yet (or any topic, for a memory naming no one)
            near = [(similarity(m, o), i) for i, t in enumerate(topics) if not (mine and t.key)
                    for o in t.members if alike(m, o)]
            home = topics[max(near)[1]] if near else None
        if home is None:
            topics.append(_Topic(mine, [m]))
        else:
            home.members.append(m)
            home.key = home.key or mine
    return [tuple(sorted(t.members, key=lambda m: given[m.id])) for t in topics]


@dataclass(slots=True)
class _Topic:
    key: frozenset[str]  # the subjects of its first memory that has any
    members: list[StoredMemory]
