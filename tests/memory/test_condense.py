"""Planning one day's consolidation (memory/consolidation/condense.py): pure functions over D1 rows."""

from __future__ import annotations

from collections.abc import Sequence

from memory_sim.memory.consolidation.condense import (
    DayPlan,
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
    row("d", "Cora's garden smelled of mint and smoke.", 0.45, 21, "event", ("cora",)),
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
    plan = plan_day("bram", 3, DAY, extractive)  # one topic of two memories (Cora); Wren and the barley alone
    assert plan.summary is not None and plan.link == plan.summary.id == "summary-bram-3" and len(plan.made) == 1
    assert plan.summary.content == "Cora sold me a tonic that tasted of pond water. Cora's garden smelled of mint and smoke."
    assert plan.sources == ("a", "d")
    assert plan.summary.type == dominant_type([DAY[0], DAY[3]]) == "opinion"  # 0.5 opinion against 0.45 event
    assert plan.summary.about == ("cora",) and plan.summary.kind == "summary"
    assert plan.summary.importance == 0.475 and plan.summary.world_time.hour == 23


def test_a_day_of_several_topics_gives_one_summary_each_and_never_joins_them() -> None:
    day = [*DAY, row("e", "Wren says the river will flood this spring.", 0.55, 22, "relationship", ("wren",))]
    plan = plan_day("bram", 3, day, extractive)
    assert [(m.summary.id, m.sources) for m in plan.made] == [("summary-bram-3", ("c", "e")),
                                                            ("summary-bram-3-topic2", ("a", "d"))]
    assert plan.link == "summary-bram-3"  # the most important topic's (Wren's ale, 0.6)
    lone = [DAY[0], DAY[1], DAY[2]]  # three topics of one memory each: no summary; the day's most important
    assert plan_day("bram", 3, lone, extractive) == DayPlan("bram", 3, "c")


def test_a_summariser_that_repeats_one_memory_gets_a_link() -> None:
    assert plan_day("bram", 3, DAY, lambda s: "  Cora sold me a tonic that tasted of pond water. ").link == "c"
    assert plan_day("bram", 3, DAY, lambda s: "pond water").link == "c"  # says less than one memory
    assert plan_day("bram", 3, DAY, lambda s: "").link == "c"  # nothing: the day's most important memory


def test_an_abstractive_summary_draws_on_every_memory_of_its_topic() -> None:
    plan = plan_day("bram", 3, DAY, lambda s: "A poor tonic and a garden of mint.")
    assert plan.summary is not None and plan.sources == ("a", "d")
    assert quoted_sources("Cora sold me a tonic that tasted of pond water. Odd day.", DAY) == DAY


def test_dominant_type_by_importance_ties_to_the_most_important() -> None:
    assert dominant_type([row("x", "1", 0.5, type="opinion"), row("y", "2", 0.3), row("z", "3", 0.3)]) == "event"
    assert dominant_type([row("x", "1", 0.5, type="opinion"), row("y", "2", 0.5)]) == "opinion"
    assert dominant_type([row("x", "1", 0.5), row("y", "2", 0.5, type="opinion")]) == "event"


def test_diary_entries_are_the_most_important_observations_in_order() -> None:
    day = [row(str(i), f"memory {i}", i / 10, hour=20 - i) for i in range(1, 9)]
    assert [m.id for m in diary_entries(day, 3)] == ["8", "7", "6"]
