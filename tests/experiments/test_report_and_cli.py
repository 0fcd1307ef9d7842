"""The commands end to end: `experiment run` on a village and a LoCoMo-shaped file, `report` (Markdown tables of
mean ± spread, PNG plots), `export` (Parquet and CSV that read back to the same rows), and bad input in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from experiment_helpers import TINY, write_locomo

from memory_sim.cli import main
from memory_sim.experiments import store
from memory_sim.experiments.report import METRICS, load, markdown, spread

LOCOMO_SPEC = """
name = "modes"
[target]
kind = "locomo"
dataset = "{dataset}"
[base]
model = "fake/hashing"
d1_engine = "sqlite"
[grid]
recall_mode = ["keyword", "hybrid"]
"""


@pytest.fixture(scope="module")
def village(fast_module_tmp: Path) -> Path:
    spec = fast_module_tmp / "tiny.toml"
    spec.write_text(TINY.replace("days = 3", "days = 2"))
    assert main(["experiment", "run", str(spec), "--quiet"]) == 0
    return fast_module_tmp / "results" / "tiny"  # the default: results/<name> beside the spec


def test_report_has_a_table_per_metric_and_the_plots(village: Path, tmp_path: Path) -> None:
    assert main(["experiment", "report", str(village), "--to", str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text()
    results = load(village)
    for metric in ("memories", "vectors", "pending", "consolidated", "pruned", "forgotten", "plain_precision_at_5",
                   "weighted_recall_at_10", "plain_p50_ms", "d1_bytes", "index_bytes"):
        assert metric in METRICS
    assert text.count("\n## ") == len(METRICS) + 1  # and the spec
    memories = results.series("decay_rate=0.6", "memories")[1]
    mean, sd = spread(memories)
    assert "| decay_rate=0.6 | " in text and f"{mean:,.0f} ± {sd:,.0f}" in text
    for png in ("days.png", "vs_decay_rate.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"({png})" in text


def test_export_reads_back_to_the_same_rows(village: Path, tmp_path: Path) -> None:
    import duckdb

    assert main(["experiment", "export", str(village), "--to", str(tmp_path / "pq")]) == 0
    assert main(["experiment", "export", str(village), "--format", "csv", "--to", str(tmp_path / "csv")]) == 0
    with store.connect(village, read_only=True) as db:
        for table in store.TABLES:
            rows = store.table_rows(db, table)
            keys = ", ".join(store.KEYS[table])
            parquet = duckdb.sql(f"SELECT * FROM '{tmp_path / 'pq' / table}.parquet' ORDER BY {keys}").fetchall()
            csv = duckdb.sql(f"SELECT * FROM read_csv('{tmp_path / 'csv' / table}.csv') ORDER BY {keys}").fetchall()
            assert parquet == rows and len(csv) == len(rows) > 0


def test_locomo_target_records_per_category_recall(fast_tmp: Path) -> None:
    dataset = write_locomo(fast_tmp / "locomo.json")
    spec = fast_tmp / "modes.toml"
    spec.write_text(LOCOMO_SPEC.format(dataset=dataset))
    assert main(["experiment", "run", str(spec), "--out", str(fast_tmp / "out"), "--quiet"]) == 0
    with store.connect(fast_tmp / "out", read_only=True) as db:
        rows = store.records(db, "SELECT q.*, r.recall_mode FROM question_results q JOIN runs r USING (run_id)")
        days = store.records(db, "SELECT day, memories, questions FROM daily_metrics ORDER BY run_id, day")
    assert {r["category"] for r in rows} == {"single-hop", "temporal", "multi-hop"}
    assert len(rows) == 2 * 2 * 4  # modes x methods x questions, on the last day only
    assert [d["day"] for d in days[:3]] == [0, 7, 8] and [d["memories"] for d in days[:3]] == [8, 16, 16]
    cat = next(r for r in rows if r["question_id"] == "conv-x:q0" and r["recall_mode"] == "keyword")
    assert cat["recall_at_5"] == 1.0  # "cat" and "Ann's" find "I adopted a grey cat called Pixel" by BM25
    text = markdown(load(fast_tmp / "out"))  # the Markdown alone: the plots are tested on the village
    assert "## Recall@5 per question category" in text and "| recall_mode=hybrid | weighted |" in text


@pytest.mark.parametrize(("argv", "message"), [
    (["experiment", "run", "missing.toml"], "missing.toml"),
    (["experiment", "report", "nowhere"], "nowhere"),
    (["experiment", "run", "{spec}", "--jobs", "0"], "jobs must be in 1..64"),
])
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], message: str, tiny_spec: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([a.replace("{spec}", str(tiny_spec)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_report_of_a_folder_without_results_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["experiment", "report", str(tmp_path)]) == 2
    assert "no experiment here" in capsys.readouterr().err


def test_the_progress_bar_shows_runs_done_and_the_sim_day(fast_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = fast_tmp / "one.toml"
    spec.write_text(TINY.replace("seeds = [1, 2]", "seeds = [1]").replace("decay_rate = [0.05, 0.6]", "npcs = [2]"))
    assert main(["experiment", "run", str(spec)]) == 0
    captured = capsys.readouterr()
    assert "1 runs done, 0 finished before" in captured.out
    frames = captured.err.replace("\r", "\n")
    assert "0/1" in frames and "1/1" in frames and ": sim day 2" in frames


def test_run_on_ray_without_ray_says_the_pip_command(tiny_spec: Path, fast_tmp: Path) -> None:
    hide_ray = "import sys; sys.modules['ray'] = None; from memory_sim.cli import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-c", hide_ray, "experiment", "run", str(tiny_spec), "--out",
                           str(fast_tmp / "out"), "--ray", "--quiet"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == ["error: Ray is not installed: pip install 'memory-sim[ray]'"]
