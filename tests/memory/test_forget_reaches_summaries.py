"""Forgetting (or correcting) a memory reaches everything made from it: the summaries that drew on it are made
again from what is left (or forgotten with it), diaries lose the quote, D1 keeps no copy of the text, and a crash
anywhere is finished by the next `retry_pending`. Fast backends here; tests/memory/test_forget_on_the_stack.py
runs the same reader sweep on Chroma + DuckDB + MiniLM and through a folder's owner."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.check import check
from memory_sim.errors import AiError, InvalidInput
from memory_sim.memory.consolidation.summarise import ExtractiveSummariser, Sentence
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from memory_sim.transfer import export_sql
from tests.memory.forget_sweep import DEBT, PIES, SECRET_WORDS, assert_nowhere, every_reader, memories_of_day_one
from tests.memory.memory_env import build_env
from tests.memory.memory_faults import FlakyIndex


@pytest.fixture
def clock() -> SimClock:
    return SimClock()


@pytest.fixture
def system(clock: SimClock) -> MemorySystem:
    return MemorySystem(build_env(clock), clock=clock)


def test_forgetting_a_source_remakes_its_summary_from_what_is_left(
    system: MemorySystem, clock: SimClock, tmp_path: Path
) -> None:
    ids = memories_of_day_one(system, clock)
    [summary] = [m for m in store.all_memories(system.env.DB) if m.kind == "summary"]
    assert "silver" in summary.content  # the reproduction: the summary quotes the debt
    assert "silver" in every_reader(system, tmp_path)

    assert system.forget(ids[DEBT], "the player asked") == [ids[DEBT]]

    assert_nowhere(every_reader(system, tmp_path))
    remade = system.memory(summary.id)
    assert remade.index_state == "indexed"  # made again from what is left
    # the summary quoted the debt and the pies (extractive: its sources are what it quotes); the pies are left
    assert [s.id for s in system.lineage(summary.id).sources] == [ids[PIES]]
    assert remade.content == PIES
    assert "Hilda's pies" in store.diary(system.env.DB, "mira", 1)  # the diary keeps the rest
    assert system.memory(ids[DEBT]).content == ""  # D1 keeps the id, the time and why, never the text
    assert check(system.env).clean


def test_a_summary_whose_every_source_is_forgotten_disappears(
    system: MemorySystem, clock: SimClock, tmp_path: Path
) -> None:
    ids = memories_of_day_one(system, clock)
    summary = next(m for m in store.all_memories(system.env.DB) if m.kind == "summary")
    system.forget(list(ids.values()), "the player asked")
    assert system.memory(summary.id).index_state == "forgotten"
    assert system.memories("mira").memories == []
    assert_nowhere(every_reader(system, tmp_path), (*SECRET_WORDS, "pies", "iron"))
    assert system.env.VECTORIZE.get_by_ids([summary.id]) == [] and check(system.env).clean
    assert system.stats()["summaries"] == 0


def test_forget_npc_reaches_the_npcs_summaries(system: MemorySystem, clock: SimClock, tmp_path: Path) -> None:
    memories_of_day_one(system, clock)
    system.remember(ShortTermMemory("oswin", "I milled forty sacks today.", 0.9, WorldTime(2, 9)))
    system.forget_npc("mira")
    assert [m.kind for m in store.all_memories(system.env.DB)] == ["observation"]  # oswin's alone
    export_sql(system.env.DB, tmp_path / "d1.sql")
    assert_nowhere((tmp_path / "d1.sql").read_text(), (*SECRET_WORDS, "pies", "iron"))
    assert check(system.env).clean


def test_a_forget_cut_short_leaves_the_summary_hidden_until_retry_remakes_it(
    system: MemorySystem, clock: SimClock, tmp_path: Path
) -> None:
    ids = memories_of_day_one(system, clock)
    summary_id = next(m.id for m in store.all_memories(system.env.DB) if m.kind == "summary")
    index = FlakyIndex(system.env.VECTORIZE)
    system.env.VECTORIZE = index  # type: ignore[assignment]
    index.down = True
    system.forget(ids[DEBT], "the player asked")  # the D1 batch ran; the index refused the deletes
    assert system.memory(summary_id).index_state == "forgetting"  # hidden from every reader meanwhile
    assert_nowhere(repr([system.recall("mira", "silver ale", mode="keyword"), system.memories("mira").memories,
                         store.diary(system.env.DB, "mira", 1), system.memory(summary_id)]))
    index.down = False
    system.retry_pending()
    assert system.memory(summary_id).index_state == "indexed"
    assert_nowhere(every_reader(system, tmp_path))
    assert check(system.env).clean


class FailingOnce(ExtractiveSummariser):
    def __init__(self) -> None:
        super().__init__()
        self.fail = False

    def summarise(self, sentences: list[Sentence], max_sentences: int = 2) -> str:
        if self.fail:
            raise AiError("the summariser is down")
        return super().summarise(sentences, max_sentences)


def test_a_summariser_that_fails_leaves_the_summary_hidden_for_the_next_retry(clock: SimClock, tmp_path: Path) -> None:
    summariser = FailingOnce()
    system = MemorySystem(build_env(clock), clock=clock, summariser=summariser)
    ids = memories_of_day_one(system, clock)
    summary_id = next(m.id for m in store.all_memories(system.env.DB) if m.kind == "summary")
    summariser.fail = True
    system.forget(ids[DEBT])
    assert system.memory(summary_id).index_state == "forgetting" and not system.nothing_to_retry()
    summariser.fail = False
    system.retry_pending()
    assert system.memory(summary_id).index_state == "indexed"
    assert_nowhere(every_reader(system, tmp_path))


def test_update_memory_reembeds_and_remakes_the_summary(system: MemorySystem, clock: SimClock, tmp_path: Path) -> None:
    ids = memories_of_day_one(system, clock)
    summary_id = next(m.id for m in store.all_memories(system.env.DB) if m.kind == "summary")
    fixed = "Oswin paid me back the three coppers for the ale."
    updated = system.update_memory(ids[DEBT], content=fixed)
    assert (updated.content, updated.index_state) == (fixed, "indexed")
    [vector] = system.env.VECTORIZE.get_by_ids([ids[DEBT]])
    assert vector.metadata["textPreview"] == fixed  # embedded again
    # found again by its new words (second at most: the three are opinions of Oswin, one state key, and recall
    # puts the current one, the well, first)
    found = [r.id for r in system.recall("mira", "paid back coppers", top_k=2, mode="vector")]
    assert ids[DEBT] in found or summary_id in found
    assert "coppers" in store.diary(system.env.DB, "mira", 1)
    assert_nowhere(every_reader(system, tmp_path))
    with pytest.raises(InvalidInput, match="content"):
        system.update_memory(ids[PIES], content=" ")
    system.forget(ids[PIES])
    with pytest.raises(InvalidInput, match="forgotten"):
        system.update_memory(ids[PIES], content="x")


def test_a_summary_is_not_corrected_its_sources_are(system: MemorySystem, clock: SimClock) -> None:
    """Before, update_memory rewrote a summary, and the next forget of one of its sources remade it from the
    sources and silently dropped the correction."""
    ids = memories_of_day_one(system, clock)
    summary = next(m for m in store.all_memories(system.env.DB) if m.kind == "summary")
    with pytest.raises(InvalidInput, match="consolidation summary.*correct or forget those"):
        system.update_memory(summary.id, content="Mira owes nobody anything.")
    assert system.memory(summary.id).content == summary.content  # unchanged
    system.update_memory(ids[DEBT], content="Oswin paid me back the three coppers for the ale.")
    assert "silver" in summary.content and "silver" not in system.memory(summary.id).content  # made again from it
