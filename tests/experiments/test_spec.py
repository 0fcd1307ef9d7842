"""The spec: grid and explicit variants expand into runs with stable ids; a bad spec is one line naming what is
wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.errors import ConfigError
from memory_sim.experiments.spec import KNOBS, load_spec, parse_spec
from memory_sim.memory.models import MemoryConfig


def test_grid_and_variants_expand_into_runs_per_seed() -> None:
    spec = parse_spec({
        "name": "sweep",
        "base": {"seeds": [1, 2], "npcs": 4, "decay_rate": 0.04},
        "grid": {"decay_rate": [0.02, 0.1], "consolidation_hours": [6, 24]},
        "variants": [{"name": "never consolidate", "consolidation_hours": 10_000}],
    })
    assert [r.variant for r in spec.runs[::2]] == [
        "decay_rate=0.02, consolidation_hours=6", "decay_rate=0.02, consolidation_hours=24",
        "decay_rate=0.1, consolidation_hours=6", "decay_rate=0.1, consolidation_hours=24", "never consolidate",
    ]
    assert [r.seed for r in spec.runs[:2]] == [1, 2] and len(spec.runs) == 10
    assert spec.varied == ("decay_rate", "consolidation_hours")
    last = spec.runs[-1].config
    assert (last.consolidation_hours, last.memory.decay_rate, last.npcs) == (10_000, 0.04, 4)
    assert spec.runs[0].config.memory == MemoryConfig(decay_rate=0.02)
    assert len({r.id for r in spec.runs}) == 10


def test_run_ids_depend_on_the_configuration_not_the_order() -> None:
    one = parse_spec({"name": "a", "grid": {"decay_rate": [0.02, 0.1]}})
    two = parse_spec({"name": "b", "grid": {"decay_rate": [0.1, 0.02]}})
    assert {r.id for r in one.runs} == {r.id for r in two.runs}
    three = parse_spec({"name": "a", "base": {"days": 15}, "grid": {"decay_rate": [0.02, 0.1]}})
    assert not {r.id for r in one.runs} & {r.id for r in three.runs}


def test_every_memory_config_knob_is_a_knob() -> None:
    assert set(MemoryConfig.model_fields) <= set(KNOBS)
    assert {"npcs", "days", "model", "recall_mode", "top_k", "consolidation_hours"} <= set(KNOBS)


@pytest.mark.parametrize(("raw", "message"), [
    ({"base": {"decay_rat": 0.1}}, "unknown knob in base: 'decay_rat'"),
    ({"base": {"decay_rate": "fast"}}, "decay_rate must be float, got 'fast'"),
    ({"base": {"index_threshold": 1.5}}, "index_threshold: Input should be less than or equal to 1, got 1.5"),
    ({"base": {"npcs": 1}}, "npcs: Input should be greater than or equal to 2"),
    ({"base": {"recall_mode": "psychic"}}, "recall_mode: Input should be 'vector', 'keyword' or 'hybrid'"),
    ({"base": {"model": "gpt-9"}}, "unknown embedding model 'gpt-9'"),
    ({"base": {"seeds": [1, 1]}}, "base.seeds must be a list of distinct whole numbers"),
    ({"grid": {"decay_rate": 0.1}}, "grid.decay_rate must be a non-empty list"),
    ({"grid": {"top_k": [0, 5]}}, "variant 'top_k=0': top_k: Input should be greater than or equal to 1"),
    ({"target": {"kind": "locomo"}}, "a LoCoMo target needs the path of locomo10.json"),
    ({"variants": [{"name": "x"}, {"name": "x", "npcs": 3}]}, "two variants share a name: 'x'"),
    ({"variants": [{"name": "x"}, {"name": "y"}]}, "two variants have the same configuration"),
    ({"bogus": 1}, "unknown top-level key: 'bogus'"),
])
def test_a_bad_spec_is_refused_in_one_line(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_spec({"name": "bad", **raw})
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_file_that_is_not_toml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "spec.toml"
    path.write_text("name = \n")
    with pytest.raises(ConfigError, match="spec.toml: cannot read the experiment spec"):
        load_spec(path)


def test_the_shipped_specs_are_valid() -> None:
    folder = Path(__file__).resolve().parents[2] / "experiments"
    specs = {p.stem: load_spec(p) for p in folder.glob("*.toml")}
    assert {"decay", "consolidation", "locomo-modes"} <= set(specs)
    assert len(specs["decay"].runs) == 9 and specs["decay"].varied == ("decay_rate",)
    assert specs["locomo-modes"].target.kind == "locomo"


def test_the_scoring_knob_keeps_default_run_ids_and_changes_others() -> None:
    from memory_sim.experiments.spec import RunConfig, run_id

    assert run_id("base", 1, RunConfig()) == "base-seed1-3a2bbacb11"  # the id before the knob existed
    spec = parse_spec({"name": "s", "grid": {"scoring": ["design", "generative-agents-code"]}})
    assert [r.config.scoring for r in spec.runs] == ["design", "generative-agents-code"]
    assert len({r.id for r in spec.runs}) == 2
    with pytest.raises(ConfigError, match="scoring"):
        parse_spec({"name": "s", "base": {"scoring": "psychic"}})


def test_weighted_probes_rank_by_the_runs_scoring_preset() -> None:
    from typing import Any

    from memory_sim.experiments.probes import ask

    class Recorder:
        def __init__(self) -> None:
            self.scorings: list[str] = []

        def weighted_recall(self, npc: str, query: str, today: int, **options: Any) -> list[Any]:
            self.scorings.append(options["scoring"])
            return []

    class Probe:
        npc, query = "ann", "the forge"

    system = Recorder()
    ask(system, Probe(), "weighted", "hybrid", 5, 3, "generative-agents-code")  # type: ignore[arg-type]
    ask(system, Probe(), "weighted", "hybrid", 5, 3)  # type: ignore[arg-type]
    assert system.scorings == ["generative-agents-code", "design"]


def test_a_results_folder_from_before_the_later_knobs_gains_their_columns(tmp_path: Path) -> None:
    import duckdb

    from memory_sim.experiments import store

    later = {"scoring", "query_cues", "calendar_start"}
    old = [(n, t) for n, t in store.columns()["runs"] if n not in later]
    with duckdb.connect(str(tmp_path / store.DATABASE)) as db:
        db.execute(f"CREATE TABLE runs ({', '.join(f'{n} {t}' for n, t in old)}, PRIMARY KEY (run_id))")
    row = {name: None for name, _ in store.columns()["runs"]} | {"run_id": "r1", "scoring": "design", "seed": 1}
    with store.connect(tmp_path) as db:
        store.save_run(db, {"runs": [row], "daily_metrics": [], "question_results": [], "measurements": []})
        assert db.execute("SELECT seed, scoring FROM runs").fetchall() == [(1, "design")]
