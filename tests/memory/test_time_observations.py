"""The issue's three observations about time, each a test that fails on the code before time was read: "What did
she do yesterday?" asked on day 15 ranked the day-14 memory 8th; "on day 12" found neither day-12 memory in the top
10; "after he came back from a trip" returned the trip itself. Siblings in other words too, in every mode."""

from __future__ import annotations

import pytest
from fortnight import MODES, ask, remember_fortnight, shown

from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock


@pytest.fixture
def ada(clock: SimClock) -> MemorySystem:  # clock: tests/memory/conftest.py's
    return remember_fortnight(clock)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("question", ["What did she do yesterday?", "Yesterday, what did Mira do?",
                                      "What happened yesterday afternoon?"])
def test_yesterday_asked_on_day_15_ranks_the_day_14_memory_first(ada: MemorySystem, mode: str,
                                                                 question: str) -> None:
    found = ask(ada, question, mode)
    assert found[0].id == "day14"
    assert shown(found, mode) == sorted(shown(found, mode), reverse=True)  # the score shown ordered the list


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("question", ["What happened on day 12?", "Day 12: what did I see?",
                                      "What did I see on April 18?", "What did I see three days ago?"])
def test_a_named_day_ranks_both_of_its_memories_first(ada: MemorySystem, mode: str, question: str) -> None:
    assert {r.id for r in ask(ada, question, mode)[:2]} == {"day12-a", "day12-b"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("question", ["What did Cole do after he came back from a trip?",
                                      "What did he do just after he got back from the coast?"])
def test_after_an_event_ranks_what_followed_it_first_never_the_event(ada: MemorySystem, mode: str,
                                                                     question: str) -> None:
    found = ask(ada, question, mode)
    assert found[0].id == "after-trip"
    assert "trip-back" not in [r.id for r in found[:1]]
