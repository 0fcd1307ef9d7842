"""Which piece of state a memory sets: its state key ("opinion:tom", "debt:mira", "health", "home").

The newest memory of an NPC under a key is that NPC's current state; older memories under the same key are its
history. The game names the key where it knows it (`ShortTermMemory.state_key`); otherwise `infer_key` guesses it
when the memory is written, structure first (the memory's type and the one NPC it is about), then meaning, and
says how sure it is. Pure: the caller resolves the NPCs a text names and passes an embedding function if any.

Granularity is the point of a key: two memories share a key exactly when the newer one replaces the older (an
update), and get different keys when both stay true (a kinship fact and a new shared habit; owning a horse and
owning a cart; a plan to visit the fair and a plan to fix the roof).

The vocabulary (`<npc>` is an NPC id, `<thing>` a lower-case noun such as "horse", "cart", "fair", "roof"):

Between the NPC and one other NPC, `<aspect>:<npc>`:
- `opinion:<npc>`: how the NPC regards and gets on with them: trust, liking, respect, contempt, suspicion, and
  the standing that goes with it: friends, a quarrel or feud, making peace. ("I don't trust Cole", "Tom and I
  shook hands over the boundary stones")
- `relationship:<npc>`: a tie held one at a time: courting, engaged, married, separated, a match broken off.
- `debt:<npc>`: what is owed between them, either way: a loan, an unpaid bill, its settling or forgiving.
- `trade:<npc>`: whether and how they do business: a regular supplier or buyer, a refusal or vow not to trade.
- never a key: kinship ("Tom is my mother's brother") and other facts that never stop being true, shared
  habits and one-off events ("Tom and I fish at the weir on Sundays", "I sold Hilda a basket of apples").

The NPC's own state (about another NPC, `<aspect>:<npc>`: "health:tom" is Tom's health as the NPC knows it):
- `health`: ill, injured, recovering, well.
- `home`: where the NPC lives.
- `whereabouts`: where the NPC is for a while, away from home (travelling, staying with someone).
- `work`: the NPC's job, trade or master.
- `possession:<thing>`: having, losing, finding, selling or lending a thing, one key per kind of thing
  ("possession:horse" for a mare or a cob).
- `plan:<thing>`: an intention, its change, cancelling or putting off, keyed by what it is for ("plan:fair",
  "plan:roof").

The world: `place:<thing>`: the condition of a place (a washed-out bridge, a dry well, a blocked road).

Other memories (events, opinions of things, facts) set no state: key None.
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
