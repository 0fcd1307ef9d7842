"""Names and roles both ways through the NPC registry, a loud refusal of an unknown NPC, and recent memories kept
in D1 only (importance <= 0.7) found when they share a word with the question, scored as indexed ones are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from memory_sim.errors import InvalidInput
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from tests.memory.memory_env import build_env

PIES = "Hilda's pies are the best in the valley."
STALE = "The baker sold me stale bread again."
FLOOD = "The mill road is flooded past the second bridge."


class Recording:
    """The embedder, with every text it was asked to embed written down."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.texts = inner, []

    model = property(lambda self: self.inner.model)
    dimensions = property(lambda self: self.inner.dimensions)

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        self.texts += list(texts)
        return self.inner.embed(texts, query=query)


@pytest.fixture
def system() -> MemorySystem:
    clock = SimClock()
    clock.advance_to(WorldTime(5, 12))
    system = MemorySystem(build_env(clock), clock=clock)
    system.register_npc("hilda", "Hilda", "baker")
    system.register_npc("mira", "Mira", "innkeeper")
    for hour, text in enumerate([PIES, STALE, "The well tasted of iron after the storm.",
                                 "A hooded stranger paid in foreign gold.", "Oswin sang at the inn all night."]):
        system.remember(ShortTermMemory("mira", text, 0.9, WorldTime(3, 8 + hour)))
    return system


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_role_in_the_query_reaches_memories_that_name_the_npc_and_the_other_way(
    system: MemorySystem, mode: str
) -> None:
    by_role = [r.text for r in system.recall("mira", "What does Mira think of the baker?", top_k=2, mode=mode)]
    assert PIES in by_role  # says "Hilda", asked "the baker"
    by_name = [r.text for r in system.recall("mira", "What do I think of Hilda?", top_k=2, mode=mode)]
    assert STALE in by_name  # says "the baker", asked "Hilda"


def test_an_unknown_npc_is_refused_with_the_clis_message(system: MemorySystem) -> None:
    with pytest.raises(InvalidInput, match=r"^no memories of NPC 'the baker'; did you mean 'hilda' \(baker\)\?$"):
        system.recall("the baker", "pies")
    with pytest.raises(InvalidInput, match=r"^no memories of NPC 'nobody' \(5 memories of other NPCs\)$"):
        system.weighted_recall("nobody", "pies")
    with pytest.raises(InvalidInput, match="no memories of NPC 'nobody'"):
        system.decision_context("nobody", "Shall I buy pies?")
    with pytest.raises(InvalidInput, match="no memories of NPC 'nobody'"):
        system.relationship_context("mira", "nobody")
    assert system.recall("hilda", "pies") == []  # registered, nothing remembered yet: an empty answer
    system.remember(ShortTermMemory("tobias", "I came to the valley today.", 0.9, WorldTime(5, 9)))
    assert [r.text for r in system.recall("tobias", "valley")] == ["I came to the valley today."]  # new, unregistered


def test_recent_memories_kept_in_d1_only_are_found_when_they_share_a_word(system: MemorySystem) -> None:
    embedder = Recording(system.env.embedder)
    system.env.embedder = embedder  # type: ignore[misc]
    system.remember(ShortTermMemory("mira", FLOOD, 0.6, WorldTime(4, 18)))  # below the index threshold
    system.remember(ShortTermMemory("mira", "The old mill road was rebuilt long ago.", 0.5, WorldTime(0, 7)))
    question = "Is the road to the mill passable?"
    assert FLOOD not in [r.text for r in system.recall("mira", question, top_k=10, mode="vector")]
    found = system.recall("mira", question, top_k=10, mode="vector", include_recent=True)
    flood = next(r for r in found if r.text == FLOOD)
    assert flood.source == "d1" and 0 < flood.score <= 1
    decided = system.decision_context("mira", question, top_k=3)
    assert FLOOD in [r.text for r in decided] and all(r.effective_score is not None for r in decided)
    weighted = system.weighted_recall("mira", question, top_k=10, include_recent=True)
    assert [r.source for r in weighted if r.text == FLOOD] == ["d1"]
    assert FLOOD in embedder.texts  # embedded at recall time, as the index would have embedded it
    unrelated = "The miller's wife sang at the inn."  # recent and D1 only, but shares no word with the question
    system.remember(ShortTermMemory("mira", unrelated, 0.4, WorldTime(4, 19)))
    system.recall("mira", question, top_k=10, mode="vector", include_recent=True)
    assert unrelated not in embedder.texts  # only those sharing a word are ranked, so only they are embedded
    system.clock.advance_to(WorldTime(9, 12))  # type: ignore[attr-defined]
    later = [r.text for r in system.recall("mira", question, top_k=10, mode="vector", include_recent=True)]
    assert FLOOD in later and "The old mill road was rebuilt long ago." not in later  # day 0: past the last week
