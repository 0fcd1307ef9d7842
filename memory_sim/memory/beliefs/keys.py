"""Which piece of state a memory sets: its state key ("opinion:tom", "debt:mira", "health", "home").

The newest memory of an NPC under a key is that NPC's current state; older memories under the same key are its
history. The game names the key where it knows it (`ShortTermMemory.state_key`); otherwise `infer_key` guesses it
when the memory is written, structure first (the memory's type and the one NPC it is about), then meaning, and
says how sure it is. Pure: the caller resolves the NPCs a text names and passes an embedding function if any.

Granularity is the point of a key: two memories share a key exactly when the newer one replaces the older (an
update), and get different keys when both stay true (a kinship fact and a new shared habit; owning a horse and
owning a cart; a plan to visit the fair and a plan to fix the roof).

The vocabulary (`<npc>` is an NPC id, `<thing>` a lower-case noun such as "horse", "cart", "fair", "roof"):

Between the NPC and one other NPC, `<aspect>:<npc>`:
- `opinion:<npc>`: how the NPC regards and gets on with them: trust, liking, respect, contempt, suspicion, and
  the standing that goes with it: friends, a quarrel or feud, making peace. ("I don't trust Cole", "Tom and I
  shook hands over the boundary stones")
- `relationship:<npc>`: a tie held one at a time: courting, engaged, married, separated, a match broken off.
- `debt:<npc>`: what is owed between them, either way: a loan, an unpaid bill, its settling or forgiving.
- `trade:<npc>`: whether and how they do business: a regular supplier or buyer, a refusal or vow not to trade.
- never a key: kinship ("Tom is my mother's brother") and other facts that never stop being true, shared
  habits and one-off events ("Tom and I fish at the weir on Sundays", "I sold Hilda a basket of apples").

The NPC's own state (about another NPC, `<aspect>:<npc>`: "health:tom" is Tom's health as the NPC knows it):
- `health`: ill, injured, recovering, well.
- `home`: where the NPC lives.
- `whereabouts`: where the NPC is for a while, away from home (travelling, staying with someone).
- `work`: the NPC's job, trade or master.
- `possession:<thing>`: having, losing, finding, selling or lending a thing, one key per kind of thing
  ("possession:horse" for a stallion or a pony).
- `plan:<thing>`: an intention, its change, cancelling or putting off, keyed by what it is for ("plan:fair",
  "plan:roof").

The world: `place:<thing>`: the condition of a place (a washed-out bridge, a dry well, a blocked road).

Other memories (events, opinions of things, facts) set no state: key None. Another NPC's possession or plan
is `possession:<npc>:<thing>`, `plan:<npc>:<thing>`.

How a key is inferred. Structure first: kinship sets none; an opinion memory about one NPC is `opinion:<npc>`;
a talk about a topic (a thing, not a person) sets none unless a cue word outside the topic names a state;
a relational aspect needs exactly one other NPC, and a tie, debt or trade needs the NPC in it (a relationship
memory or a first-person word); a relationship memory sets no own state of the NPC's, a place memory only a
home, a whereabouts or a place's condition; whose own state it is follows from the text (one NPC named, no
first-person word, the name opening it: "Tom is ill" is `health:tom`). Then meaning: the aspect model
(aspect_model.py, a softmax regression over the sentence embedding, cue words and type, fitted on the labelled
set's tuning half) scores the aspects the structure allows, and its probability among them is the confidence;
without an embedder the cue words (aspects.py) decide. A thing comes from the text's noun phrases (things.py).
A key below CONFIDENCE_FLOOR is not given. No change words ("now", "no longer", "at last") are read: a memory
sets a state by what it says. Measured in benchmarks/state_keys.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memory_sim.errors import AiError
from memory_sim.memory.beliefs.aspect_model import probabilities
from memory_sim.memory.beliefs.aspects import (
    ASPECTS,
    BODY_PARTS,
    CUES,
    KINSHIP,
    NEUTRAL_NAME,
    NONE,
    OWN,
    PLACE_NOUNS,
    RELATIONAL,
    SPOKEN,
)
from memory_sim.memory.beliefs.speech import Line, heard_key, only_questions, spoken
from memory_sim.memory.beliefs.things import (
    DETERMINERS,
    ERRAND_WORDS,
    TIME_WORDS,
    acted_on,
    called_off,
    canonical,
    destination,
    object_of,
    phrase_heads,
    replaced,
    saved_for,
    tokens,
)
from memory_sim.memory.rules import STATE_KEY_MAX_BYTES

# Texts -> unit-length row vectors (the memory system's embedder); None where no model is at hand.
Embed = Callable[[Sequence[str]], np.ndarray]

CONFIDENCE_FLOOR = 0.3  # below it the guess is not a key
# A held key (infer_key's `held`) is taken for an aspect with this share of the model's probability among the
# aspects the structure allows (chosen on the tuning and validation pairs: at 0.2 and below, compatible pairs
# began to be linked).
HELD_SHARE = 0.3
THING_ASPECTS = frozenset({"possession", "plan", "place"})
# Aspects whose thing the grammar guesses (a plan's aim, a possession's object), so a held thing the text names may
# be the better reading; a place is the first place the line names, and a place named after it is another place.
_THING_GUESSED = frozenset({"possession", "plan"})
CUE_WEIGHT = 0.25  # a cue word of an aspect adds this to its similarity
SECOND_CUE_WEIGHT = 0.1  # and a second, different one this
# The memory's type leans toward its aspects: an opinion memory about one NPC is most likely an opinion of them.
_TYPE_LEANS: dict[str, dict[str, float]] = {
    "opinion": {"opinion": 0.3},
    "relationship": dict.fromkeys(RELATIONAL, 0.15),
    "place": dict.fromkeys(("home", "whereabouts", "place"), 0.15),
    "event": {},
}
# Verbs whose object is the thing possessed ("I found a lost lamb", "the wolves took my sheep").
POSSESSION_VERBS = frozenset(
    "own owns owned have has had keep keeps kept lost lose found find sold sell bought buy stole stolen took "
    "lent lend gave give pawned traded".split()
)
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|us|our|ours)\b")
_THIRD_PERSON_OWNERS = frozenset("his her hers their theirs".split())
_CONTRACTIONS = frozenset("it's that's there's here's what's who's he's she's let's".split())
# A talk, and the topic it was about (up to the clause's end): see _only_a_talk.
_TALK = re.compile(r"\b(talk|talks|talked|talking|chat|chats|chatted|chatting|speak|speaks|spoke|tell|tells|told|"
                   r"discuss|discussed|discussing|gossip|gossiped)\b")
_ABOUT = re.compile(r"\babout (?:all |everything |the whole )?([a-z']+)(?: ([a-z']+))?")
_POSSESSIVES = frozenset("his her their our my your".split())
_TOPIC_END = re.compile(r"[;,.!?]| (?:while|when|but|and|so|because|until) ")
# Words after "about" that make it about a person ("lies about me"), or, after "about her", end the phrase.
_PERSON_WORDS = frozenset("me him her them us you myself himself herself themselves ourselves each at in on to "
                          "and but behind again to with for from".split())
_NOT_AN_ACTOR = frozenset("the a an this that someone somebody everyone nobody word they there it".split())


@dataclass(frozen=True, slots=True)
class KeyGuess:
    """A memory's state key (None: it sets no state this rule can name), how sure the guess is (0..1; 1.0 for a
    key the game gave) and why, in a few words (shown by the inspector and `lineage`)."""

    key: str | None
    confidence: float
    reason: str


def infer_key(
    text: str,
    *,
    type: str,
    subjects: tuple[str, ...],
    embed: Embed | None = None,
    names: Mapping[str, str] | None = None,
    held: Collection[str] = (),
) -> KeyGuess:
    """The state key `text` sets, for a memory of `type` about the NPC ids `subjects` (its `about` and the NPCs
    its text names, resolved by the caller through the registry; the memory's own NPC left out). `embed` reads
    the meaning (without it, or while it fails, cue words and the type decide, less surely); pass the same
    function each time (a bound method such as `env.embedder.embed` is): the aspect model is fitted once per
    function, embedding its examples (a few seconds). `names` (id -> name) keeps NPC names out of the things
    keys name (without it, the ids are taken for names). A line of talk ("Kit: I've found work") is read as
    its speaker's words (speech.py); a question sets no state. `held`: the keys the NPC's memories already
    set (its states so far): where the meaning leans to several aspects, one whose key the NPC holds is taken
    (`HELD_SHARE`), so that a change said in other words stays under the state it changes."""
    line, people = _line(text, subjects, names)
    if only_questions(line.words):
        return KeyGuess(None, 0.8, "a question sets no state")
    guess = _infer(unreported(line.words), type=type, subjects=people, embed=embed, names=names,
                   spoken=line.words != text, held=held if line.speaker is None else ())
    if line.speaker is None:
        return guess
    key = heard_key(guess.key, line.speaker)
    return KeyGuess(_fitting(key), guess.confidence, f"{line.speaker} said it: {guess.reason}")


# A report's frame: what follows is news the NPC heard ("Heard Hilda's ankle is broken", "Word is Cole moved in
# above the forge", "They say the road to Dunmere is washed out").
_REPORT = re.compile(
    r"^\s*(?:(?:i\s+)?(?:heard|hear)|(?:the\s+)?word\s+is|they\s+(?:say|said|tell\s+me)|(?:folk|people)\s+say|"
    r"rumou?r\s+(?:has\s+it|is)|i'?m\s+told|i\s+am\s+(?:told|given\s+to\s+understand)|apparently)"
    r"(?:\s+that)?\s*[,:]?\s+(?=\S)",
    re.IGNORECASE,
)


def unreported(words: str) -> str:
    """The news in a report, without its frame, read as any other line: "Heard Hilda's ankle is broken" as
    "Hilda's ankle is broken" (Hilda's health). Other words are returned as they are."""
    match = _REPORT.match(words)
    if match is None:
        return words
    rest = words[match.end():]
    return rest[:1].upper() + rest[1:]


def _line(text: str, subjects: tuple[str, ...], names: Mapping[str, str] | None) -> tuple[Line, tuple[str, ...]]:
    """The words of `text` without a speaker, and the NPCs to read them against: for a line another NPC said, the
    other NPCs it names, or else the speaker ("you" is the memory's NPC: a debt or a view between the two)."""
    people = tuple(dict.fromkeys(subjects))
    line = spoken(text, people, {p: _name_words((p,), names) for p in people})
    if line.speaker is None:
        return line, people
    others = tuple(p for p in people if p != line.speaker)
    return line, others or (line.speaker,)


def _infer(
    text: str,
    *,
    type: str,
    subjects: tuple[str, ...],
    embed: Embed | None = None,
    names: Mapping[str, str] | None = None,
    spoken: bool = False,
    held: Collection[str] = (),
) -> KeyGuess:
    """infer_key for words with no speaker before them (`spoken`: they were a line of talk)."""
    people = tuple(dict.fromkeys(subjects))
    lowered = text.lower()
    decided = _decided(lowered, type, people)
    if decided is not None:
        return decided
    name_words = _name_words(people, names)
    if _only_a_talk(lowered, name_words):
        return KeyGuess(None, 0.8, "a talk about a topic, an event")
    named = _named_things(text, held, people, name_words) if held and embed is not None else []
    if embed is not None and not named and not _open(text, type, people, name_words):
        return _NO_NAMED_STATE
    try:
        scores = aspect_scores(_read(text, name_words, spoken), type=type, embed=embed)
    except AiError as exc:  # the embedder is down: the cue words decide, and the guess says so
        guess = _infer(text, type=type, subjects=subjects, names=names, spoken=spoken)
        return KeyGuess(guess.key, guess.confidence, f"{guess.reason}; embedder unavailable ({_type_name(exc)})")
    if named:
        kept = _held_named(named, scores)
        if kept is not None:
            return kept
        if not _open(text, type, people, name_words):
            return _NO_NAMED_STATE
    actor = _actor(text, people, name_words)
    allowed = {a: v for a, v in scores.items()
               if _possible(a, people, text, type, actor, embed is None, name_words)}
    ranked = sorted(allowed.items(), key=lambda item: -item[1])
    guess = _best(ranked, text, people, name_words, type, embed)
    if not held or embed is None or guess.key in held:
        return guess
    return _held(ranked, held, text, people, name_words) or guess


_NO_NAMED_STATE = KeyGuess(None, 0.9, "no state this memory could set has a name in it")


def _named_things(text: str, held: Collection[str], people: tuple[str, ...],
                  name_words: frozenset[str]) -> list[str]:
    """The held states of the NPC's own things (possessions, plans, places) that the text names where its own
    words name no other thing of that kind: "A fox got into the pen and the goat is gone" (possession:goat held;
    the line opens on a fox, so alone it sets no state of the NPC's), but not "The road past the bridge is dry"
    (place:bridge held; the line's place is the road)."""
    words = _plain_words(text)
    return sorted(k for k in held if k.count(":") == 1 and k.split(":")[0] in THING_ASPECTS
                  and _names_thing(k, words) and _key(k.split(":")[0], text, people, name_words) in (None, k))


def _held_named(named: list[str], scores: Mapping[str, float]) -> KeyGuess | None:
    """Of the named held things (`_named_things`), the one whose aspect the model scores best, where it has at
    least HELD_SHARE of the model's probability; None where none has."""
    total = sum(scores.values()) or 1.0
    best = max(named, key=lambda k: scores.get(k.split(":")[0], 0.0))
    share = scores.get(best.split(":")[0], 0.0) / total
    if share < HELD_SHARE:
        return None
    return KeyGuess(best, round(share, 3), f"{best.split(':')[0]}: a state the NPC holds of a thing it names")


def _plain_words(text: str) -> set[str]:
    """The text's words, lower-case, "'s" taken off ("the ford's down": ford)."""
    return {w.lower().removesuffix("'s") for w in tokens(text)}


def _names_thing(key: str, words: set[str]) -> bool:
    """Whether the words name the thing a key ends with, one or more of it ("goat", "goats")."""
    thing = key.rpartition(":")[2]
    return bool({thing, thing + "s"} & words)


def _held(ranked: list[tuple[str, float]], held: Collection[str], text: str, people: tuple[str, ...],
          name_words: frozenset[str]) -> KeyGuess | None:
    """The best-scored aspect with at least HELD_SHARE of the model's probability whose key the NPC holds
    already: that key, or a held possession or plan of the same owner whose thing the text names ("The sweep
    came on Tuesday and the chimney draws clean" keeps "plan:chimney", though alone it reads "plan:sweep").
    None: no held state fits."""
    total = sum(v for _, v in ranked) or 1.0
    words = _plain_words(text)
    for aspect, score in ranked:
        share = score / total
        if aspect == NONE or share < HELD_SHARE:
            continue
        key = _key(aspect, text, people, name_words)
        if key is None:
            continue
        named = [k for k in held if k.rpartition(":")[0] == key.rpartition(":")[0] and ":" in k
                 and aspect in _THING_GUESSED and _names_thing(k, words)]
        if key in held or named:
            return KeyGuess(key if key in held else sorted(named)[0], round(share, 3),
                            f"{aspect}: a state the NPC holds already")
    return None


def key_text(text: str, *, type: str, subjects: tuple[str, ...], names: Mapping[str, str] | None = None) -> str | None:
    """The text whose meaning `infer_key` reads for this memory (its NPC names read as NEUTRAL_NAME), or None where
    structure alone decides the key: callers embed the texts of many memories in one call, and only these."""
    line, people = _line(text, subjects, names)
    if only_questions(line.words):
        return None
    spoken, text = line.words != text, unreported(line.words)
    if _decided(text.lower(), type, people) is not None:
        return None
    name_words = _name_words(people, names)
    if _only_a_talk(text.lower(), name_words):
        return None
    return _read(text, name_words, spoken) if _open(text, type, people, name_words) else None


def _decided(lowered: str, type: str, people: tuple[str, ...]) -> KeyGuess | None:
    """The key structure gives before any meaning is read: none for kinship, the opinion of the one NPC an
    opinion memory is about."""
    if KINSHIP.search(lowered):
        return KeyGuess(None, 0.9, "kinship, a fact that never changes")
    if type == "opinion" and len(people) == 1:
        return KeyGuess(f"opinion:{people[0]}", 0.9, "an opinion memory about one NPC")
    return None


def _open(text: str, type: str, people: tuple[str, ...], name_words: frozenset[str]) -> bool:
    """Whether some aspect the structure allows could name a key here; if none can, the memory sets no state
    whatever its meaning, and its text need not be embedded."""
    actor = _actor(text, people, name_words)
    return any(aspect != NONE and _possible(aspect, people, text, type, actor, False, name_words)
               and _key(aspect, text, people, name_words) is not None for aspect in ASPECTS)


def _best(ranked: list[tuple[str, float]], text: str, people: tuple[str, ...], name_words: frozenset[str],
          type: str, embed: Embed | None) -> KeyGuess:
    """The key of the best-scored aspect the structure allows; a thing aspect with no thing to key it by gives
    way to the next."""
    if embed is None and (not ranked or ranked[0][1] <= 0.0):  # no cue word at all: nothing names a state
        return KeyGuess(None, 0.0, "no cue word names a state")
    for place, (best, top) in enumerate(ranked):
        key = None if best == NONE else _key(best, text, people, name_words)
        if key is None and best != NONE:
            continue
        if embed is not None:  # the model's probability among the aspects the structure allows
            confidence = round(top / (sum(v for _, v in ranked) or 1.0), 3)
        else:
            runner_up = max((v for a, v in ranked if a != best), default=0.0)
            confidence = round(_confidence(top, runner_up) * (0.8 if place else 1.0), 3)
        if key is None:
            return KeyGuess(None, confidence, "sets no state (a fact, a habit or an event)")
        if confidence < CONFIDENCE_FLOOR:
            return KeyGuess(None, confidence, f"unsure: {key} at {confidence:.2f}")
        return KeyGuess(key, confidence, f"{best} ({'meaning and cues' if embed else 'cues'}, type {type})")
    return KeyGuess(None, 0.0, "no aspect fits")


def _only_a_talk(lowered: str, name_words: frozenset[str]) -> bool:
    """A talk about a topic and nothing more: a talk word, then "about" and a thing, not a person ("Tom told me
    all about the new bridge", "I spoke with the smith; he was full of worry about the flood"), and no cue word of
    any state outside the topic ("...about the hay I owe him; I'll pay him at Michaelmas" still sets the debt).
    The talk happened, an event: whom it was with says nothing of how the NPC regards them."""
    talk = _TALK.search(lowered)
    about = _ABOUT.search(lowered, talk.end()) if talk else None
    if about is None:
        return False
    first, second = about.group(1), about.group(2)
    owned = first in _POSSESSIVES and second is not None and second not in _PERSON_WORDS  # "her sister's wedding"
    if not owned and (first in _PERSON_WORDS or first in name_words):
        return False
    end = _TOPIC_END.search(lowered, about.end())
    rest = lowered[: about.start()] + " " + (lowered[end.start() :] if end else "")
    return not any(cue.search(rest) for cue in CUES.values())


def _type_name(exc: Exception) -> str:
    return type(exc).__name__


def aspect_scores(text: str, *, type: str, embed: Embed | None = None) -> dict[str, float]:
    """Each aspect's score for `text`: with `embed`, the aspect model's probability (aspect_model.py: the
    embedding, the cue words and the type, fitted on the labelled tuning memories); without, CUE_WEIGHT where one
    of its cue words occurs (SECOND_CUE_WEIGHT more for a second) plus what the memory's type leans to it."""
    lowered = text.lower()
    if embed is not None:
        vector = np.asarray(embed([text]), dtype=np.float32)[0]
        return probabilities(vector, lowered, type, embed)
    scores = dict.fromkeys(ASPECTS, 0.0)
    for aspect, cue in CUES.items():
        hits = len(set(match.group(0) for match in cue.finditer(lowered)))
        scores[aspect] += CUE_WEIGHT * min(hits, 1) + SECOND_CUE_WEIGHT * (hits > 1)
    for aspect, lean in _TYPE_LEANS.get(type, {}).items():
        scores[aspect] += lean
    return scores


def _read(text: str, name_words: frozenset[str], spoken: bool) -> str:
    """The text the aspect model reads: NPC names neutral, and a line of talk opened as one (SPOKEN)."""
    return (SPOKEN if spoken else "") + _neutral(text, name_words)


def _neutral(text: str, name_words: frozenset[str]) -> str:
    """`text` with the NPC names it names read as the examples' one name."""
    if not name_words:
        return text
    pattern = r"\b(" + "|".join(re.escape(word) for word in sorted(name_words)) + r")\b"
    return re.sub(pattern, NEUTRAL_NAME, text, flags=re.IGNORECASE)


def _possible(aspect: str, people: tuple[str, ...], text: str, type: str, actor: str | None,
              cues_only: bool, name_words: frozenset[str]) -> bool:
    """Structure first. A relational aspect needs exactly one other NPC; a tie, debt or trade needs the NPC
    itself in it (a relationship memory, or a first-person word: "Jory got married", an event, is Jory's news),
    and, where cue words alone decide, one of its cue words (marry, owe, buy...). A relationship memory is about a
    tie, so it sets no own state of the NPC's (another NPC's home or health, yes); a place memory sets a home,
    a whereabouts or a place's condition. A place needs a place it names."""
    lowered = text.lower()
    if aspect in RELATIONAL:
        involved = aspect == "opinion" or type == "relationship" or _own_words(text, name_words)
        cued = aspect == "opinion" or not cues_only or bool(CUES[aspect].search(lowered))
        return len(people) == 1 and involved and cued
    if type == "relationship" and aspect != NONE and (aspect not in OWN or actor is None):
        return False
    if type == "place" and aspect not in ("home", "whereabouts", "place", NONE):
        return False
    if aspect == "place":
        return _place(text) is not None
    return True


def _confidence(top: float, runner_up: float) -> float:
    """How sure the cue words are: the winner's score and its lead over the runner-up."""
    lead = max(0.0, top - runner_up)
    return round(min(1.0, 0.5 + lead * 1.2 + max(0.0, top - 0.4) * 0.4), 3)


def _name_words(people: tuple[str, ...], names: Mapping[str, str] | None) -> frozenset[str]:
    named = [(names or {}).get(person, person) for person in people]
    return frozenset(word.lower() for name in named for word in name.split())


def _actor(text: str, people: tuple[str, ...], name_words: frozenset[str]) -> str | None:
    """The other NPC whose own state the text reports ("Tom is ill"), or None when it is the NPC's own: one NPC
    named, the NPC's own words neither said nor implied (`_own_words`), and a name (not "the", "someone")
    opening the sentence."""
    if len(people) != 1 or _own_words(text, name_words):
        return None
    words = tokens(text)
    first = words[0] if words else ""
    opener = first.lower().removesuffix("'s")
    return people[0] if first[:1].isupper() and opener not in _NOT_AN_ACTOR else None


def _key(aspect: str, text: str, people: tuple[str, ...], names: frozenset[str]) -> str | None:
    if aspect in RELATIONAL:
        return f"{aspect}:{people[0]}"
    actor = _actor(text, people, names)
    if (actor is None and aspect != "place" and not _own_words(text, names)
            and not (not people and _own_thing(aspect, text))):
        return None  # no first-person word and no NPC it reports on: news of strangers sets no state of the NPC's
    if aspect in OWN:
        return f"{aspect}:{actor}" if actor else aspect
    thing = _thing(aspect, text, names)
    if thing is None:
        return None
    return _fitting(f"{aspect}:{thing}" if aspect == "place" or not actor else f"{aspect}:{actor}:{thing}")


def _fitting(key: str | None) -> str | None:
    """The key, where it fits a state key's length (rules.STATE_KEY_MAX_BYTES); None where it is longer."""
    return key if key is None or len(key.encode()) <= STATE_KEY_MAX_BYTES else None


# Openers that give the line a subject of its own (so no writer is implied): determiners, pronouns, "there".
_SUBJECT_OPENERS = DETERMINERS | frozenset(
    "he she it they you there someone somebody everyone everybody nobody no none one word news folk people".split()
)


def _own_words(text: str, name_words: frozenset[str]) -> bool:
    """Whether the text speaks of the NPC itself: a first-person word, or a terse line with the writer implied
    ("Owe Tom four shillings", "Laid up with a cough since the wet week", "Sold the mare to a drover"): no
    subject opens it (no determiner, pronoun or NPC name), and nothing in it is someone else's (his, her,
    their, the miller's)."""
    lowered = text.lower()
    if _FIRST_PERSON.search(lowered):
        return True
    words = [w.lower() for w in tokens(text)]
    if not words or words[0] in _SUBJECT_OPENERS or words[0].removesuffix("'s") in name_words:
        return False
    return not any(w in _THIRD_PERSON_OWNERS or (w.endswith("'s") and w not in _CONTRACTIONS) for w in words)


def _own_thing(aspect: str, text: str) -> bool:
    """A memory with no first-person word that names no NPC may still open on the NPC's own thing or body with
    "the" ("The shears were under the hay", "The henhouse can wait", "The thumb has closed up clean"): a
    possession, a plan or (a body part named) health, where nothing in it is anyone else's (no "the miller's",
    "his", "her", "their"). A rumour ("Tom claims William found a purse by the river") is not the NPC's."""
    if aspect not in ("possession", "plan", "health"):
        return False
    words = [w.lower() for w in tokens(text)]
    if any(w in _THIRD_PERSON_OWNERS or (w.endswith("'s") and w not in _CONTRACTIONS) for w in words):
        return False
    if not words or words[0] != "the":
        return False
    return aspect != "health" or (len(words) > 1 and words[1] in BODY_PARTS)


def _thing(aspect: str, text: str, names: frozenset[str]) -> str | None:
    """The thing a possession, plan or place is keyed by (see memory/beliefs/things.py)."""
    heads = [(opener, head) for opener, head in phrase_heads(text, names=names) if head not in TIME_WORDS]
    if aspect == "place":
        return _place(text)
    if aspect == "possession":
        held = object_of(text, POSSESSION_VERBS, names=names)  # "I found a lost lamb and keep it in my yard"
        held = held or acted_on(text, names=names)  # "The bailiff carried off the clock": the clock, not him
        own = [head for opener, head in heads if opener in ("my", "our")]  # "A girl found my locket"
        opening = [head for opener, head in heads[:1] if opener in ("the", "my", "our") and _opens(text, opener)]
        heads_only = ([held] if held and held not in TIME_WORDS else []) or opening or own or [h for _, h in heads]
        if heads_only and heads_only[0] in BODY_PARTS:
            return None  # "a broken finger" is health's
        return _slug(canonical(heads_only[0])) if heads_only else None
    aims = [head for _, head in heads if head not in BODY_PARTS]  # "I've set my heart on the fair"
    aims.sort(key=lambda head: head in ERRAND_WORDS)  # "ask the smith for a plough": the plough
    # A changed plan is keyed by the one it replaces ("oats instead of barley") or says is off ("so the sea trip
    # is off"), a plan put by for by what it is put by for ("the timber set aside for the boat"), a plan of going
    # by where it goes ("take the horses to the fair"), unless that is a person (an errand: "to the smith").
    named = (replaced(text, names=names), called_off(text, names=names), saved_for(text, names=names),
             destination(text, names=names))
    goals = [goal for goal in named
             if goal and goal not in TIME_WORDS and goal not in ERRAND_WORDS and goal not in BODY_PARTS]
    return _slug(canonical((goals + aims)[0])) if goals or aims else None  # else what it is for, named first


def _opens(text: str, opener: str) -> bool:
    """Whether the text opens with the thing as the subject of "is", "was", "has"...: "The pocket knife was in my
    coat" is about the knife (not "The wind carried off my hat", nor "The neighbour's boy brought my sow home")."""
    return bool(re.match(rf"{opener}\s+([a-z-]+\s+){{1,3}}(is|was|were|are|has|had)\b", text.lower()))


def _place(text: str) -> str | None:
    """The first place the text names; of two in a row, the second ("the mill bridge" is a bridge). "The ford's
    down" names the ford."""
    words = [w.lower().removesuffix("'s") for w in tokens(text)]
    for i, word in enumerate(words):
        if word in PLACE_NOUNS:
            return words[i + 1] if i + 1 < len(words) and words[i + 1] in PLACE_NOUNS else word
    return None


def _slug(word: str) -> str | None:
    slug = re.sub(r"[^a-z0-9_.-]", "", word.lower())
    return slug or None
