"""Whether a newer memory supersedes an older one: the offline rule (pure, no I/O).

A newer memory supersedes an older one of the same NPC when both are of the same type, about the same subject
(the NPCs they are `about`, or else the registered names, aliases and roles their texts name; a memory that
names no NPC is never linked: a conversation's turns, the weather and the roads share topics, not beliefs, and
linking them moved later turns above the evidence LoCoMo's questions ask for), and the newer one
either turns the older's opinion (one is warm, the other cold: "Cora sold me a remedy that did nothing" ->
"The herbalist cured my fever") or carries a change cue ("now", "no longer", "at last", "paid", "changed my
mind"...) on the same topic (embedding cosine similarity at least `UPDATE_SIMILARITY`). An opinion or a
relationship is one belief per subject, so a turn needs no topic check; an event or place is one of many facts
about its subject, so a turn there must be on the same topic too (`TURN_SIMILARITY`).

Measured on tests/memory/data/supersession_pairs.json (tests/memory/test_supersession_detector.py holds the
floors).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Reason = Literal["turn", "update", "judged"]  # judged: a chat model said so (chat.py)
ONE_BELIEF_PER_SUBJECT = ("opinion", "relationship")
TURN_SIMILARITY = 0.55  # an event's or place's turn: the same topic (all-MiniLM-L6-v2 cosine)
UPDATE_SIMILARITY = 0.6  # a change cue without a turn: a closer topic

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_NEGATORS = frozenset(
    "not no never nothing don't doesn't didn't isn't aren't wasn't won't can't cannot couldn't haven't hasn't "
    "hardly nobody".split()
)
_NEGATION_REACH = 3  # a negator turns the sentiment of the next few words ("not at all kind")
_WARM = frozenset(
    "honest kind kindness good fine best reliable admire admired trust trusted trusts trustworthy friend "
    "friends friendly generous gentle gentler cured helped thanked pleasant brave braver careful forgave forgive "
    "paid settled recovered mended love loves like likes great decent heart hardworking harder listens stay "
    "welcome grateful better clear open dry praise praised loyal".split()
)
_COLD = frozenset(
    "distrust rude fraud cheat cheats cheated liar lied lies lazy loud careless broke useless worst stale "
    "overcharges overcharged owes owe owed debt angry cross quarrel quarrelled odds refuses refused sick ill "
    "flooded closed coward stingy shortchanged galls struts cruel mean complains unkind "
    "dishonest leaving hate hates pond rot rots dear".split()
)
_WARM_PHRASES = ("made up", "good terms", "hard working", "a good heart", "will not take a penny",
                 "would not take a penny")
_COLD_PHRASES = ("too much", "did nothing", "tired of", "says one thing", "pond water", "waters down", "water down")
_CUES = (
    "now", "no longer", "anymore", "any more", "at last", "finally", "after all", "changed my mind", "was wrong",
    "since", "recovered", "paid", "settled", "made up", "forgave", "moved", "instead", "turns out", "no more",
    "these days", "lately", "has become", "have become", "has grown", "than i thought", "decided",
)
_REVISIONS = ("was wrong about", "were wrong about", "changed my mind", "misjudged")  # a turn from whatever was thought


@dataclass(frozen=True, slots=True)
class Belief:
    """What the detector reads of a memory: whose, its type, when (`hours` since day 0, for order), its text and
    its subjects (NPC ids)."""

    id: str
    npc_id: str
    type: str
    hours: int
    text: str
    subjects: frozenset[str]


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def _phrase_in(phrase: str, joined: str) -> bool:
    return f" {phrase} " in joined


def polarity(text: str) -> int:
    """+1 warm, -1 cold, 0 neither or both equally: the sign of the sentiment words, each turned by a negator in
    the few words before it ("not unkind" is warm, "can't trust" cold)."""
    tokens = words(text)
    joined = f" {' '.join(tokens)} "
    total = sum(1 for p in _WARM_PHRASES if _phrase_in(p, joined)) - sum(
        1 for p in _COLD_PHRASES if _phrase_in(p, joined))
    for i, token in enumerate(tokens):
        sign = 1 if token in _WARM else -1 if token in _COLD else 0
        if sign and any(t in _NEGATORS or t.endswith("n't") for t in tokens[max(0, i - _NEGATION_REACH):i]):
            sign = -sign
        total += sign
    return (total > 0) - (total < 0)


def change_cue(text: str) -> bool:
    """Whether the text says something changed ("now", "no longer", "at last", "paid", "changed my mind"...)."""
    joined = f" {' '.join(words(text))} "
    return any(_phrase_in(cue, joined) for cue in _CUES)


def revises(text: str) -> bool:
    """Whether the text takes back an earlier opinion ("I was wrong about her", "I changed my mind")."""
    joined = f" {' '.join(words(text))} "
    return any(_phrase_in(phrase, joined) for phrase in _REVISIONS)


def subjects(about: Sequence[str], text: str, profiles: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """The NPCs a memory is about: its `about` ids when given, else the registered NPCs its text names (by id,
    name, alias or role, whole words: "the miller" names the NPC registered with role "the miller")."""
    if about:
        return frozenset(about)
    joined = f" {' '.join(words(text))} "
    return frozenset(str(p["npc_id"]) for p in profiles if any(_phrase_in(n, joined) for n in _names_of(p)))


def _names_of(profile: Mapping[str, Any]) -> list[str]:
    aliases = str(profile.get("aliases") or "").split(",")
    found = [str(profile.get("npc_id") or ""), str(profile.get("name") or ""), *aliases, str(profile.get("role") or "")]
    return [" ".join(words(n)) for n in found if words(n)]


def supersedes(newer: Belief, older: Belief, similarity: float) -> Reason | None:
    """Whether `newer` corrects or updates `older` (the rule in this module's docstring): "turn", "update" or
    None. `similarity` is the cosine similarity of their embeddings."""
    if newer.npc_id != older.npc_id or newer.type != older.type or newer.hours <= older.hours:
        return None
    if not newer.subjects or newer.subjects != older.subjects:
        return None  # a memory naming no NPC (the weather, a road) is about no one the rule can tell apart
    before = polarity(older.text)
    turned = polarity(newer.text) * before < 0 or (before != 0 and revises(newer.text))
    if turned and (newer.type in ONE_BELIEF_PER_SUBJECT or similarity >= TURN_SIMILARITY):
        return "turn"
    if change_cue(newer.text) and similarity >= UPDATE_SIMILARITY:
        return "update"
    return None


def might_supersede(newer: Belief, older: Belief) -> bool:
    """The rule's checks that need no embedding: callers embed only the pairs that pass."""
    return (newer.npc_id == older.npc_id and newer.type == older.type and newer.hours > older.hours
            and bool(newer.subjects) and newer.subjects == older.subjects)


Similarity = Callable[[Sequence[tuple[Belief, Belief]]], Sequence[float]]
Refine = Callable[[Sequence[tuple[Belief, Belief]]], Sequence[bool | None]]


def links(
    beliefs: Iterable[Belief], similarity: Similarity, refine: Refine | None = None
) -> dict[str, tuple[str, Reason]]:
    """For each belief a later one supersedes: the id of the earliest such (the first correction), and why.
    `similarity` scores the candidate pairs (newer, older) in one call, asked only where the verdict turns on the
    topic. `refine` (a chat model, chat.py) gives its verdict on the pairs the rule would link on some topic:
    True or False overrules the rule, None leaves it."""
    ordered = sorted(beliefs, key=lambda b: (b.hours, b.id))
    pairs = [(n, o) for i, o in enumerate(ordered) for n in ordered[i + 1:] if might_supersede(n, o)]
    settled = {(n.id, o.id): supersedes(n, o, 1.0) for n, o in pairs if supersedes(n, o, 1.0) == supersedes(n, o, -1.0)}
    open_pairs = [(n, o) for n, o in pairs if (n.id, o.id) not in settled]
    scored = dict(zip([(n.id, o.id) for n, o in open_pairs], similarity(open_pairs), strict=True)) if open_pairs else {}
    verdicts = {(n.id, o.id): settled[(n.id, o.id)] if (n.id, o.id) in settled
                else supersedes(n, o, float(scored[(n.id, o.id)])) for n, o in pairs}
    if refine is not None:
        proposed = [(n, o) for n, o in pairs if supersedes(n, o, 1.0) is not None]
        for (newer, older), said in zip(proposed, refine(proposed) if proposed else [], strict=True):
            if said is not None:
                verdicts[(newer.id, older.id)] = "judged" if said else None
    out: dict[str, tuple[str, Reason]] = {}
    for newer, older in pairs:
        reason = verdicts[(newer.id, older.id)]
        if reason is not None and older.id not in out:
            out[older.id] = (newer.id, reason)
    return out
