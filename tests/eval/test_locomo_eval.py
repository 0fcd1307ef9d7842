"""LoCoMo through the recall API: ids, remember order, metrics, and one real conversation (slow)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from memory_sim.eval.locomo import (
    evaluate,
    is_mode,
    markdown,
    remember_conversation,
    session_memories,
    speaker_npc,
    turn_id_of,
    turn_memory_id,
    turn_session,
    with_scorings,
)
from memory_sim.eval.metrics import percentile, question_scores, session_scores
from memory_sim.locomo import Conversation, Question, Session, Turn, load_locomo
from memory_sim.memory.models import WorldTime
from memory_sim.memory.recalling.recall import natural_key, remembered_in_order
from memory_sim.memory.system import MemorySystem

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo10.json"


def synthetic() -> Conversation:
    """Session 1 has 12 turns, so `D1:10` would sort before `D1:2` by id. The answer to the question is a
    terse turn ("Yes, last Sunday!") whose previous turn names the topic: neighbour context must find it."""
    texts = ["Hi Bob, how are you?", "Fine thanks, Ann.", "Did you ever finish the pottery class?",
             "Yes, last Sunday!", "Great news.", "The weather is dreadful.", "It rained all week.",
             "My cat is ill.", "Sorry to hear that.", "The vet said rest.", "Let us meet soon.", "Bye for now."]
    speakers = ("Ann", "Bob")
    s1 = tuple(Turn(f"D1:{i + 1}", i, 1, speakers[i % 2], t, 0) for i, t in enumerate(texts))
    s2 = (Turn("D2:1", 12, 2, "Ann", "I adopted a puppy named Rex.", 3), Turn("D2:2", 13, 2, "Bob", "Lovely!", 3))
    sessions = (Session(1, datetime(2023, 5, 8, 13, 56), 0, s1), Session(2, datetime(2023, 5, 11, 9, 0), 3, s2))
    questions = (Question("When did Bob finish the pottery class?", 2, "last Sunday", ("D1:4",), ("D1:4",)),
                 Question("What is the name of Ann's puppy?", 4, "Rex", ("D2:1",), ("D2:1",)))
    return Conversation("conv-x", speakers, sessions, questions)


def test_turn_ids_are_kept_as_the_suffix_of_a_global_memory_id() -> None:
    npc = speaker_npc("conv-26", "Caroline Smith")
    assert npc == "conv-26:caroline-smith"
    assert turn_id_of(npc, turn_memory_id(npc, "D12:3")) == "D12:3"
    memories = session_memories(npc, synthetic().sessions[1])
    assert [m.id for m in memories] == ["conv-26:caroline-smith:D2:1", "conv-26:caroline-smith:D2:2"]
    assert memories[0].world_time == WorldTime(3, 9) and memories[0].content == "Ann: I adopted a puppy named Rex."


def test_natural_key_orders_turns() -> None:
    ids = ["a:D1:10", "a:D1:2", "a:D2:1", "a:D1:1"]
    assert sorted(ids, key=natural_key) == ["a:D1:1", "a:D1:2", "a:D1:10", "a:D2:1"]


def test_both_speakers_remember_every_turn_in_order(system: MemorySystem) -> None:
    conversation = synthetic()
    ann, bob = remember_conversation(system, conversation)
    for npc in (ann, bob):
        order = [turn_id_of(npc, m.id) for m in remembered_in_order(system.env, npc)]
        assert order == [t.id for t in conversation.turns]  # after the index_state UPDATEs, on both engines
    assert system.stats()["indexed"] == 2 * len(conversation.turns)


def test_evaluate_reports_every_mode_and_hybrid_finds_the_terse_answer(system: MemorySystem) -> None:
    conversation = synthetic()
    remember_conversation(system, conversation)
    system.clock.advance_to(WorldTime(10))  # type: ignore[attr-defined]
    ticks = iter(range(1000))
    report = evaluate(system, [conversation], ["vector", "keyword", "hybrid", "weighted"], timer=lambda: next(ticks))
    assert set(report) == {"vector", "keyword", "hybrid", "weighted"}
    hybrid = report["hybrid"]
    assert hybrid["overall"]["questions"] == 2
    assert hybrid["overall"]["recall@5"] == 1.0  # D1:4 via its neighbour D1:3, D2:1 by its words
    assert hybrid["categories"]["temporal"]["questions"] == 1
    assert hybrid["latency"]["n"] == 2 and hybrid["latency"]["p50_ms"] == 1000.0  # one tick per call


def test_question_scores_and_percentile() -> None:
    scores = question_scores(["a", "b", "c", "d", "e", "f"], {"b", "z"})
    assert scores["recall@1"] == 0.0 and scores["recall@5"] == 0.5 and scores["hit@5"] == 1.0
    with pytest.raises(ValueError):
        question_scores(["a"], set())
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 0.5) == 3.0 and percentile([], 0.5) == 0.0


def test_session_scores_count_a_turn_for_its_session() -> None:
    # gold: D1:4 and D3:2, two evidence sessions; the ranking finds neither turn but D1:9 (session D1) at rank 2
    # and D3:7 (session D3) at rank 7
    ranked = ["D2:1", "D1:9", "D2:2", "D4:1", "D4:2", "D2:3", "D3:7"]
    turn = question_scores(ranked, {"D1:4", "D3:2"})
    session = session_scores(ranked, {"D1:4", "D3:2"}, turn_session)
    assert turn["recall@10"] == 0.0 and turn["hit@10"] == 0.0
    assert session == {"session_recall@1": 0.0, "session_recall@5": 0.5, "session_recall@10": 1.0,
                       "session_hit@1": 0.0, "session_hit@5": 1.0, "session_hit@10": 1.0}
    # two gold turns of one session are one evidence session
    assert session_scores(["D1:1"], {"D1:4", "D1:5"}, turn_session)["session_recall@1"] == 1.0
    with pytest.raises(ValueError):
        session_scores(["D1:1"], set(), turn_session)


def test_scoring_presets_become_weighted_modes() -> None:
    assert with_scorings(["hybrid", "weighted"], ["design", "generative-agents-code"]) == [
        "hybrid", "weighted", "weighted:generative-agents-code"]
    assert is_mode("weighted:generative-agents-paper") and is_mode("keyword")
    assert not is_mode("weighted:psychic") and not is_mode("hybrid:design")


def test_evaluate_reports_session_level_and_splits_and_the_table_labels_them(system: MemorySystem) -> None:
    conversation = synthetic()
    remember_conversation(system, conversation)
    system.clock.advance_to(WorldTime(10))  # type: ignore[attr-defined]
    modes = ["hybrid", "weighted", "weighted:generative-agents-code"]
    report = evaluate(system, [conversation], modes)
    hybrid = report["hybrid"]
    assert hybrid["overall"]["session_hit@5"] == 1.0 and hybrid["overall"]["session_recall@10"] == 1.0
    assert hybrid["splits"]["held-out"]["overall"]["questions"] == 2  # conv-x is not a tuning conversation
    assert hybrid["splits"]["tuning"]["overall"] == {"questions": 0}
    assert set(report) == set(modes)
    table = markdown({"meta": {"questions": 2, "conversations": ["conv-x"], "model": "m", "memories": 28,
                               "ingest_s": 0.0}, "modes": report}, "here")
    assert "| mode | turn recall@5 | turn recall@10 | session hit@5 |" in table
    assert "| hybrid | held-out | 2 | 1.000 |" in table and "| hybrid | tuning | 0 | - |" in table


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason="needs ../shared/data/locomo10.json")
def test_one_real_conversation_hybrid_reaches_the_goal(tmp_path: Path) -> None:
    """conv-26 on Chroma + DuckDB + MiniLM (about a minute on 2 shared cores)."""
    import torch

    from memory_sim.eval.locomo import run_locomo

    torch.set_num_threads(1)
    report = run_locomo(load_locomo(LOCOMO)[:1], modes=["vector", "hybrid"], work_dir=tmp_path)
    assert report["meta"]["vectors"] == 2 * 419
    assert report["modes"]["hybrid"]["overall"]["recall@5"] >= 0.60  # 0.658 measured
    assert report["modes"]["hybrid"]["overall"]["recall@5"] > report["modes"]["vector"]["overall"]["recall@5"]
