"""What `ingest` keeps from a conversation, without a model: each sentence of each message is a fact, an event,
an instruction, a task or nothing, by word rules; a fact or an instruction also gets a topic key, under which a
newer one supersedes an older one. Pure functions; measured on a labelled set (tests/agent_memory/data/, the
held-out half written before these rules), figures in docs/agent-memory.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_sim.agent_memory.voice import third_person
from memory_sim.bindings.agent_memory import MemoryKind

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9][a-z0-9'’-]*")

ACKNOWLEDGEMENTS = (
    "hi", "hello", "hey", "thanks", "thank you", "ok", "okay", "sure", "yes", "no", "great", "cool", "nice",
    "noted", "got it", "understood", "i understand", "you're welcome", "happy to help", "glad to help", "let me",
    "here is", "here's", "here are", "good question", "good morning", "good evening", "good night", "hmm", "lol",
    "is there anything", "anything else", "sounds good", "of course", "no problem", "perfect", "awesome", "bye",
)
TASK_MARKS = (
    "need to", "needs to", "have to", "has to", "remind me", "don't forget", "do not forget", "don't let me forget",
    "todo", "to-do", "to do list", "follow up", "i'll ", "i will ", "we'll ", "we will ", "plan to",
    "planning to", "next step", "still need", "investigating", "working on", "currently debugging", "let's ",
    "let us ", "should investigate", "should look into", "must finish", "my next", "next i ",
)
FUTURE_TIMES = (
    "tomorrow", "tonight", "later", "next week", "next month", "this week", "this sprint", "this afternoon",
    "this evening", "by friday", "by monday", "by tuesday", "by wednesday", "by thursday", "by the end",
    "before the meeting", "in an hour", "soon",
)
PAST_TIMES = (
    "yesterday", "last week", "last month", "last year", "last night", "last summer", "last winter", "last spring",
    "last autumn", "last fall", " ago", "this morning", "over the weekend", "last weekend", "earlier today",
    "this quarter",
)
IMPERATIVES = frozenset(
    "always never please don't dont do avoid use keep answer respond reply write format include run call address "
    "refer escalate send give show explain cite mention speak talk stop start be make remember tell list add ask "
    "put limit sort translate summarize summarise follow ensure default prefer skip check review".split()
)
REQUEST_MARKS = ("i'd like you to", "i would like you to", "you should", "you must", "from now on", "make sure",
                 "i want you to", "call me", "address me")
RESPONSE_WORDS = ("answer", "answers", "response", "responses", "reply", "replies", "explanation", "explanations",
                  "tone", "format")
PAST_IRREGULAR = frozenset(
    "went got met ran broke began made took saw won lost bought sold left came found gave told wrote read drove "
    "flew fell felt kept held heard paid sent spent built caught chose forgot hid hit hurt led lent let rode rose "
    "shut sang sat slept spoke stood stole swam threw understood woke wore".split()
)
NOT_PAST = frozenset(
    "need red bed shed seed speed feed breed weed hundred sacred naked wicked tired married interested used based "
    "called named allergic supposed scared bored excited".split()
)
PRESENT_FIRST = frozenset(
    "is am are i'm we're you're it's he's she's they're 's have has i've we've do does use uses like likes love prefer "
    "prefers work works live lives speak own owns run runs drive usually".split()
)
LANGUAGES = frozenset(
    "english french german spanish portuguese italian dutch japanese chinese korean russian arabic hindi polish "
    "swedish".split()
)


# Casual chat (tuned on extraction_chat_dev.tsv and the first LoCoMo set): a sentence that opens by reacting to
# what was said, or about the listener, or with how the speaker feels, states nothing to keep.
INTERJECTIONS = frozenset("yeah yep yup yes no oh uh well haha hah wow aw aww hey so ok okay lol ah omg btw hmm"
                          .split())
SMALL_TALK_OPENERS = (
    "that's", "that is", "that was", "that sounds", "that looks", "that must", "this is", "it's", "it is", "it was",
    "it'll", "it has", "it had", "it means", "it really", "its", "sounds", "looks", "seems", "you're", "you are",
    "you've", "you have", "you", "glad", "lucky", "can't wait", "good luck", "take care", "great", "nice",
    "congrats", "congratulations", "what a", "how", "so much", "oh no", "not yet", "we all", "we can", "there's",
    "i totally", "i get", "i agree", "i appreciate", "i really appreciate", "i understand", "i hope you",
    "i'm here", "i'm proud of you", "let me know", "keep it up", "guess what", "those", "these", "it reminds",
    "long time", "take a look", "mainly", "i'll talk to you", "talk soon", "have fun", "uh oh",
)
FEELINGS = frozenset("happy glad excited proud sorry thrilled grateful determined keen thankful stoked "
                     "honored touched relieved".split())
INTENTIONS = ("thinking of", "thinking about", "hoping to", "planning", "gonna", "want to try", "keen to")


_GOING_TO = re.compile(r"\bgoing to (?!the |a |an |my |our |be |church|school|work\b)[a-z]")


def small_talk(tokens: list[str]) -> bool:
    """A reaction, a remark about the listener, or a feeling: "That's so cool!", "You're doing great", "I'm so
    happy for you"."""
    if _starts(" ".join(tokens), SMALL_TALK_OPENERS):
        return True
    while tokens and tokens[0] in INTERJECTIONS:
        tokens = tokens[1:]
    if not tokens or _starts(" ".join(tokens), SMALL_TALK_OPENERS):
        return True
    if tokens[0].endswith("ing") and len(tokens[0]) > 5:  # a gerund as the subject: "Seeing your work pay off..."
        return True
    feeling = tokens[1:4] if tokens[0] in ("i'm", "im") else tokens[2:5] if tokens[:2] == ["i", "am"] else []
    return any(t in FEELINGS for t in feeling)


@dataclass(frozen=True, slots=True)
class Extracted:
    """One memory found in a message: its kind, its summary (the sentence in the third person, voice.py) and the
    topic key of a fact or an instruction (None where no rule names one)."""

    type: MemoryKind
    summary: str
    topic_key: str | None


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def _starts(text: str, marks: tuple[str, ...]) -> bool:
    return any(text == m or text.startswith(m + " ") or text.startswith(m + ",") or text.startswith(m + "!")
               or text.startswith(m + ".") for m in marks)


def _has(text: str, marks: tuple[str, ...]) -> bool:
    padded = f" {text} "
    return any(m in padded for m in marks)


def _is_past(tokens: list[str]) -> bool:
    """A past-tense verb among the first words, before any present-tense one: "we shipped", "the backup job
    completed", "deployed v2.3", "my laptop was stolen"."""
    for i, token in enumerate(tokens[:6]):
        if token in PRESENT_FIRST:
            return False
        if token in ("was", "were"):
            following = tokens[i + 1] if i + 1 < len(tokens) else ""
            return following.endswith(("ed", "en")) or following in PAST_IRREGULAR
        if token in PAST_IRREGULAR or (token.endswith("ed") and len(token) > 4 and token not in NOT_PAST):
            return True
    return False


def classify(sentence: str, role: str) -> MemoryKind | None:
    """The kind of memory a sentence states, or None when it states none (a greeting, a thanks, a question)."""
    tokens = words(sentence)
    text = " ".join(tokens)
    if not tokens or _starts(text, ACKNOWLEDGEMENTS) or (len(tokens) <= 2 and not sentence.rstrip().endswith(".")):
        return None
    future = _has(text, FUTURE_TIMES)
    if sentence.rstrip().endswith("?"):
        asks = tokens[0] in ("can", "could", "would", "will") and len(tokens) > 1 and tokens[1] == "you"
        return "task" if asks and (future or _has(text, (" by ",))) else None
    if _has(text, TASK_MARKS) or _GOING_TO.search(text) or (future and (tokens[0] in IMPERATIVES)):
        return "task"
    if small_talk(tokens):
        return None
    if _has(text, INTENTIONS):
        return "task"
    if role == "system" or _has(text, REQUEST_MARKS) or tokens[0] in IMPERATIVES:
        return "instruction"
    if tokens[0] in ("when", "before", "after", "whenever") and "," in sentence:
        return "instruction"
    if tokens[:2] == ["i", "prefer"] and _has(text, RESPONSE_WORDS):
        return "instruction"
    if _has(text, PAST_TIMES) or _is_past(tokens):
        return "event"
    return "fact" if len(tokens) >= 2 else None


_SUBJECTS = {"i": "user", "i'm": "user", "my": "user", "me": "user", "we": "team", "we're": "team", "our": "team",
             "your": "user", "you": "user"}
_SKIP = frozenset("a an the my our your his her their this that these those in on at as to for of with and or "
                  "all every any some very really also just still always never please not don't".split())
_RESPONSES = {"answer", "answers", "reply", "replies", "response", "responses"}


def _head(tokens: list[str]) -> str | None:
    """The first content word of a phrase (replies, answers and responses counted as one)."""
    for token in tokens:
        if token in LANGUAGES:
            return "language"
        if token not in _SKIP and not token.isdigit():
            return "responses" if token in _RESPONSES else token
    return None


MAX_TOPIC_KEY_BYTES = 64  # a topic key is the memory system's state key (memory/rules.py: at most 64 bytes)


def _clean(key: str) -> str | None:
    cleaned = re.sub(r"[^a-z0-9:_.-]", "", key.replace(" ", "_").replace("'", ""))[:MAX_TOPIC_KEY_BYTES]
    return cleaned or None


def topic_key(sentence: str, kind: str) -> str | None:
    """The topic a fact or an instruction is about, for supersession: "user:editor", "user:prefer:mode",
    "instruction:answer:language". None for events and tasks, which accumulate."""
    tokens = [t for t in words(sentence) if t not in ("please", "always", "never", "now", "from", "on")] or words(
        sentence)
    if kind == "instruction":
        verb = next((t for t in tokens if t not in _SKIP and t not in ("don't", "do", "dont")), None)
        if verb is None:
            return None
        rest = tokens[tokens.index(verb) + 1:]
        head = "language" if any(t in LANGUAGES for t in rest) else _head(rest)
        return _clean(f"instruction:{verb}" + (f":{head}" if head else ""))
    if kind != "fact" or not tokens:
        return None
    subject = _SUBJECTS.get(tokens[0], _head(tokens[:2]) or tokens[0])
    if "as" in tokens and tokens.index("as") + 1 < len(tokens):  # "I use VS Code as my editor"
        head = _head(tokens[tokens.index("as") + 1:])
        if head:
            return _clean(f"{subject}:{head}")
    if tokens[0] in ("my", "our", "your") and len(tokens) > 2:  # "my favourite colour is green"
        verb_at = next((i for i, t in enumerate(tokens) if t in ("is", "are", "was", "runs", "lives")), None)
        if verb_at and verb_at > 1:
            return _clean(f"{subject}:{'_'.join(tokens[1:verb_at])}")
    if tokens[0] in ("i", "we") and len(tokens) > 1:
        verb = tokens[1] if tokens[1] not in ("usually", "also", "really", "now") else tokens[min(2, len(tokens) - 1)]
        if verb in ("live", "work", "am", "moved"):
            return _clean(f"{subject}:{verb}")
        head = None
        for token in reversed(tokens[2:]):  # the object's last content word: "prefer dark mode" -> mode
            if token not in _SKIP:
                head = "language" if token in LANGUAGES else token
                break
        return _clean(f"{subject}:{verb}" + (f":{head}" if head else ""))
    if tokens[0] in ("i'm", "we're"):
        return _clean(f"{subject}:is")
    return _clean(f"{subject}:{'_'.join(t for t in tokens[1:3] if t not in _SKIP)}") if len(tokens) > 2 else None


def extract(text: str, role: str) -> list[Extracted]:
    """The memories a message states, one a sentence, in order; the same sentence twice is kept once."""
    found: dict[str, Extracted] = {}
    for sentence in sentences(text):
        kind = classify(sentence, role)
        if kind is not None and sentence not in found:
            found[sentence] = Extracted(kind, third_person(sentence, role), topic_key(sentence, kind))
    return list(found.values())
