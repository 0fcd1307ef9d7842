"""A talk about a topic is an event, not a view (memory/beliefs/keys.py, `_only_a_talk`): on main, the village's
"Tom told me all about the new bridge while we stood at the tavern" was filed under Margaret's `opinion:tom`, and
became her current view of Tom. Checked with the bundled MiniLM, as remember infers keys, on the village's five
chat forms and on sentences of other shapes: a talk that also says how the NPC stands with someone, or what is
owed, keeps its key."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory_sim.env import Env
from memory_sim.memory.beliefs.keys import infer_key

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
NAMES = {"tom": "Tom", "mira": "Mira"}


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with Env.local(tmp_path_factory.mktemp("minilm"), environ={}, embed_model=MINILM) as env:
        yield env.embedder.embed


@pytest.mark.parametrize("text", [
    "Tom told me all about the new bridge while we stood at the tavern by the green.",
    "Tom and I talked about the harvest at the market square.",
    "I chatted with Tom at the forge about the price of flour; we mostly agreed.",
    "I spoke with Tom at the tavern by the green; he was full of worry about the river flooding.",
    "Tom told me all about the tax collector's visit while we stood at the forge.",
    "Mira and I talked about the vicar's sermon after church.",  # siblings in other words and with another NPC
    "Mira told me everything about her sister's wedding plans over the fence.",
    "Tom and I had a long talk about the price of wool at the fair.",
])
def test_a_talk_about_a_topic_sets_no_state(minilm: Any, text: str) -> None:
    subjects = tuple(npc for npc, name in NAMES.items() if name in text)
    guess = infer_key(text, type="relationship", subjects=subjects, embed=minilm, names=NAMES)
    assert guess.key is None, (text, guess)


@pytest.mark.parametrize(("text", "key"), [
    ("Tom told lies about me at the spinning circle and I've turned my back on him.", "opinion:tom"),
    ("Tom and I talked about the hay I owe him; I'll pay him at Michaelmas.", "debt:tom"),
    ("Mira and I talked it over by the well and made peace.", "opinion:mira"),
    ("Tom and I argued about the boundary stones and we haven't spoken since.", "opinion:tom"),
    ("Mira told the whole market lies about her at the fair; I can't stand her.", "opinion:mira"),
])
def test_a_talk_that_says_more_keeps_its_key(minilm: Any, text: str, key: str) -> None:
    subjects = tuple(npc for npc, name in NAMES.items() if name in text)
    assert infer_key(text, type="relationship", subjects=subjects, embed=minilm, names=NAMES).key == key
