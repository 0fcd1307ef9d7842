"""NPC ids and the ids derived from them always fit Vectorize; values are checked once, in the same words as the
CLI; and one NPC's failure in a job never stops the job for the others."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_env import build_env
from memory_faults import FlakyEmbedder

from memory_sim.errors import InvalidInput
from memory_sim.memory.consolidation.summarise import ExtractiveSummariser, Sentence
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime, memory_id, summary_id
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

EMOJI_NPC = "abcdefghijklmnopqrstuvwx" + "🙂" * 8  # 24 ASCII + 8 emoji: 56 bytes, a valid NPC id
DAY = 86400.0


def utf8(text: str) -> int:
    return len(text.encode("utf-8"))


# --- ids ---------------------------------------------------------------------------------------------------------

unicode_chars = st.characters(exclude_categories=("Cs", "Cc"))
npc_ids = st.one_of(
    st.text(unicode_chars, min_size=1, max_size=64),
    st.builds(lambda a, b: a + b, st.text("abcxyz-_", min_size=10, max_size=40), st.text(unicode_chars, min_size=1, max_size=20)),
).map(lambda s: s.encode("utf-8")[:64].decode("utf-8", "ignore")).filter(lambda s: s.strip() != "")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(npc_ids, st.integers(0, 1_000_000_000), st.integers(0, 23), st.text(min_size=1, max_size=40).filter(str.strip))
def test_every_valid_npc_id_gives_ids_within_64_bytes(npc: str, day: int, hour: int, text: str) -> None:
    text = text.encode("utf-8", "replace").decode("utf-8", "replace")
    memory = ShortTermMemory(npc, text, 0.5, WorldTime(day, hour))
    assert 0 < utf8(memory.id) <= 64 and memory.id == memory_id(npc, WorldTime(day, hour), text)
    assert 0 < utf8(summary_id(npc, day)) <= 64


def test_summary_ids_keep_earlier_ids_and_tell_long_npc_ids_apart() -> None:
    assert summary_id("margaret", 1) == "summary-margaret-1"  # as earlier versions wrote it
    long_a, long_b = "village-" + "a" * 40 + "-one", "village-" + "a" * 40 + "-two"
    assert summary_id(long_a, 3) != summary_id(long_b, 3)
    assert summary_id(EMOJI_NPC, 12) != summary_id(EMOJI_NPC[:-1], 12)


def test_an_npc_id_over_64_bytes_is_refused_with_the_limit_named() -> None:
    with pytest.raises(InvalidInput, match="at most 64"):
        ShortTermMemory("n" * 65, "hello", 0.5, WorldTime(1, 1))
    with pytest.raises(InvalidInput, match="at most 64"):
        ShortTermMemory("🙂" * 17, "hello", 0.5, WorldTime(1, 1))  # 17 characters, 68 bytes


def test_remember_refuses_a_bad_npc_id_and_stores_nothing(clock: SimClock) -> None:
    system = MemorySystem(build_env(clock), clock=clock)
    for npc in ("x" * 65, "", "  ", "tom\n", "tom\udcff"):
        with pytest.raises(InvalidInput):
            system.remember(ShortTermMemory(npc, "A stranger came to the inn.", 0.9, WorldTime(1, 1)))
    assert store.count_memories(system.env.DB) == 0


# --- values: the same rules as the command line -----------------------------------------------------------------

BAD_MEMORIES: list[dict[str, Any]] = [
    {"content": ""}, {"content": "   "}, {"content": "half \udcff a text"}, {"npc_id": ""},
    {"importance": -1}, {"importance": math.nan}, {"importance": math.inf}, {"importance": 1.5}, {"importance": True},
    {"importance": "0.5"}, {"type": "rumour"}, {"kind": "dream"}, {"about": ("tom,rose",)}, {"about": ("",)},
    {"id": "x" * 65}, {"world_time": (1, 2)},
]


@pytest.mark.parametrize("change", BAD_MEMORIES, ids=[str(sorted(c)) + str(i) for i, c in enumerate(BAD_MEMORIES)])
def test_a_bad_memory_is_refused_as_invalid_input(change: dict[str, Any]) -> None:
    fields: dict[str, Any] = {"npc_id": "tom", "content": "Bread at dawn.", "importance": 0.5, "world_time": WorldTime(1, 2)}
    with pytest.raises(InvalidInput):
        ShortTermMemory(**{**fields, **change})


@pytest.mark.parametrize("day, hour", [(-5, 0), (0, 24), (0, -1), (10**20, 0), (1.5, 0), (math.nan, 0), (1, 2.0)])
def test_a_bad_world_time_is_refused(day: Any, hour: Any) -> None:
    with pytest.raises(InvalidInput):
        WorldTime(day, hour)


@pytest.mark.parametrize("args", [("tom", "", 5), ("tom", "  ", 5), ("", "bread", 5), ("tom", "bread", 0),
                                  ("tom", "bread", -3), ("tom", "bread", 100_000), ("tom", "bread\udcff", 5)])
def test_recall_refuses_what_the_cli_refuses(clock: SimClock, args: tuple[str, str, int]) -> None:
    system = MemorySystem(build_env(clock), clock=clock)
    npc, query, top_k = args
    with pytest.raises(InvalidInput):
        system.recall(npc, query, top_k=top_k)
    with pytest.raises(InvalidInput):
        system.weighted_recall(npc, query, top_k=top_k)


def test_recall_refuses_an_unknown_mode_and_a_negative_day(clock: SimClock) -> None:
    system = MemorySystem(build_env(clock), clock=clock)
    with pytest.raises(InvalidInput, match="mode"):
        system.recall("tom", "bread", mode="psychic")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="current_day"):
        system.weighted_recall("tom", "bread", current_day=-5)


# --- jobs: one NPC's failure holds back only that NPC --------------------------------------------------------------


def diary_day(system: MemorySystem, npc: str, day: int = 1) -> None:
    system.remember(ShortTermMemory(npc, f"{npc} baked bread for the harvest fair.", 0.9, WorldTime(day, 9)))
    system.remember(ShortTermMemory(npc, f"{npc} sold the bread at the market.", 0.6, WorldTime(day, 15)))
    system.write_diary(npc, day)


def insert_legacy_row(db: Any, memory_id: str, npc: str, content: str, importance: float, *, state: str,
                      decay: float = 0.05, day: int = 1) -> None:
    """A row as an older version (or another tool) may have left it, written with SQL past today's checks."""
    db.prepare(
        "INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type, about, kind, decay_factor,"
        " decayed_day, index_state, seq) VALUES (?, ?, ?, ?, ?, 9, 'event', '', 'observation', ?, 0, ?, 1000)"
    ).bind(memory_id, npc, content, importance, day, decay, state).run()


def test_an_emoji_npc_id_is_consolidated_with_the_others(clock: SimClock) -> None:
    system = MemorySystem(build_env(clock), clock=clock)
    for npc in ("margaret", EMOJI_NPC):
        diary_day(system, npc)
    report = system.consolidate(now=3 * DAY)
    assert report.consolidated == 2 and report.failed == 0 and report.errors == {}
    assert all(utf8(i) <= 64 for i in report.details)
    assert system.recall(EMOJI_NPC, "bread at the fair", top_k=3)


class ChokingSummariser(ExtractiveSummariser):
    """The real summariser, except that it fails (as a buggy or remote one may) on one NPC's diary."""

    def __init__(self, choke_on: str) -> None:
        super().__init__()
        self.choke_on = choke_on

    def summarise(self, sentences: Sequence[Sentence], max_sentences: int = 2) -> str:
        if any(self.choke_on in text for text, _ in sentences):
            raise RuntimeError("the summariser choked")
        return super().summarise(sentences, max_sentences)


def test_consolidate_goes_on_when_one_npc_fails(clock: SimClock) -> None:
    system = MemorySystem(build_env(clock), clock=clock, summariser=ChokingSummariser("rose"))
    legacy = "old-village-" + "🙂" * 20  # 92 bytes: remembered by an older version, before NPC ids had a limit
    for npc in ("margaret", "rose", "tom"):
        diary_day(system, npc)
    insert_legacy_row(system.env.DB, "old-1", legacy, "I lit the lamps on the green for the fair.", 0.8, state="none")
    insert_legacy_row(system.env.DB, "old-2", legacy, "I swept the green before the fair.", 0.5, state="none")
    store.put_diary(system.env.DB, legacy, 1, "I lit the lamps on the green for the fair. I swept the green before the fair.")
    report = system.consolidate(now=3 * DAY)
    assert report.consolidated == 2 and sorted(report.details) == ["summary-margaret-1", "summary-tom-1"]
    assert report.failed == 2 and set(report.errors) == {"rose", legacy}
    assert "choked" in report.errors["rose"] and "at most 64" in report.errors[legacy]
    summaries = [m for m in store.all_memories(system.env.DB) if m.kind == "summary"]
    assert {m.npc_id for m in summaries} == {"margaret", "tom"} and all(m.index_state == "indexed" for m in summaries)
    assert system.consolidate(now=3 * DAY).errors.keys() == {"rose", legacy}  # tried again, and reported again


def test_retry_pending_indexes_the_others_when_one_row_cannot_be(clock: SimClock) -> None:
    env = build_env(clock)
    env.embedder = FlakyEmbedder(env.embedder)
    system = MemorySystem(env, clock=clock)
    env.embedder.down = True
    for text in ("Tom mended the plough.", "Tom shod the grey mare."):
        system.remember(ShortTermMemory("tom", text, 0.9, WorldTime(1, 9)))
    env.embedder.down = False
    too_long = "legacy-" + "x" * 70  # no Vectorize can hold this id
    insert_legacy_row(env.DB, too_long, "rose", "Rose sewed a blue dress.", 0.9, state="pending")
    env.DB.prepare("INSERT INTO embedding_outbox (memory_id, attempts, next_attempt_at) VALUES (?, 0, 0)").bind(too_long).run()
    report = system.retry_pending(now=10 * DAY)
    assert report.embedded == 2 and report.failed == 1 and set(report.errors) == {"rose"}
    states = {m.id: m.index_state for m in store.all_memories(env.DB)}
    assert [s for i, s in states.items() if i != too_long] == ["indexed", "indexed"]
    assert states[too_long] == "pending" and store.outbox_size(env.DB) == 1  # it backs off, alone
    assert env.VECTORIZE.describe().vector_count == 2


def test_decay_and_prune_goes_on_when_one_row_cannot_be_reembedded_or_deleted(clock: SimClock) -> None:
    env = build_env(clock)
    system = MemorySystem(env, clock=clock)
    system.remember(ShortTermMemory("tom", "A fire at the forge; I carried buckets all night.", 0.95, WorldTime(0, 9)))
    system.remember(ShortTermMemory("tom", "The vicar waved at me.", 0.75, WorldTime(0, 10)))
    insert_legacy_row(env.DB, "legacy-keep-" + "x" * 60, "rose", "The great flood.", 0.95, state="indexed", day=0)
    insert_legacy_row(env.DB, "legacy-fade-" + "x" * 60, "rose", "A grey morning.", 0.75, state="indexed", day=0)
    env.DB.prepare("UPDATE short_term_memories SET decay_factor = 0.95").run()  # all past the forget threshold
    report = system.decay_and_prune(now=1 * DAY)
    assert report.reembedded == 1 and report.failed == 1 and set(report.errors) == {"rose"}
    states = {m.content[:10]: m.index_state for m in store.all_memories(env.DB)}
    assert states["A fire at "] == "indexed" and states["The vicar "] == "unindexed"  # tom's went ahead
    assert states["A grey mor"] == "unindexed"  # an id no index can hold is in none: nothing to delete
    assert system.stats().get("unindex_failures", 0) == 0
