"""One run of an experiment from its first sim day, in a data folder of its own, and the result rows it gives:
what every way of running a spec (in this process, in `--jobs` processes, as Ray tasks) executes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_sim.experiments.probes import DayRecord, Timer
from memory_sim.experiments.spec import Run, Target

OnDay = Callable[[Run, int], None]


def execute(
    run: Run, target: Target, folder: Path, on_day: OnDay, timer: Timer, dataset: Path | None = None
) -> dict[str, list[dict[str, Any]]]:
    """One run from its first sim day, in `folder`; returns its rows for every table of the store. `dataset`:
    where LoCoMo's file is read from when not at the spec's path (a Ray worker's copy); the rows name the spec's."""
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    if target.kind == "locomo":
        from memory_sim.experiments.locomo import run_locomo

        read_from = target if dataset is None else target.model_copy(update={"dataset": dataset})
        records = run_locomo(data, run.config, read_from, lambda day: on_day(run, day), timer)
    else:
        from memory_sim.experiments.village import run_village

        records = run_village(data, run.config, run.seed, lambda day: on_day(run, day), timer)
    return rows_of(run, target, records)


def rows_of(run: Run, target: Target, records: list[DayRecord]) -> dict[str, list[dict[str, Any]]]:
    run_row = {"run_id": run.id, "position": run.position, "variant": run.variant, "seed": run.seed,
               "target": target.kind, "dataset": None if target.dataset is None else str(target.dataset),
               "conversations": target.conversations, **run.config.flat()}
    mine = {"run_id": run.id}
    return {
        "runs": [run_row],
        "daily_metrics": [mine | r.daily_row() for r in records],
        "question_results": [mine | {"day": r.day} | q for r in records for q in r.questions],
        "measurements": [mine | r.measurement_row() for r in records],
    }
