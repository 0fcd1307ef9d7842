"""Planning one day's consolidation (memory/consolidation/condense.py): pure functions over D1 rows."""

from __future__ import annotations

from collections.abc import Sequence

from memory_sim.memory.consolidation.condense import (
    diary_entries,
    dominant_type,
    plan_day,
    quoted_sources,
)
from memory_sim.memory.consolidation.summarise import ExtractiveSummariser, Sentence
from memory_sim.memory.models import StoredMemory


def row(i: str, text: str, importance: float, hour: int = 9, type: str = "event", about: tuple[str, ...] = (),
        kind: str = "observation") -> StoredMemory:
    return StoredMemory(i, "bram", text, importance, 3, hour, type, kind, 0.05, "none", about=about)


def extractive(sentences: Sequence[Sentence]) -> str:
    return ExtractiveSummariser().summarise(sentences, 2)


DAY = [
    row("a", "Cora sold me a tonic that tasted of pond water.", 0.5, 9, "opinion", ("cora",)),
    row("b", "The barley is coming up thin.", 0.4, 15),
    row("c", "Wren poured me a free ale.", 0.6, 20, "event", ("wren",)),
]


def test_a_day_of_one_memory_is_linked_not_summarised() -> None:
    alone = [row("a", "I think Cora is a fraud. Cora sells weeds.", 0.75, type="opinion")]
    assert plan_day("bram", 3, alone, extractive).link == "a" and plan_day("bram", 3, alone, extractive).summary is None
    twice = alone + [row("a2", "i think cora is a FRAUD; cora sells weeds", 0.5, hour=12)]  # one text, remembered twice
    assert plan_day("bram", 3, twice, extractive).link == "a"
    assert plan_day("bram", 3, [], extractive).link == ""
    old_summary = row("summary-bram-3", "Cora sold me a tonic. It brought back day 1: ...", 0.3, 23, kind="summary")
    assert plan_day("bram", 3, [alone[0], old_summary], extractive).link == "a"  # summaries are never a source


def test_a_summary_keeps_its_sources_type_and_about() -> None:
    plan = plan_day("bram", 3, DAY, extractive)
    assert plan.summary is not None and plan.link == plan.summary.id == "summary-bram-3"
    assert plan.summary.content == "Cora sold me a tonic that tasted of pond water. Wren poured me a free ale."
    assert plan.sources == ("a", "c")
    assert plan.summary.type == dominant_type([DAY[0], DAY[2]]) == "event"  # 0.6 event against 0.5 opinion
    assert plan.summary.about == ("cora", "wren") and plan.summary.kind == "summary"
    assert plan.summary.importance == 0.55 and plan.summary.world_time.hour == 23


def test_a_summariser_that_repeats_one_memory_gets_a_link() -> None:
    assert plan_day("bram", 3, DAY, lambda s: "  Wren poured me a free ale. ").link == "c"
    assert plan_day("bram", 3, DAY, lambda s: "free ale").link == "c"  # says less than one memory
    assert plan_day("bram", 3, DAY, lambda s: "").link == "c"  # nothing: the day's most important memory


def test_an_abstractive_summary_draws_on_every_memory_it_was_given() -> None:
    plan = plan_day("bram", 3, DAY, lambda s: "A poor tonic, thin barley, and a free ale at the inn.")
    assert plan.summary is not None and plan.sources == ("a", "b", "c")
    assert quoted_sources("Cora sold me a tonic that tasted of pond water. Odd day.", DAY) == DAY


def test_dominant_type_by_importance_ties_to_the_most_important() -> None:
    assert dominant_type([row("x", "1", 0.5, type="opinion"), row("y", "2", 0.3), row("z", "3", 0.3)]) == "event"
    assert dominant_type([row("x", "1", 0.5, type="opinion"), row("y", "2", 0.5)]) == "opinion"
    assert dominant_type([row("x", "1", 0.5), row("y", "2", 0.5, type="opinion")]) == "event"


def test_diary_entries_are_the_most_important_observations_in_order() -> None:
    day = [row(str(i), f"memory {i}", i / 10, hour=20 - i) for i in range(1, 9)]
    assert [m.id for m in diary_entries(day, 3)] == ["8", "7", "6"]
