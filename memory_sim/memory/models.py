"""The memory system's typed values: world time, short-term memories, recollections, and the configuration.

Validation happens here, once, when a value is built: everything downstream trusts these types.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from memory_sim.bindings.limits import VECTORIZE_MAX_ID_BYTES
from memory_sim.errors import InvalidInput
from memory_sim.memory import rules
from memory_sim.memory.rules import HOURS_PER_DAY

if TYPE_CHECKING:
    from memory_sim.memory.config import MemoryConfig as MemoryConfig  # re-exported, loaded when first asked for

MemoryType = Literal["event", "relationship", "opinion", "place"]
MemoryKind = Literal["observation", "summary"]  # a summary is a consolidated diary day
# What answered: the index, BM25 over D1, D1 without the index (memory/recalling/recall.py), or a recent memory kept
# in D1 only (memory/recalling/recent.py)
Source = Literal["vectorize", "keyword", "short_term", "d1"]
RecallMode = Literal["vector", "keyword", "hybrid"]  # candidate generation; weighting is weighted_recall's
# hybrid won on LoCoMo through the API (recall@5 0.63 vs vector 0.37, keyword 0.52; docs/evaluation.md)
DEFAULT_RECALL_MODE: RecallMode = "hybrid"
RECALL_MODES: tuple[str, ...] = get_args(RecallMode)

MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)
MEMORY_KINDS: tuple[str, ...] = get_args(MemoryKind)
SECONDS_PER_HOUR = 3600
TEXT_PREVIEW_CHARS = 200


@dataclass(frozen=True, slots=True, order=True)
class WorldTime:
    """A moment of the simulated world: whole sim days since the world began (`day` >= 0) and the hour of that
    day (`hour`, 0-23). Ordered: earlier moments compare smaller."""

    day: int
    hour: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "day", rules.day(self.day))
        object.__setattr__(self, "hour", rules.hour(self.hour))

    @property
    def hours(self) -> int:
        """Whole sim hours since day 0, 00:00."""
        return self.day * HOURS_PER_DAY + self.hour

    def to_seconds(self) -> float:
        """Seconds since day 0, 00:00: what a clock returns at this moment."""
        return float(self.hours * SECONDS_PER_HOUR)

    @staticmethod
    def from_hours(hours: int) -> WorldTime:
        """The moment `hours` sim hours after day 0, 00:00."""
        day, hour = divmod(int(hours), HOURS_PER_DAY)
        return WorldTime(day, hour)

    @staticmethod
    def from_seconds(seconds: float) -> WorldTime:
        """The moment (to the whole hour) `seconds` after day 0, 00:00."""
        return WorldTime.from_hours(int(seconds // SECONDS_PER_HOUR))

    def __str__(self) -> str:
        return f"day {self.day} {self.hour:02d}:00"


def _fitted(head: str, tail: str, prefix: str = "") -> str:
    """`prefix + head + tail`, the head cut (by whole characters) until the id fits Vectorize's 64 bytes."""
    while head and len((prefix + head + tail).encode("utf-8")) > VECTORIZE_MAX_ID_BYTES:
        head = head[:-1]
    return prefix + head + tail


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def memory_id(npc_id: str, when: WorldTime, content: str) -> str:
    """A stable id, within Vectorize's 64 bytes for any NPC id, so the same world gives the same ids in every run.
    The digest covers the whole NPC id and text; the readable head is the NPC id's start, cut to fit."""
    return _fitted(npc_id[:24], f"-{when.day}-{when.hour}-{_digest(f'{npc_id}|{when.hours}|{content}')}")


def summary_id(npc_id: str, day: int, topic: int = 1) -> str:
    """The id of an NPC's consolidated day: `summary-<npc>-<day>` while the whole NPC id fits (ids of earlier
    runs stay the same), else a cut NPC id marked with a digest of the whole one, so ids stay apart and fit. A
    day's second and later topics end in `-topic<n>` (a day is a number, so no NPC id and day make the same id)."""
    tail = "" if topic == 1 else f"-topic{topic}"
    plain = f"summary-{npc_id}-{day}{tail}"
    if len(npc_id) <= 40 and len(plain.encode("utf-8")) <= VECTORIZE_MAX_ID_BYTES:
        return plain
    return _fitted(npc_id, f"~{_digest(npc_id)}-{day}{tail}", "summary-")


@dataclass(frozen=True, slots=True)
class ShortTermMemory:
    """What an NPC noticed, as `MemorySystem.remember` takes it: kept in D1 (the source of truth), and embedded
    into the vector index when `importance` is above the index threshold (0.7).

    Attributes:
        npc_id: whose memory (1-64 bytes; case-sensitive).
        content: the memory in plain words.
        importance: 0..1; how much it matters to the NPC (weights `weighted_recall`, slows decay).
        world_time: when it happened (`WorldTime(day, hour)`).
        type: "event", "relationship", "opinion" or "place".
        about: the NPC ids it is about, a tuple (a single string is refused).
        id: a stable id derived from the NPC, time and content unless given (at most 64 bytes).
        kind: "observation", or "summary" for what consolidation makes.
        state_key: the piece of state this memory sets ("opinion:tom", "debt:mira", "home"), when the game
            knows it; None lets the memory system infer one when the memory is written (memory/beliefs/keys.py).
            The newest memory of an NPC under a key is the current state, older ones its history.
        state_value: the value this memory gives its key's state ("warm", "cold", "paid"), when the game knows
            it: consecutive memories under a key with the same value restate one state (`opinion` tells them as
            one view, since the first of them); None: not known.
        infer_key: False says the memory sets no state: with `state_key` None, no key is inferred (a chat, an
            event the game knows changes nothing; stored with key_source "game").
    """

    npc_id: str
    content: str
    importance: float
    world_time: WorldTime
    type: MemoryType = "event"
    about: tuple[str, ...] = ()
    id: str = ""
    kind: MemoryKind = "observation"
    state_key: str | None = None
    state_value: str | None = None
    infer_key: bool = True

    def __post_init__(self) -> None:
        rules.npc_id(self.npc_id)
        rules.state_key(self.state_key)
        rules.state_value(self.state_value)
        if not isinstance(self.infer_key, bool):
            raise InvalidInput(f"infer_key must be True or False, got {rules.shown(self.infer_key)}")
        rules.text("content", self.content)
        rules.importance(self.importance)
        if not isinstance(self.world_time, WorldTime):
            raise InvalidInput(f"world_time must be a WorldTime, got {rules.shown(self.world_time)}")
        if self.type not in MEMORY_TYPES:
            raise InvalidInput(f"type must be one of {', '.join(MEMORY_TYPES)}, got {rules.shown(self.type)}")
        if self.kind not in MEMORY_KINDS:
            raise InvalidInput(f"kind must be one of {', '.join(MEMORY_KINDS)}, got {rules.shown(self.kind)}")
        object.__setattr__(self, "about", rules.about(self.about))
        if not self.id:
            object.__setattr__(self, "id", memory_id(self.npc_id, self.world_time, self.content))
        if rules.utf8_size("id", rules.text("id", self.id)) > VECTORIZE_MAX_ID_BYTES:
            raise InvalidInput(
                f"id must be at most {VECTORIZE_MAX_ID_BYTES} bytes in UTF-8, got {rules.shown(self.id)}"
            )

    @property
    def day(self) -> int:
        """The sim day it happened."""
        return self.world_time.day


IndexState = Literal["none", "pending", "indexed", "unindexed"]


@dataclass(frozen=True, slots=True)
class StoredMemory:
    """A memory as D1 holds it (`memories`, `memory`, `lineage`), with its place in the index and its current
    decay factor. `day` and `hour` are sim time; `index_state` is "none" (D1 only), "pending" (queued),
    "indexed", "unindexed" (pruned from the index), "forgetting" or "forgotten"; `indexed_at` is seconds of
    world time; `decayed_day` the sim day its decay factor was last grown to. `state_key` is the piece of state
    it sets (None: none known; the newest memory of an NPC under a key is its current state), `key_confidence`
    how sure that is (1.0 for a key the game gave), `key_source` "game" or "inferred", and `state_value` the value
    the game gave the state (None: not known)."""

    id: str
    npc_id: str
    content: str
    importance: float
    day: int
    hour: int
    type: str
    kind: str
    decay_factor: float
    index_state: str
    indexed_at: float | None = None
    decayed_day: int = 0
    about: tuple[str, ...] = ()
    state_key: str | None = None
    key_confidence: float | None = None
    key_source: str | None = None
    state_value: str | None = None


class KeyOf(NamedTuple):
    """A memory's state key as D1 stores it: the key (None: none), how sure (0..1), who said so ("game",
    "inferred") and the value the game gave the state (None: not known)."""

    key: str | None
    confidence: float | None
    source: str | None
    value: str | None = None


@dataclass(frozen=True, slots=True)
class Lineage:
    """Where a memory stands in consolidation: the memories it was made from (a summary's), and the summaries
    it went into (an observation's); and in its state key's history (`state_key`, None when it sets no known
    state): `history` holds every memory of its NPC under that key, itself included, newest first (the first is
    the current state)."""

    memory_id: str
    sources: tuple[StoredMemory, ...] = ()
    summaries: tuple[StoredMemory, ...] = ()
    state_key: str | None = None
    history: tuple[StoredMemory, ...] = ()


@dataclass(frozen=True, slots=True)
class BeliefLinks:
    """Where a memory stands in its state key's history: `superseded_by`, the next newer memory of its NPC under
    the same key (None when it is the current state or sets no known state), and `supersedes`, the memory just
    before it under that key (empty when it is the first), as a tuple."""

    memory_id: str
    superseded_by: StoredMemory | None = None
    supersedes: tuple[StoredMemory, ...] = ()


@dataclass(frozen=True, slots=True)
class Recollection:
    """One recalled memory, as `recall` and `weighted_recall` return it.

    Attributes:
        id, npc_id, text, importance, type: the memory's, as remembered.
        day: the sim day it happened.
        score: the recall mode's score, higher is better. vector: cosine similarity (-1..1). keyword: BM25
            divided by the best match's (0..1). hybrid: a fused relevance from 0 to 1.8 (`HybridParams.max_score`),
            0.3 x the vector score scaled over the index's top 100 + 0.7 x the keyword score + 0.5 and 0.3 of the
            best neighbour's fused score at distance 1 and 2, so a score above 1 is a memory whose neighbours
            answer too; each query cue a memory matches doubles it (`MemoryConfig.query_cues`,
            memory/recalling/cues.py), so with cues it can reach 16 x 1.8. "d1" results: keyword share x
            recency, 0..1 (memory/recalling/recent.py). Equal scores rank by `id`, ascending.
        source: what answered: "vectorize" (the index), "keyword" (BM25 over D1: keyword mode, or hybrid's
            keyword side), "short_term" (D1 without the index: the index or the embedder failed, or the index has
            not caught up yet) or "d1" (a recent memory kept in D1 only, asked for with `include_recent`).
        effective_score: `weighted_recall`'s score, `score * importance / (1 + age_days * decay_factor)`;
            None from `recall`.
        decay_factor: the memory's current decay factor (grows daily in `decay_and_prune`).
        kind: "observation" or "summary"; a summary names the memories it was made from in `sources`.
        superseded_by: the id of the next newer memory of the NPC under the same state key: this one is stale
            (history). Recall ranks the key's current memory above it, pulled in from D1 when needed, and its
            score is demoted below the current one's (memory/scoring.py's `current_first`). None when current.
        hour, about: the hour of `day` it happened, and the NPC ids it is about.
        state_key: the piece of state the memory sets ("opinion:tom"), None when none is known.
    """

    id: str
    npc_id: str
    text: str
    importance: float
    day: int
    type: str
    score: float
    source: Source = "vectorize"
    effective_score: float | None = None
    decay_factor: float = 0.0
    kind: str = "observation"
    sources: tuple[str, ...] = ()
    superseded_by: str | None = None
    hour: int = 0
    about: tuple[str, ...] = ()
    state_key: str | None = None

    def to_json(self) -> dict[str, object]:
        """The recollection as JSON-ready values, in camelCase as the CLI's `--json` prints it."""
        out: dict[str, object] = {
            "id": self.id,
            "npcId": self.npc_id,
            "text": self.text,
            "importance": self.importance,
            "day": self.day,
            "type": self.type,
            "score": round(self.score, 6),
            "source": self.source,
        }
        if self.effective_score is not None:
            out["effectiveScore"] = round(self.effective_score, 6)
        if self.kind != "observation":
            out["kind"] = self.kind
        if self.sources:
            out["sources"] = list(self.sources)
        if self.superseded_by is not None:
            out["supersededBy"] = self.superseded_by
        if self.state_key is not None:
            out["stateKey"] = self.state_key
        return out


@dataclass(frozen=True, slots=True)
class RelationshipContext:
    """What two NPCs recall of each other: `a_recalls` are `npc_a`'s memories about `npc_b`, and the reverse;
    `a_opinion` is what `npc_a` thinks of `npc_b` now, then how that changed (`MemorySystem.opinion`), and the
    reverse; `a_views` the same views as JSON-ready dicts, newest first."""

    npc_a: str
    npc_b: str
    a_recalls: list[Recollection]
    b_recalls: list[Recollection]
    a_opinion: str = ""
    b_opinion: str = ""
    a_views: tuple[dict[str, object], ...] = ()  # each view: sinceDay, lastDay, text, value, times (said)
    b_views: tuple[dict[str, object], ...] = ()


@dataclass(frozen=True, slots=True)
class JobReport:
    """What one job run did, for logs, the CLI and the demo's summary."""

    job: str
    embedded: int = 0
    unindexed: int = 0
    reembedded: int = 0
    decayed: int = 0
    consolidated: int = 0
    linked: int = 0  # consolidate: days of one memory, linked to it instead of summarised
    failed: int = 0  # memories (diaries, for consolidate) held back by an error; the job went on for the rest
    details: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # NPC id -> why that NPC's part failed


def __getattr__(name: str) -> Any:
    # MemoryConfig lives in memory/config.py (pydantic); the values here stay plain dataclasses, fast to build.
    if name == "MemoryConfig":
        from memory_sim.memory.config import MemoryConfig

        return MemoryConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
