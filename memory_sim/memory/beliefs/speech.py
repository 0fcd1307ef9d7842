"""A remembered line of talk, "<Name>: <words>": what the NPC said, or what it heard another NPC say. Pure.

Whose state a line sets follows from who spoke it. In a line the NPC heard, "I" is the speaker: "Kit: I've found
work on the barges" is Kit's work (`work:kit`), "Rosalind: I owe you a pie" a debt between the NPC and Rosalind
(`debt:rosalind`), and the speaker's view of a third NPC is not the NPC's own. A line the NPC said itself (or a
speaker no registered NPC answers to) reads as its own words. A line that only asks ("Where are you staying?",
"How's the new job?") sets no state: a question tells nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_sim.memory.beliefs.aspects import OWN, RELATIONAL

# "Name:" or "First Last:" opening a line, then the words
_SPEAKER = re.compile(r"^\s*([A-Z][\w'\u2019.-]*(?:\s+[A-Z][\w'\u2019.-]*){0,2})\s*:\s+(?=\S)")
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")  # one sentence and its end marks (classes apart: linear time)
_LETTER = re.compile(r"[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Line:
    """A memory's words without their speaker, and the speaker: an NPC the memory is about, or None where the
    words are the NPC's own (no speaker named, or one that is not among the NPCs the memory names)."""

    speaker: str | None
    words: str


def spoken(text: str, people: tuple[str, ...], name_words_of: dict[str, frozenset[str]]) -> Line:
    """The line `text` holds. `people`: the NPC ids the memory is about (its own NPC left out); `name_words_of`:
    each one's name words, lower case."""
    opening = _SPEAKER.match(text)
    if opening is None:
        return Line(None, text)
    said_by = frozenset(opening.group(1).lower().replace("\u2019", "'").split())
    speaker = next((p for p in people if said_by and said_by <= name_words_of.get(p, frozenset())), None)
    return Line(speaker, text[opening.end():])


def only_questions(words: str) -> bool:
    """Whether every sentence of `words` is a question."""
    sentences = [s.strip() for s in _SENTENCE.findall(words) if _LETTER.search(s)]
    return bool(sentences) and all(s.endswith("?") for s in sentences)


def heard_key(key: str | None, speaker: str) -> str | None:
    """A key read from the speaker's words ("I" the speaker, "you" the NPC) in the NPC's own terms: the speaker's
    own state keyed by the speaker (`health` -> `health:<speaker>`, `plan:fair` -> `plan:<speaker>:fair`); a tie,
    debt, trade or view between the speaker and the NPC kept; the speaker's dealings with a third NPC, none."""
    if key is None:
        return None
    aspect, *rest = key.split(":")
    if aspect in RELATIONAL:
        return key if rest == [speaker] else None
    if aspect in OWN and not rest:
        return f"{aspect}:{speaker}"
    if aspect in ("possession", "plan") and len(rest) == 1:
        return f"{aspect}:{speaker}:{rest[0]}"
    return key
