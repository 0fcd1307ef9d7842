"""SIGKILL a village run at seeded random moments, restart it, and check after each kill that nothing
acknowledged is lost, that a plain start (the folder's own world time, one retry_pending) leaves nothing pending
and every due memory indexed exactly once, and that D1 and the index agree. Small here (3 kills, ~250 memories);
scripts/crash_trials.py runs the issue's 20 kills over 10,000."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])  # sqlite: WAL with synchronous=NORMAL, its default
def test_sigkill_loses_nothing_and_leaves_no_drift(tmp_path: Path, engine: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from crash_trials import run_trials

    monkeypatch.setenv("MEMORY_SIM_D1_ENGINE", engine)  # the children's Env.local reads it

    result = run_trials(tmp_path, memories=250, kills=3, seed=3, jitter_s=0.3)
    kills = result["verdicts"][:-1]
    assert len(kills) == 3
    assert result["lost"] == 0  # every id remember_many returned is in D1
    assert result["duplicates"] == 0 and result["missing_after_retry"] == 0
    assert result["pending_after_retry"] == 0  # no hand-picked clock: the plain start takes what was left
    assert result["all_clean_after_repair"]
    final = result["verdicts"][-1]
    assert final["acked"] == final["memories_in_d1"] >= 250  # the run finished: the whole village is in D1
    assert final["drift"] == {} and final["vectors"] == final["due"] > 0


def test_ack_log_ignores_a_torn_last_line(tmp_path: Path) -> None:
    from crash_trials import read_log

    log = tmp_path / "acked.log"
    log.write_text("id a\nhour 0\nid b\nhour 1\nid c\nhou", "utf-8")
    assert read_log(log) == ({"a", "b", "c"}, 1)
