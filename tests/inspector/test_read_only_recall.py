"""Each recollection is labelled with what answered it; a fallback to D1 is said where it happens (one warning
line with its cause) and counted; the inspector, a read-only face, counts nothing and records no access."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from inspector_helpers import inspector, open_folder

from memory_sim.env import Env
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem

HIGH, LOW = "The cellar flooded again after the storm.", "The cellar door sticks in the damp."


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "inn"
    with Env.local(folder, embed_model="fake/hashing", environ={}, serve_owner=False) as env:
        system = MemorySystem(env, clock=lambda: 3 * 86400.0)
        system.remember(ShortTermMemory("ada", HIGH, 0.9, WorldTime(2, 9)))
        system.remember(ShortTermMemory("bram", LOW, 0.3, WorldTime(2, 10)))  # D1 only: the index has none of his
    return folder


def _counts(folder: Path) -> tuple[int, int]:
    """The fallbacks counted, and the memories whose last access is recorded."""
    with open_folder(folder) as env:
        accessed = env.DB.prepare("SELECT COUNT(*) AS n FROM short_term_memories WHERE recalled_hour IS NOT NULL")
        return int(store.counters(env.DB).get("fallbacks", 0)), int(accessed.first("n") or 0)


def test_each_result_says_what_answered_and_a_fallback_says_why(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    folder = _folder(tmp_path)
    with open_folder(folder) as env:
        system = MemorySystem(env, clock=lambda: 3 * 86400.0)
        with caplog.at_level(logging.WARNING, logger="memory_sim.memory"):
            assert [r.source for r in system.recall("ada", "cellar storm", mode="keyword")] == ["keyword"]
            assert [r.source for r in system.recall("ada", "cellar storm", mode="vector")] == ["vectorize"]
            assert not [m for m in caplog.messages if "answered from D1" in m]  # the index answered: nothing to say
            assert system.recall("bram", "cellar door") == []  # hybrid ranks what is indexed or pending only
            assert [r.source for r in system.recall("bram", "cellar door", mode="vector")] == ["short_term"]
        fell_back = [m for m in caplog.messages if "answered from D1" in m]
        assert fell_back == 2 * ["recall of 'bram' answered from D1 without the vector index: the index holds none "
                                 "of this NPC's memories (none above the index threshold yet, or all pruned)"]
        assert system.stats()["fallbacks"] == 2


def test_the_inspector_counts_nothing_and_records_no_access(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    before = _counts(folder)
    with inspector(folder) as ui:
        for npc, mode, weighted in (("bram", "vector", "false"), ("bram", "hybrid", "true"), ("ada", "hybrid", "true")):
            found = ui.json("/ui/api/recall", npc=npc, q="cellar", mode=mode, weighted=weighted, day=3)["results"]
            assert [r["text"] for r in found] == [HIGH if npc == "ada" else LOW][: len(found)]
            assert npc == "bram" or found
    assert _counts(folder) == before
    with open_folder(folder) as env:  # the library, not read-only, counts the same recall
        system = MemorySystem(env, clock=lambda: 3 * 86400.0)
        assert system.recall("bram", "cellar", mode="vector") and system.weighted_recall("ada", "cellar")
    assert _counts(folder) == (before[0] + 1, before[1] + 1)
