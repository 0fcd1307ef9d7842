"""The village eval counts a summary shown beside a memory whose sentence it quotes (its source, or the same
sentence remembered on another day): the same words twice in a top 5."""

from __future__ import annotations

from memory_sim.eval.quality import NpcTexts
from memory_sim.memory.scoring import text_key

TEXTS = {
    "tom-3": "Tom was rude to me again today.",
    "tom-7": "Tom was rude to me again today.",  # the same sentence, another day
    "mill-7": "The man at the mill has a good heart.",
    "summary-7": "Tom was rude to me again today. The man at the mill has a good heart.",
    "rose-2": "Rose sang at the chapel.",
}


def texts() -> NpcTexts:
    npc = NpcTexts(sources={"summary-7": {"tom-7", "mill-7"}})
    for memory_id, text in TEXTS.items():
        npc.key_of[memory_id] = text_key(text)
        npc.ids_of_key.setdefault(text_key(text), set()).add(memory_id)
    return npc


def test_a_summary_beside_a_sentence_it_quotes_is_counted_in_either_order() -> None:
    npc = texts()
    assert npc.quoted(["summary-7", "tom-3"]) == 1  # another day's twin of a source
    assert npc.quoted(["tom-3", "rose-2", "summary-7"]) == 1
    assert npc.quoted(["mill-7", "summary-7"]) == 1  # its own source
    assert npc.quoted(["summary-7", "rose-2", "tom-3", "mill-7"]) == 2


def test_memories_that_share_no_sentence_with_a_summary_are_not() -> None:
    npc = texts()
    assert npc.quoted(["tom-3", "rose-2", "mill-7"]) == 0
    assert npc.quoted(["summary-7", "rose-2"]) == 0
