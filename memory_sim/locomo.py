"""LoCoMo (Maharana et al., ACL 2024) loaded into typed records.

The canonical `locomo10.json` is a list of samples; each holds a conversation between two speakers split into
dated sessions of turns (`D<session>:<turn>`), and questions with gold evidence turn ids. Quirks handled here
(../shared/reference/memory-anchors.md section 3.1):

- sessions are found by their `session_<N>` keys, never by date keys (conv-26 has orphan date keys);
- free-text dates ("1:56 pm on 8 May, 2023") are parsed; a session's sim day counts days from the
  conversation's first session;
- a few evidence strings are malformed ("D8:6; D9:17", "D", "D:11:26", "D30:05"): only ids that name a turn
  of the conversation count as gold; the raw strings are kept;
- category 5 (adversarial) questions carry `adversarial_answer` and are skipped unless asked for; some
  answers are ints and are kept as text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memory_sim.errors import ConfigError

CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance; `id` is LoCoMo's dia_id (`D<session>:<turn>`), `index` its position in the conversation."""

    id: str
    index: int
    session: int
    speaker: str
    text: str
    day: int
    image_caption: str | None = None


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    started: datetime
    day: int
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    answer: str
    evidence: tuple[str, ...]  # gold turn ids that exist in the conversation
    raw_evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(turn for session in self.sessions for turn in session.turns)


def parse_session_date(text: str) -> datetime:
    """Parse LoCoMo's "1:56 pm on 8 May, 2023" (case-insensitive am/pm, optional extra spaces)."""
    try:  # strptime matches month names and am/pm case-insensitively
        return datetime.strptime(" ".join(text.split()), _DATE_FORMAT)
    except ValueError as exc:
        raise ConfigError(f"LoCoMo: cannot parse session date {text!r}") from exc


def load_locomo(
    path: str | Path,
    *,
    categories: frozenset[int] = frozenset({1, 2, 3, 4}),
    require_evidence: bool = True,
) -> list[Conversation]:
    """Read `locomo10.json`; keep questions of `categories` (with at least one well-formed evidence id, unless
    `require_evidence` is False)."""
    try:
        samples = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"LoCoMo: cannot read {path}: {exc}") from exc
    if not isinstance(samples, list):
        raise ConfigError("LoCoMo: the file must hold a list of samples")
    return [parse_conversation(sample, categories, require_evidence) for sample in samples]


def parse_conversation(
    sample: dict[str, Any], categories: frozenset[int], require_evidence: bool = True
) -> Conversation:
    raw = sample["conversation"]
    numbers = sorted(int(m.group(1)) for key in raw if (m := _SESSION_KEY.fullmatch(key)))
    dates = {n: parse_session_date(raw[f"session_{n}_date_time"]) for n in numbers}
    first = min(dates.values()).date() if dates else None
    sessions: list[Session] = []
    index = 0
    for number in numbers:
        day = (dates[number].date() - first).days if first else 0
        turns = []
        for item in raw[f"session_{number}"]:
            turns.append(_turn(item, index, number, day))
            index += 1
        sessions.append(Session(number, dates[number], day, tuple(turns)))
    ids = {turn.id for session in sessions for turn in session.turns}
    questions = tuple(
        q
        for item in sample.get("qa", [])
        if (q := _question(item, ids)).category in categories and (q.evidence or not require_evidence)
    )
    return Conversation(sample["sample_id"], (raw["speaker_a"], raw["speaker_b"]), tuple(sessions), questions)


def _turn(item: dict[str, Any], index: int, session: int, day: int) -> Turn:
    caption = item.get("blip_caption")
    return Turn(str(item["dia_id"]), index, session, str(item["speaker"]), str(item["text"]), day,
                str(caption) if caption else None)


def _question(item: dict[str, Any], ids: set[str]) -> Question:
    raw = tuple(str(e) for e in item.get("evidence", []))
    answer = item.get("answer", item.get("adversarial_answer", ""))
    evidence = tuple(dict.fromkeys(e for e in raw if e in ids))
    return Question(str(item["question"]), int(item["category"]), str(answer), evidence, raw)
