"""Which piece of state a memory sets: its state key ("opinion:tom", "debt:mira", "health", "home").

The newest memory of an NPC under a key is that NPC's current state; older memories under the same key are its
history. The game names the key where it knows it (`ShortTermMemory.state_key`); otherwise `infer_key` guesses it
when the memory is written, structure first (the memory's type and the one NPC it is about), then meaning, and
says how sure it is. Pure: the caller resolves the NPCs a text names and passes an embedding function if any.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# Texts -> unit-length row vectors (the memory system's embedder); None where no model is at hand.
Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True, slots=True)
class KeyGuess:
    """A memory's state key (None: it sets no state this rule can name), how sure the guess is (0..1; 1.0 for a
    key the game gave) and why, in a few words (shown by the inspector and `lineage`)."""

    key: str | None
    confidence: float
    reason: str


def infer_key(
    text: str,
    *,
    type: str,
    subjects: tuple[str, ...],
    embed: Embed | None = None,
) -> KeyGuess:
    """The state key `text` sets, for a memory of `type` about the NPC ids `subjects` (its `about` and the NPCs
    its text names, resolved by the caller through the registry; the memory's own NPC left out)."""
    if type == "opinion" and len(subjects) == 1:
        return KeyGuess(f"opinion:{subjects[0]}", 0.9, "an opinion about one NPC")
    return KeyGuess(None, 0.0, "no rule names a key")
