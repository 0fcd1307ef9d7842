"""An experiment's name stays inside `results/`, and a sweep of more runs than anyone meant is refused before
its grid is expanded: a 3,000,000-run spec answers at once, in one line, with exit 2 on the CLI."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.errors import ConfigError
from memory_sim.experiments.spec import HARD_MAX_RUNS, MAX_RUNS, parse_spec


@pytest.mark.parametrize("name", ["../../escape", "/tmp/abs", "a/b", "..", ".hidden", "x\\y", "a" * 65, "-flag"])
def test_a_name_that_is_not_a_slug_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="name must be a slug") as caught:
        parse_spec({"name": name})
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", ["decay", "locomo-modes", "run_2.v3", "A1"])
def test_slugs_are_accepted(name: str) -> None:
    assert parse_spec({"name": name}).name == name


def test_the_cli_writes_nothing_outside_results_for_an_escaping_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "specs" / "evil.toml"
    spec.parent.mkdir()
    spec.write_text('name = "../../escaped"\n[base]\nseeds = [1]\ndays = 1\nnpcs = 2\n')
    assert main(["experiment", "run", str(spec), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "name must be a slug" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["specs"]


def _grid(values_per_knob: int, knobs: int = 3) -> dict[str, list[float]]:
    names = ["decay_rate", "index_threshold", "forget_threshold", "keep_importance"][:knobs]
    return {name: [round(0.001 * (i + 1), 6) for i in range(values_per_knob)] for name in names}


def test_a_huge_grid_is_refused_before_it_is_expanded() -> None:
    raw = {"name": "huge", "base": {"seeds": [1, 2, 3]}, "grid": _grid(100)}  # 3,000,000 runs
    started, before = time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ConfigError) as caught:
        parse_spec(raw, confirm_runs=True)
    assert f"the spec makes 3,000,000 runs, over the limit of {HARD_MAX_RUNS:,}" in str(caught.value)
    # counted, not expanded: a few list lengths (a generous bound; expanding took 120 s and 2.85 GB)
    assert time.process_time() - started < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB


def test_more_runs_than_the_cap_need_confirming() -> None:
    raw = {"name": "big", "base": {"seeds": [1, 2]}, "grid": {"decay_rate": [0.001 * i for i in range(1, 502)]}}
    with pytest.raises(ConfigError, match=f"the spec makes 1,002 runs, over {MAX_RUNS:,}: pass --yes"):
        parse_spec(raw)
    assert len(parse_spec(raw, confirm_runs=True).runs) == 1002


def test_the_cli_asks_for_yes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "big.toml"
    values = ", ".join(str(0.001 * i) for i in range(1, 1002))
    spec.write_text(f'name = "big"\n[base]\nseeds = [1]\n[grid]\ndecay_rate = [{values}]\n')
    assert main(["experiment", "run", str(spec), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "pass --yes" in err and err.count("\n") == 1
    assert not (tmp_path / "results").exists()
