"""The pure rule behind "current state first" (memory/scoring.py) and the write path's key inference seam
(memory/writing/keying.py): what recall and remember do with keys, without a backend."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from memory_env import build_env

from memory_sim.errors import EmbeddingUnavailable
from memory_sim.memory.beliefs.keys import KeyGuess
from memory_sim.memory.models import KeyOf, Recollection, ShortTermMemory, StoredMemory, WorldTime
from memory_sim.memory.recalling import current
from memory_sim.memory.scoring import borrow_score, current_first, next_newer, stale_values
from memory_sim.memory.system import MemorySystem
from memory_sim.memory.writing import keying
from memory_sim.sim.clock import SimClock

CHAINS = {"opinion:cole": ["old", "mid", "new"]}


def _r(id: str, score: float, importance: float = 1.0, day: int = 0, decay: float = 0.0) -> Recollection:
    weighted = score * importance / (1 + (10 - day) * decay)
    return Recollection(id, "ada", id, importance, day, "opinion", score, effective_score=weighted,
                        decay_factor=decay, state_key="opinion:cole" if id in CHAINS["opinion:cole"] else None)


def test_the_current_one_takes_the_best_place_and_the_stale_ones_follow_in_their_order() -> None:
    found = [_r("old", 0.9), _r("mid", 0.8), _r("new", 0.3), _r("other", 0.85)]
    ranked = sorted(current_first(found, CHAINS), key=lambda r: -r.score)
    assert [r.id for r in ranked] == ["new", "other", "old", "mid"]  # the key holds the places it earned
    assert [r.score for r in ranked] == [0.9, 0.85, 0.8, 0.3]  # the scores the three earned, handed round
    assert {r.id: r.superseded_by for r in ranked} == {"new": None, "other": None, "old": "mid", "mid": "new"}
    assert next_newer(CHAINS) == {"old": "mid", "mid": "new"}


def test_a_current_one_pulled_in_takes_the_first_place_and_earns_no_extra_one() -> None:
    found = [_r("old", 0.9), _r("mid", 0.8), _r("new", 0.0), _r("other", 0.85)]
    ranked = sorted(current_first(found, CHAINS, unearned={"new"}), key=lambda r: -r.score)
    assert [r.id for r in ranked] == ["new", "other", "old", "mid"] and ranked[0].score == 0.9
    assert ranked[3].score < ranked[2].score <= 0.8  # the lowest older version yields its place


def test_weighted_scores_keep_following_the_formula() -> None:
    found = [_r("old", 0.9, importance=0.9, day=2, decay=0.1), _r("new", 0.0, importance=0.4, day=9, decay=0.1)]
    borrowed = borrow_score(found, CHAINS, {"new"})
    assert borrowed[1].score == 0.9  # weighed as the version it stands for
    weighed = [_r(r.id, r.score, r.importance, r.day, 0.1) for r in borrowed]  # as recall weighs them
    ranked = sorted(current_first(weighed, CHAINS, weighted=True, unearned={"new"}),
                    key=lambda r: -(r.effective_score or 0))
    assert [r.id for r in ranked] == ["new", "old"]
    for r in ranked:
        assert r.effective_score == pytest.approx(r.score * r.importance / (1 + (10 - r.day) * 0.1))
    assert ranked[0].effective_score == pytest.approx(0.9 * 0.9 / 1.8)  # the place the older version earned


def test_a_stale_version_without_its_current_one_stays_as_it_was() -> None:
    found = [_r("old", 0.9), _r("mid", 0.8)]
    assert [r.score for r in current_first(found, CHAINS)] == [0.9, 0.8]
    assert stale_values([-0.2, 0.1], -0.1) == [pytest.approx(-0.2), pytest.approx(-0.101)]


def test_key_inference_goes_on_without_the_embedder_when_it_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[bool] = []

    def infer(text: str, *, type: str, subjects: tuple[str, ...], embed: object = None,
              names: object = None, held: object = ()) -> KeyGuess:
        asked.append(embed is not None)
        if embed is not None:
            embed(["x"])  # type: ignore[operator]
        return KeyGuess(f"opinion:{subjects[0]}", 0.7, "test") if subjects else KeyGuess(None, 0.0, "none")

    def failing(texts: Sequence[str]) -> np.ndarray:
        raise EmbeddingUnavailable("the model is down")

    class Registry:
        refiner = None

        def profiles(self) -> list[dict[str, str]]:
            return [{"npc_id": "cole", "name": "Cole", "role": "the carter", "aliases": ""}]

        def held(self, npc_ids: Sequence[str]) -> dict[str, set[str]]:
            return {npc: set() for npc in npc_ids}

        def hold(self, keys: object) -> None:
            pass

    monkeypatch.setattr(keying, "infer_key", infer)
    memories = [ShortTermMemory("ada", "The carter is kind.", 0.5, WorldTime(1), type="opinion"),
                ShortTermMemory("ada", "Rain.", 0.5, WorldTime(1, 1)),
                ShortTermMemory("ada", "Paid.", 0.5, WorldTime(1, 2), state_key="debt:cole")]
    keys = keying.keys_for(memories, Registry(), failing)  # type: ignore[arg-type]
    assert keys == {memories[0].id: KeyOf("opinion:cole", 0.7, "inferred"), memories[2].id: KeyOf("debt:cole", 1.0, "game")}
    assert asked == [True, False, False]  # once failed, the rest of the batch goes without it


# --- the relevance guard on the hand-over (memory/recalling/current.py) ------------------------------------------


def _stored(id: str, day: int, confidence: float, source: str = "inferred") -> StoredMemory:
    return StoredMemory(id, "ada", id, 0.5, day, 9, "event", "observation", 0.0, "none", state_key="possession:door",
                        key_confidence=confidence, key_source=source)


@pytest.mark.parametrize(("versions", "found", "chain"), [
    ((("old", 0.9), ("new", 0.9)), {"old"}, ["old", "new"]),  # both sure: the newer one is pulled in
    ((("old", 0.9), ("new", 0.55)), {"old"}, ["old"]),  # an unsure newer one, not asked for, takes no place
    ((("old", 0.9), ("new", 0.35)), {"old", "new"}, ["old", "new"]),  # found by the question: it is relevant
    ((("old", 0.35), ("new", 0.9)), {"old"}, ["old"]),  # found only through an unsure version: not pulled in
    ((("old", 0.35), ("mid", 0.9), ("new", 0.9)), {"old", "mid"}, ["old", "mid", "new"]),
    ((("old", 0.9), ("new", 0.35), ("newest", 0.9)), {"old"}, ["old", "newest"]),  # the unsure one is skipped
])
def test_the_hand_over_trusts_what_the_question_found_or_a_sure_key(
    versions: tuple[tuple[str, float], ...], found: set[str], chain: list[str]
) -> None:
    stored = [_stored(id, day, confidence) for day, (id, confidence) in enumerate(versions)]
    assert [m.id for m in current.handover_chain(stored, found)] == chain


def test_a_game_key_is_always_sure() -> None:
    assert current.sure(_stored("x", 1, 0.0, source="game")) and not current.sure(_stored("x", 1, 0.59))
    assert current.sure(_stored("x", 1, current.HANDOVER_FLOOR))


def test_recall_keeps_a_relevant_memory_in_place_of_an_unsure_newer_one(clock: SimClock) -> None:
    """'I mended the latch on my oven door' and, later, 'Tilly left a jar of tea at my door' under one inferred key
    (possession:door, a false link once seen): asked about the oven, recall answers with the oven; with a sure key
    (the game's) the newer one takes the older one's place as before."""
    for confidence, source, first in ((0.35, "inferred", "oven"), (1.0, "game", "tea")):
        with build_env(clock) as env:
            system = MemorySystem(env, clock=clock)
            oven = ShortTermMemory("ada", "I mended the latch on my oven door.", 0.9, WorldTime(1, 9),
                                   state_key="possession:door")
            tea = ShortTermMemory("ada", "Tilly left a jar of tea at my door.", 0.3, WorldTime(2, 9),
                                  state_key="possession:door")  # D1 only: never a candidate of vector recall
            system.remember_many([oven, tea, *FILLER])
            env.DB.prepare("UPDATE short_term_memories SET key_source = ?, key_confidence = ? WHERE id = ?").bind(
                source, confidence, tea.id).run()
            clock.advance_to(WorldTime(3, 9))
            top = system.recall("ada", "oven latch", top_k=1, mode="vector")
            assert top[0].text == (oven.content if first == "oven" else tea.content), (confidence, top)


FILLER = [ShortTermMemory("ada", text, 0.9, WorldTime(1, 12)) for text in (
    "The miller's cart lost a wheel.", "I picked a basket of plums.", "It rained on the market all afternoon.")]
