"""The supersession detector (memory/beliefs/detect.py) measured on labelled pairs: tests/memory/data/
supersession_pairs.json holds a tuning set and a held-out set, written before the detector ran on either. The
floors below are what it measured with the bundled all-MiniLM-L6-v2 (tuning 23 of 24 found, none false: the
mill road, which names no NPC, is missed on purpose; held-out 7 of 10 found, 2 false of 9 linked); a change that
lowers either fails here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_sim.env import Env
from memory_sim.memory.beliefs.detect import Belief, change_cue, links, polarity, revises, subjects, supersedes

PAIRS = json.loads((Path(__file__).parent / "data" / "supersession_pairs.json").read_text("utf-8"))
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
FLOORS = {"tuning": (1.0, 0.95), "held_out": (0.77, 0.70)}  # (precision, recall) measured, rounded down


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with Env.local(tmp_path_factory.mktemp("minilm"), environ={}, embed_model=MINILM) as env:
        yield env.embedder


def pair_beliefs(pair: dict[str, Any]) -> tuple[Belief, Belief]:
    about, npcs = pair["about"], PAIRS["npcs"]
    older = Belief("older", "me", pair["type"], 24 + 9, pair["older"], subjects(about, pair["older"], npcs))
    owner = "me" if pair.get("same_npc", True) else "someone else"
    newer_type = pair.get("newer_type", pair["type"])
    newer = Belief("newer", owner, newer_type, 5 * 24 + 9, pair["newer"], subjects(about, pair["newer"], npcs))
    return newer, older


def measured(embedder: Any, name: str) -> tuple[float, float, list[str]]:
    found = true_links = linked = 0
    wrong = []
    for pair in PAIRS[name]:
        newer, older = pair_beliefs(pair)
        a, b = embedder.embed([older.text, newer.text])
        got = supersedes(newer, older, float(a @ b)) is not None
        found += got and pair["supersedes"]
        true_links += pair["supersedes"]
        linked += got
        if got != pair["supersedes"]:
            wrong.append(f"{'missed' if pair['supersedes'] else 'false link'}: {older.text} -> {newer.text}")
    return found / linked, found / true_links, wrong


@pytest.mark.parametrize("name", ["tuning", "held_out"])
def test_the_detector_keeps_its_measured_precision_and_recall(minilm: Any, name: str) -> None:
    precision, recall, wrong = measured(minilm, name)
    print(f"{name}: precision {precision:.2f}, recall {recall:.2f}", *wrong, sep="\n  ")
    low_precision, low_recall = FLOORS[name]
    assert precision >= low_precision and recall >= low_recall, (precision, recall, wrong)


def test_the_labelled_sets_hold_both_pairs_and_non_pairs() -> None:
    for name in ("tuning", "held_out"):
        labels = [p["supersedes"] for p in PAIRS[name]]
        assert labels.count(True) >= 10 and labels.count(False) >= 10, name


def test_polarity_reads_negation_and_phrases() -> None:
    assert polarity("I think Bram is proud but not unkind.") == 1
    assert polarity("I can't trust Cora anymore.") == -1
    assert polarity("Cora sold me a remedy that did nothing.") == -1
    assert polarity("Tom shod the miller's horse.") == 0


def test_cues_and_revisions() -> None:
    assert change_cue("Mira paid her debt at last.") and change_cue("Wren and I no longer speak.")
    assert not change_cue("Tom and I argued again about the gate.")
    assert revises("Maybe I was wrong about her.") and not revises("I was right about her.")


def test_subjects_come_from_about_else_from_the_registered_names_and_roles() -> None:
    npcs = PAIRS["npcs"]
    assert subjects(("tom",), "The miller waved.", npcs) == {"tom"}
    assert subjects((), "I think the miller is an honest man.", npcs) == {"oswin"}
    assert subjects((), "Tom and the smith are one man; Mira is not.", npcs) == {"tom", "mira"}
    assert subjects((), "Rain flattened the barley.", npcs) == frozenset()
    road, clear = "The mill road is flooded.", "The mill road is clear now."
    assert supersedes(Belief("b", "me", "place", 50, clear, frozenset()), Belief("a", "me", "place", 10, road,
                                                                           frozenset()), 0.9) is None


def test_an_opinion_turns_without_a_topic_but_an_event_needs_one() -> None:
    older = Belief("a", "bram", "opinion", 10, "Cora sold me a remedy that did nothing.", frozenset({"cora"}))
    newer = Belief("b", "bram", "opinion", 50, "The herbalist cured my fever.", frozenset({"cora"}))
    assert supersedes(newer, older, float("nan")) == "turn"
    assert supersedes(older, newer, 1.0) is None  # never backwards in time
    event_old = Belief("c", "tom", "event", 10, "Mira still owes me three silver.", frozenset({"mira"}))
    event_new = Belief("d", "tom", "event", 50, "Mira paid her debt at last.", frozenset({"mira"}))
    assert supersedes(event_new, event_old, 0.67) == "update"
    assert supersedes(event_new, event_old, float("nan")) is None  # no embedding: no topic, no link
    assert supersedes(event_new, event_old, 0.3) is None


def test_links_name_the_first_correction_and_ask_the_embedder_only_where_the_topic_decides() -> None:
    asked: list[tuple[str, str]] = []

    def similarity(pairs: Any) -> list[float]:
        asked.extend((n.id, o.id) for n, o in pairs)
        return [0.9] * len(pairs)

    cora = frozenset({"cora"})
    beliefs = [
        Belief("day1", "bram", "opinion", 24, "Cora is a fraud.", cora),
        Belief("day5", "bram", "opinion", 120, "Cora is honest and kind.", cora),
        Belief("day8", "bram", "opinion", 192, "Cora lied to me; she is a fraud.", cora),
        Belief("debt", "bram", "event", 30, "Cora owes me two coins.", cora),
        Belief("paid", "bram", "event", 200, "Cora paid me the two coins at last.", cora),
    ]
    found = links(beliefs, similarity)
    assert {k: v[0] for k, v in found.items()} == {"day1": "day5", "day5": "day8", "debt": "paid"}
    assert asked == [("paid", "debt")]
