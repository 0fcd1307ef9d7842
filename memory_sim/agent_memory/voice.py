"""A memory's summary in the third person, as Cloudflare's summaries read ("The user prefers concise answers."):
the speaker's "I", "me", "my" become "the user" (or "the assistant") and "their", with the verb after "I" agreeing.
Word rules, offline; a sentence they cannot read is kept as it was. Pure."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’]*|[^A-Za-z]+")
_IRREGULAR = {"am": "is", "'m": "is", "have": "has", "do": "does", "go": "goes", "was": "was", "'ve": "has",
              "'d": "would", "'ll": "will"}
_KEEP = frozenset("can could will would should must might may shall did was had".split())
# Verbs that a coordinated predicate shares with "I" ("I prefer dark mode and use VS Code"): agreed after "and".
_COMMON_VERBS = frozenset("use like love have work live prefer need want play drive speak own go do make run read "
                          "write enjoy hate eat drink watch take try keep know teach study cook travel".split())
_PRONOUNS = {"me": "them", "my": "their", "mine": "theirs", "myself": "themselves"}
_CONTRACTIONS = {"i'm": ("I", "am"), "i've": ("I", "have"), "i'd": ("I", "would"), "i'll": ("I", "will")}


def _agree(verb: str) -> str:
    """The third-person singular of a present-tense verb after "I" ("prefer" -> "prefers")."""
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _KEEP or (low.endswith("ed") and not low.endswith("eed")) or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(sentence: str, role: str) -> str:
    """The sentence about "the user" (role "user" or "system") or "the assistant", not "I"; "we"/"our" stay
    (they may include the listener)."""
    who = "the assistant" if role == "assistant" else "the user"
    tokens = _TOKEN.findall(sentence.replace("’", "'"))
    if not any(t.lower() in ("i", "me", "my", "mine", "myself") or t.lower() in _CONTRACTIONS for t in tokens):
        return sentence
    out: list[str] = []
    named = False  # "the user" said once; later mentions are "they"
    index = 0
    while index < len(tokens):
        token = tokens[index]
        low = token.lower()
        if low == "i" or low in _CONTRACTIONS:
            verb = _CONTRACTIONS[low][1] if low in _CONTRACTIONS else None
            subject = who if not named else "they"
            named = True
            if verb is None:  # "I prefer": the next word is the verb
                out.append(subject)
                if index + 2 < len(tokens) and tokens[index + 1] == " " and subject != "they":
                    out += [" ", _agree(tokens[index + 2])]
                    index += 3
                    continue
            else:
                out.append(f"{subject} {verb if subject == 'they' else _agree(verb)}")
        elif (low in _COMMON_VERBS and named and len(out) >= 2 and out[-2].lower() == "and"
              and not any(o.strip().lower() in ("they", "he", "she", "we", "you", "it") for o in out[-4:-2])):
            out.append(_agree(token))  # "... and use VS Code": the same subject's second verb
        elif low in _PRONOUNS:
            first = {"me": who, "my": f"{who}'s", "mine": f"{who}'s"}.get(low) if not named else None
            out.append(first or _PRONOUNS[low])
            named = named or first is not None
        else:
            out.append(token)
        index += 1
    text = "".join(out)
    return text[0].upper() + text[1:] if text else text
