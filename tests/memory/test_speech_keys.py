"""Key inference on lines of talk (memory/beliefs/speech.py): a line another NPC said sets that NPC's state, or
one between the two; the NPC's own line loses its prefix; a question sets none. Then the chatter set
(tests/memory/data/chatter_keys.json) on the bundled MiniLM: a line of small talk seldom gets a key.

The chatter set: conversation lines, each with its gold key (null for the small talk most of it is). Written by
a helper who read only the key vocabulary, no code: the held_out half (c001-c134) first, committed before any code
ran on it, then the tuning half (c135-c268) and a second tuning batch (c269 on). The tuning lines of talk (those
with a speaker) are among the aspect model's examples (scripts/make_key_exemplars.py); the held-out half's misses
are never written out (scripts/measure_chatter_keys.py), so it stays blind."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_sim.env import Env
from memory_sim.eval.chatter_keys import measure_lines
from memory_sim.eval.state_keys import load_pairs
from memory_sim.memory.beliefs.keys import infer_key
from memory_sim.memory.beliefs.speech import Line, heard_key, only_questions, spoken
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
LINES = load_pairs(Path(__file__).parent / "data" / "chatter_keys.json")
NAMES = {"kit": frozenset({"kit"}), "mary": frozenset({"mary", "ann"})}


@pytest.mark.parametrize(("text", "people", "line"), [
    ("Kit: I've found work on the barges.", ("kit",), Line("kit", "I've found work on the barges.")),
    ("Mary Ann: We're off to the coast.", ("mary",), Line("mary", "We're off to the coast.")),
    ("Jago: Hope you feel better soon, Kit.", ("kit",), Line(None, "Hope you feel better soon, Kit.")),  # own line
    ("Kit fell ill: a fever.", ("kit",), Line(None, "Kit fell ill: a fever.")),  # no speaker opens it
    ("At 10:30 we met Kit.", ("kit",), Line(None, "At 10:30 we met Kit.")),
    ("Kit:no space, no speaker", ("kit",), Line(None, "Kit:no space, no speaker")),
])
def test_a_line_names_its_speaker_only_when_one_opens_it(text: str, people: tuple[str, ...], line: Line) -> None:
    assert spoken(text, people, NAMES) == line


@pytest.mark.parametrize(("words", "asks"), [
    ("Where are you staying?", True),
    ("Any plans for the holidays? Anything fun?", True),
    ("Hey John! How's it going? Hope all is good.", False),
    ("I moved to Denver. Have you been?", False),
    ("", False),
])
def test_only_a_question_asks(words: str, asks: bool) -> None:
    assert only_questions(words) is asks


@pytest.mark.parametrize(("key", "heard"), [
    ("work", "work:kit"), ("health", "health:kit"), ("possession:loom", "possession:kit:loom"),
    ("plan:fair", "plan:kit:fair"), ("debt:kit", "debt:kit"), ("opinion:wren", None), ("place:bridge", "place:bridge"),
    ("health:wren", "health:wren"), ("possession:wren:loom", "possession:wren:loom"), (None, None),
])
def test_a_heard_key_is_the_speakers_state_or_one_between_the_two(key: str | None, heard: str | None) -> None:
    assert heard_key(key, "kit") == heard


@pytest.mark.parametrize(("text", "subjects", "key"), [
    ("Kit: I owe you two silver for the seed.", ("kit",), "debt:kit"),  # "you" is the NPC who heard it
    ("Kit: I've taken to my bed with a fever.", ("kit",), "health:kit"),
    ("Kit: I owe Wren two silver for the seed.", ("kit", "wren"), None),  # Kit's debt to Wren is not the NPC's
    ("Where are you staying these days, Kit?", ("kit",), None),
    ("Jago: I owe Kit two silver for the seed.", ("kit",), "debt:kit"),  # the NPC's own line
])
def test_a_heard_line_is_read_as_its_speakers_words(text: str, subjects: tuple[str, ...], key: str | None) -> None:
    assert infer_key(text, type="event", subjects=subjects).key == key


def test_a_question_says_why_it_sets_no_state() -> None:
    assert infer_key("Quill: Are you still living up by the quarry?", type="event", subjects=("quill",)).reason == (
        "a question sets no state")


# --- the bundled MiniLM --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with Env.local(tmp_path_factory.mktemp("minilm"), environ={}, embed_model=MINILM) as env:
        yield env


@pytest.mark.slow
def test_the_memory_system_reads_registered_names_behind_opaque_ids(minilm_env: Env) -> None:
    """A game's ids need not be names: a line Kit (npc_7) said, remembered by Odile (npc_1), is Kit's state."""
    system = MemorySystem(minilm_env, clock=SimClock())
    system.register_npc("npc_1", "Odile")
    system.register_npc("npc_7", "Kit")
    heard = ShortTermMemory("npc_1", "Kit: I've found work on the barges down at the quay.", 0.5, WorldTime(1),
                            about=("npc_7",))
    asked = ShortTermMemory("npc_1", "Kit: How's the new loom treating you?", 0.5, WorldTime(1, 1), about=("npc_7",))
    system.remember_many([heard, asked])
    stored = {m.id: m for m in system.memories("npc_1").memories}
    assert stored[heard.id].state_key == "work:npc_7"
    assert stored[asked.id].state_key is None


# What the bundled MiniLM measured (benchmarks/chatter_keys.md), rounded to the worse side: a change that makes
# small talk get keys more often, or real state lose its key, fails here.
# share of no-state lines given a key (0.641 and 0.707 before any of this; held_out 0.120 until the aspect model
# was refitted with three more tuning rounds of narrated memories, 0.141 since: two more lines, for link recall
# +5 to +10 points on writers it had not seen, benchmarks/state_keys.md)
CEILINGS = {"held_out": 0.15, "tuning": 0.18}
FLOORS = {"held_out": 0.71, "tuning": 0.79}  # key recall on the lines that set state


@pytest.mark.slow
@pytest.mark.parametrize("split", list(CEILINGS))
def test_small_talk_seldom_gets_a_key(minilm_env: Env, split: str) -> None:
    got = measure_lines(LINES, split, minilm_env.embedder.embed).summary()
    print(split, json.dumps(got))
    assert got["false_key_rate"] <= CEILINGS[split] and got["key_recall"] >= FLOORS[split], got


def _counts(split: str) -> dict[str, Any]:
    lines = [m for m in LINES["memories"] if m["split"] == split]
    return {"null": sum(m["key"] is None for m in lines), "keyed": sum(m["key"] is not None for m in lines)}


def test_the_set_has_both_halves() -> None:
    for split in ("held_out", "tuning"):
        counts = _counts(split)
        assert counts["null"] >= 85 and counts["keyed"] >= 35, (split, counts)


@pytest.mark.parametrize(("text", "subjects"), [
    ("Kit: I've found work on the barges.", ("kit",)),
    ("Jago: I owe Kit two silver for the seed.", ("kit",)),
    ("I've found work on the barges.", ()),
])
def test_key_text_is_what_inference_embeds(text: str, subjects: tuple[str, ...]) -> None:
    """The memory system embeds a batch's key_text once; inference must ask for exactly those texts."""
    import numpy as np

    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.memory.beliefs.keys import key_text

    embedder, asked = HashingEmbedder(384), []

    def spy(texts: list[str]) -> np.ndarray:
        asked.extend(texts)
        return embedder.embed(texts)

    infer_key(text, type="event", subjects=subjects, embed=spy)
    expected = key_text(text, type="event", subjects=subjects)
    assert expected is not None and expected in asked
