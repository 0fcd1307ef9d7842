"""State-key inference measured on conversation lines (tests/memory/data/chatter_keys.json): what an NPC said or
heard, most of it small talk that sets no state. A key named for such a line files it beside a real state (its
history or its current memory), where recall may hand it an answer's place; a line that does set state should
still get its key.

Per split: the share of no-state lines given a key (`false_key_rate`), and the share given one sure enough to be
handed over unasked in recall (`sure_false_key_rate`, memory/recalling/current.py's HANDOVER_FLOOR); key precision
(a named key equal to the gold key) and recall over the lines that set state. Pure over an embedding function;
scripts/measure_chatter_keys.py runs it on the bundled MiniLM.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory_sim.eval.state_keys import guess
from memory_sim.memory.beliefs.keys import Embed
from memory_sim.memory.recalling.current import HANDOVER_FLOOR


@dataclass
class LineFigures:
    """One split's counts; the rates follow from them."""

    chatter: int = 0  # lines with no gold key
    false_keys: int = 0  # of those, given a key
    sure_false_keys: int = 0  # of those, at HANDOVER_FLOOR or above
    keyed: int = 0  # lines with a gold key
    named: int = 0  # lines given a key (any line)
    right: int = 0  # keys equal to the gold key
    misses: list[str] = field(default_factory=list)

    @staticmethod
    def ratio(part: int, whole: int) -> float:
        return round(part / whole, 3) if whole else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "false_key_rate": self.ratio(self.false_keys, self.chatter),
            "sure_false_key_rate": self.ratio(self.sure_false_keys, self.chatter),
            "key_precision": self.ratio(self.right, self.named),
            "key_recall": self.ratio(self.right, self.keyed),
            "counts": {"chatter": self.chatter, "false_keys": self.false_keys,
                       "sure_false_keys": self.sure_false_keys, "keyed": self.keyed, "named": self.named,
                       "right": self.right},
        }


def measure_lines(data: Mapping[str, Any], split: str, embed: Embed | None) -> LineFigures:
    """`split`'s figures for infer_key with `embed`, each line guessed as the memory system guesses it."""
    figures, npcs = LineFigures(), data["npcs"]
    for line in (m for m in data["memories"] if m["split"] == split):
        got, gold = guess(line, line["npc"], npcs, embed), line["key"]
        figures.named += got.key is not None
        figures.right += got.key is not None and got.key == gold
        if gold is None:
            figures.chatter += 1
            figures.false_keys += got.key is not None
            figures.sure_false_keys += got.key is not None and got.confidence >= HANDOVER_FLOOR
        else:
            figures.keyed += 1
        if got.key != gold:
            figures.misses.append(f"{line['id']}: {line['text']!r} -> {got.key} (gold {gold}; {got.confidence:.2f}, "
                                  f"{got.reason})")
    return figures
