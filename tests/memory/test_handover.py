"""When a key's current memory may take its older versions' place (memory/recalling/handover.py): not for a
question about the past, and for an inferred key only where the current memory answers the question too. Pure,
with an embedder whose vectors the test chooses; tests/memory/test_current_state.py runs recall end to end."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory_sim.errors import EmbeddingUnavailable
from memory_sim.memory.models import Recollection
from memory_sim.memory.recalling.handover import ANSWER_SHARE, asks_what_was, doubtful
from memory_sim.memory.scoring import current_first

CHAINS = {"work": ["old", "new"]}


class Chosen:
    """An embedder answering the vectors a test gives each text (unit length), and failing when told to."""

    def __init__(self, vectors: dict[str, list[float]], fail: bool = False) -> None:
        self.vectors, self.fail = vectors, fail

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if self.fail:
            raise EmbeddingUnavailable("down")
        rows = np.array([self.vectors[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _r(id: str, text: str, score: float) -> Recollection:
    key = "work" if id in CHAINS["work"] else None
    return Recollection(id, "ada", text, 0.5, 0, "observation", score, state_key=key)


def _found(current_text: str) -> list[Recollection]:
    return [_r("old", "I mend nets for the harbour master.", 0.9), _r("other", "Rain all day.", 0.5),
            _r("new", current_text, 0.0)]


QUESTION = "what work does Ada do?"
VECTORS = {QUESTION: [1.0, 0.0], "I mend nets for the harbour master.": [0.9, 0.1], "Rain all day.": [0.0, 1.0],
           "I keep the lighthouse now.": [0.85, 0.2], "Taking care of ourselves matters.": [0.1, 1.0]}


def test_a_current_memory_that_answers_the_question_takes_the_place() -> None:
    embedder = Chosen(VECTORS)
    assert doubtful(embedder, QUESTION, _found("I keep the lighthouse now."), CHAINS) == frozenset()


def test_a_current_memory_about_something_else_keeps_out_and_the_answer_keeps_its_place() -> None:
    embedder = Chosen(VECTORS)
    found = _found("Taking care of ourselves matters.")
    keep = doubtful(embedder, QUESTION, found, CHAINS)
    assert keep == {"new"}
    ranked = sorted(current_first(found, CHAINS, unearned={"new"}, keep=keep), key=lambda r: -r.score)
    assert [r.id for r in ranked] == ["old", "other", "new"]  # nothing handed round
    assert next(r for r in ranked if r.id == "old").superseded_by == "new"  # still marked as history


def test_the_share_is_the_line() -> None:
    at = ANSWER_SHARE * float(np.dot(np.array([0.9, 0.1]) / np.linalg.norm([0.9, 0.1]), [1.0, 0.0]))
    below, above = at - 0.01, at + 0.01
    for value, kept in ((below, True), (above, False)):
        text = f"current at {value:.3f}"
        vectors = {**VECTORS, text: [value, float(np.sqrt(1 - value**2))]}
        assert ("new" in doubtful(Chosen(vectors), QUESTION, _found(text), CHAINS)) is kept


def test_a_key_the_game_gave_is_trusted() -> None:
    found = _found("Taking care of ourselves matters.")
    assert doubtful(Chosen(VECTORS), QUESTION, found, CHAINS, given={"old", "new"}) == frozenset()


def test_a_question_about_the_past_keeps_every_version_where_it_earned() -> None:
    for question in ("What work did Ada do?", "Was Ada a net-mender?", "where were they living"):
        assert asks_what_was(question)
        keep = doubtful(Chosen({**VECTORS, question: [1.0, 0.0]}), question, _found("I keep the lighthouse now."),
                        CHAINS, given={"old", "new"})
        assert keep == {"new"}
    assert not asks_what_was("What does Ada think of Cole?") and not asks_what_was("Is the bridge out?")


def test_without_the_embedder_only_the_tense_rule_applies() -> None:
    down = Chosen(VECTORS, fail=True)
    assert doubtful(down, QUESTION, _found("Taking care of ourselves matters."), CHAINS) == frozenset()
    assert doubtful(down, "What did Ada do?", _found("Taking care of ourselves matters."), CHAINS) == {"new"}
