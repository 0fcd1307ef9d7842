"""Grouping a day's memories by what they are about (memory/consolidation/topics.py): pure, over D1 rows."""

from __future__ import annotations

import numpy as np

from memory_sim.memory.consolidation.topics import Names, group_by_topic, proper_names, subjects
from memory_sim.memory.models import StoredMemory

NAMES = Names.of([("hilda", ["Hilda", "baker"]), ("oswin", ["Oswin", "miller"]), ("tom", ["Tom", "Old Tom", "smith"])])


def row(i: str, text: str, importance: float = 0.5, about: tuple[str, ...] = ()) -> StoredMemory:
    return StoredMemory(i, "mira", text, importance, 1, 9, "event", "observation", 0.05, "none", about=about)


def ids(topics: list[tuple[StoredMemory, ...]]) -> list[list[str]]:
    return [[m.id for m in topic] for topic in topics]


def test_subjects_are_the_npcs_named_then_about_then_other_proper_names() -> None:
    assert subjects(row("a", "The baker sold me rolls."), NAMES) == {"hilda"}  # by role
    assert subjects(row("b", "Old Tom shod the mare at the Crown.", about=("oswin",)), NAMES) == {"tom"}  # text first
    assert subjects(row("c", "He looked ashamed.", about=("oswin",)), NAMES) == {"oswin"}
    assert subjects(row("d", "A storm flooded the Crown."), NAMES) == {"~crown"}
    assert subjects(row("e", "Agnes's pies are good."), NAMES) == {"~agnes"}  # unregistered, possessive first word
    assert subjects(row("f", "I swept the floor."), NAMES) == frozenset()
    assert proper_names("I met Rose. Then I went home. Sunday was quiet.") == {"rose"}


def test_memories_sharing_a_subject_share_a_topic_and_others_never_do() -> None:
    day = [row("pies", "Hilda's pies are the best in the valley.", 0.7), row("debt", "Oswin owes me silver.", 0.65),
           row("rolls", "The baker sold me rolls.", 0.6), row("sang", "The miller sang all night.", 0.5)]
    assert ids(group_by_topic(day, NAMES)) == [["pies", "rolls"], ["debt", "sang"]]  # most important topic first
    same = {m.id: np.ones(4) / 2 for m in day}  # identical vectors: likeness never joins different subjects
    assert ids(group_by_topic(day, NAMES, same)) == [["pies", "rolls"], ["debt", "sang"]]


def test_a_topic_follows_its_first_memory_so_subjects_do_not_chain() -> None:
    day = [row("t", "Tom fixed my roof.", 0.9, ("tom",)), row("tr", "Tom and Rose quarrelled.", 0.8, ("tom", "rose")),
           row("r", "Rose sang at the chapel.", 0.7, ("rose",))]
    assert ids(group_by_topic(day)) == [["t", "tr"], ["r"]]


def test_a_memory_naming_no_one_joins_the_memory_most_like_it() -> None:
    stranger = row("s", "A hooded stranger paid in foreign gold.", 0.7)
    table = row("t", "The hooded stranger took the corner table.", 0.5)
    cellar = row("c", "The cellar roof is leaking again.", 0.4)
    assert ids(group_by_topic([stranger, table, cellar])) == [["s", "t"], ["c"]]  # by their words
    apart = {"s": np.array([1.0, 0.0]), "t": np.array([0.0, 1.0])}
    assert ids(group_by_topic([stranger, table, cellar], vectors=apart)) == [["s"], ["t"], ["c"]]  # vectors decide
