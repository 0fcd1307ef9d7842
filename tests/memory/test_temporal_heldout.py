"""The held-out temporal questions (tests/memory/data/temporal_heldout.json, never tuned on) on real parts: Chroma,
DuckDB and the bundled MiniLM. Goal: an expected memory in the top 3 for at least 0.9 of them in hybrid recall, the
default mode (scripts/measure_temporal.py reports every mode and family, before and after)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.eval.temporal import hit_rates, load_village, run_village

HELD_OUT = Path(__file__).parent / "data" / "temporal_heldout.json"
TUNING = Path(__file__).parent / "data" / "temporal_tuning.json"


def test_the_halves_are_apart_and_cover_every_phrasing_family() -> None:
    held_out, tuning = load_village(HELD_OUT), load_village(TUNING)
    assert len(held_out.questions) + len(tuning.questions) >= 60
    assert {m.npc_id for m in held_out.memories}.isdisjoint({m.npc_id for m in tuning.memories})
    assert {q.text for q in held_out.questions}.isdisjoint({q.text for q in tuning.questions})
    families = {"today", "yesterday", "days_ago", "last_week", "day_n", "part_of_day", "calendar", "weekday",
                "after", "before", "since", "last_time", "first_time"}
    assert {q.family for q in held_out.questions} == families == {q.family for q in tuning.questions}


@pytest.mark.slow
def test_held_out_questions_about_time_find_their_memory_in_the_top_3(tmp_path: Path) -> None:
    rows = run_village(load_village(HELD_OUT), modes=("hybrid",), work_dir=tmp_path)
    assert hit_rates(rows["hybrid"])["overall"] >= 0.9, [r for r in rows["hybrid"] if not r["hit"]]
