"""`memory-sim experiment report DIR`: the results database as Markdown and PNG plots.

report.md      what was run; a table per metric (rows: variants, columns: sim days, cells: mean +/- spread
               across seeds, the spread being the sample standard deviation); for LoCoMo, recall per category
summary.png    four headline metrics over sim days (vectors, pruned, plain and weighted precision@5)
days.png       every metric over sim days, a line per variant (the band: +/- spread)
vs_<knob>.png  the final day's metrics against each varied knob
"""

from __future__ import annotations

import importlib.util
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_sim.experiments import store
from memory_sim.experiments.probes import COUNTS

MEASURED = ("d1_bytes", "index_bytes", "plain_p50_ms", "weighted_p50_ms")
METRICS = (*COUNTS, *store.QUALITY, *MEASURED)
TITLES = {
    "plain_precision_at_5": "plain recall: precision@5", "plain_recall_at_5": "plain recall: recall@5",
    "plain_recall_at_10": "plain recall: recall@10", "plain_hit_at_1": "plain recall: hit@1",
    "weighted_precision_at_5": "weighted recall: precision@5", "weighted_recall_at_5": "weighted recall: recall@5",
    "weighted_recall_at_10": "weighted recall: recall@10", "weighted_hit_at_1": "weighted recall: hit@1",
    "plain_p50_ms": "plain recall p50 (ms)", "weighted_p50_ms": "weighted recall p50 (ms)",
    "d1_bytes": "D1 size (bytes)", "index_bytes": "index size (bytes)",
}
SUMMARY = ("vectors", "pruned", "plain_precision_at_5", "weighted_precision_at_5")  # summary.png
COLUMNS_SHOWN = 5  # sim days per Markdown table


@dataclass(frozen=True, slots=True)
class Results:
    spec: dict[str, str]
    runs: list[dict[str, Any]]
    days: list[dict[str, Any]]  # daily_metrics joined with measurements
    categories: list[dict[str, Any]]  # the last day's question results by variant, seed, category, method

    @property
    def variants(self) -> list[str]:
        return list(dict.fromkeys(r["variant"] for r in sorted(self.runs, key=lambda r: r["position"])))

    def series(self, variant: str, metric: str) -> dict[int, list[float]]:
        """sim day -> the metric's values across the variant's seeds."""
        out: dict[int, list[float]] = {}
        for row in self.days:
            if row["variant"] == variant and row[metric] is not None:
                out.setdefault(int(row["day"]), []).append(float(row[metric]))
        return dict(sorted(out.items()))

    def final(self, variant: str, metric: str) -> list[float]:
        """The metric on each of the variant's runs' last day."""
        last: dict[str, dict[str, Any]] = {}
        for row in self.days:
            if row["variant"] == variant and row[metric] is not None and (
                row["run_id"] not in last or row["day"] > last[row["run_id"]]["day"]
            ):
                last[row["run_id"]] = row
        return [float(r[metric]) for r in last.values()]


def load(folder: Path) -> Results:
    with store.connect(folder, read_only=True) as db:
        runs = store.records(db, "SELECT * FROM runs ORDER BY position")
        days = store.records(
            db,
            "SELECT d.*, r.variant, r.seed, m.d1_bytes, m.index_bytes, m.plain_p50_ms, m.weighted_p50_ms"
            " FROM daily_metrics d JOIN runs r USING (run_id) LEFT JOIN measurements m USING (run_id, day)"
            " ORDER BY r.position, d.day",
        )
        categories = store.records(
            db,
            "SELECT r.variant, r.seed, q.category, q.method, AVG(q.recall_at_5) AS recall_at_5,"
            " AVG(q.recall_at_10) AS recall_at_10, COUNT(*) AS questions FROM question_results q"
            " JOIN runs r USING (run_id) WHERE q.day = (SELECT MAX(day) FROM question_results x"
            " WHERE x.run_id = q.run_id) GROUP BY ALL ORDER BY r.variant, q.category, q.method, r.seed",
        )
        return Results(store.spec_of(db), runs, days, categories)


def spread(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value)."""
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def cell(values: Sequence[float], metric: str) -> str:
    if not values:
        return ""
    mean, sd = spread(values)
    digits = 3 if metric in store.QUALITY else (2 if metric.endswith("_ms") else 0)
    if digits == 0:
        return f"{mean:,.0f} ± {sd:,.0f}"
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def shown_days(days: Sequence[int]) -> list[int]:
    if len(days) <= COLUMNS_SHOWN:
        return list(days)
    step = (len(days) - 1) / (COLUMNS_SHOWN - 1)
    return [days[round(i * step)] for i in range(COLUMNS_SHOWN)]


def varied(results: Results) -> list[str]:
    """The knobs whose values differ between runs, in the runs table's column order."""
    knobs = [k for k in results.runs[0] if k not in ("run_id", "position", "variant", "seed")] if results.runs else []
    return [k for k in knobs if len({repr(r[k]) for r in results.runs}) > 1]


def markdown(results: Results, plots: Sequence[str] = ()) -> str:
    runs, spec = results.runs, results.spec
    if not runs:
        return f"# Experiment: {spec.get('name', '?')}\n\nNo run has finished yet.\n"
    knobs = varied(results)
    fixed = {k: v for k, v in runs[0].items() if k not in (*knobs, "run_id", "position", "variant", "seed")}
    lines = [
        f"# Experiment: {spec.get('name', '?')}",
        "",
        *([description(spec), ""] if description(spec) else []),
        f"{len(runs)} runs: {len(results.variants)} variants x seeds {sorted({r['seed'] for r in runs})}; "
        f"varied: {', '.join(knobs) or 'nothing'}. Cells: mean ± spread (sample standard deviation) across seeds.",
        "",
        "Fixed: " + ", ".join(f"{k}={v}" for k, v in fixed.items() if v is not None) + ".",
    ]
    lines += [f"\n![{p}]({p})" for p in plots]
    for metric in METRICS:
        all_days = sorted({int(r["day"]) for r in results.days if r[metric] is not None})
        if not all_days:
            continue
        days = shown_days(all_days)
        lines += ["", f"## {TITLES.get(metric, metric)}", "",
                  "| variant | " + " | ".join(f"day {d}" for d in days) + " |", "|---" * (len(days) + 1) + "|"]
        for variant in results.variants:
            series = results.series(variant, metric)
            lines.append(f"| {variant} | " + " | ".join(cell(series.get(d, []), metric) for d in days) + " |")
    lines += category_markdown(results)
    lines += ["", "## The spec", "", "```toml", spec.get("spec", "").strip(), "```"]
    return "\n".join(lines) + "\n"


def description(spec: dict[str, str]) -> str:
    import tomllib

    try:
        return str(tomllib.loads(spec.get("spec", "")).get("description", ""))
    except tomllib.TOMLDecodeError:
        return ""


def category_markdown(results: Results) -> list[str]:
    """LoCoMo's per-category recall@5 on the last day, plain and weighted."""
    if not results.runs or results.runs[0]["target"] != "locomo":
        return []
    names = sorted({r["category"] for r in results.categories})
    lines = ["", "## Recall@5 per question category (last day)", "",
             "| variant | method | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    for variant in results.variants:
        for method in ("plain", "weighted"):
            cells = [cell([float(r["recall_at_5"]) for r in results.categories if r["variant"] == variant
                           and r["method"] == method and r["category"] == n], "plain_recall_at_5") for n in names]
            lines.append(f"| {variant} | {method} | " + " | ".join(cells) + " |")
    return lines


def plot_days(results: Results, path: Path, chosen: Sequence[str] = METRICS) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [m for m in chosen if any(r[m] is not None for r in results.days)]
    cols = 4
    rows = -(-len(metrics) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.8 * rows), squeeze=False)
    for ax, metric in zip(axes.flat, metrics, strict=False):
        for variant in results.variants:
            series = results.series(variant, metric)
            days = list(series)
            means = [spread(v) for v in series.values()]
            ax.plot(days, [m for m, _ in means], marker=".", label=variant)
            ax.fill_between(days, [m - s for m, s in means], [m + s for m, s in means], alpha=0.2)
        ax.set_title(TITLES.get(metric, metric), fontsize=9)
        ax.set_xlabel("sim day", fontsize=8)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(metrics):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8)
    fig.tight_layout(rect=(0, 0.45 / (2.8 * rows), 1, 1))  # room for the legend: about 0.45 inch
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_knob(results: Results, knob: str, path: Path) -> None:
    """Each metric's last-day value (mean +/- spread across seeds) against the knob's values."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [m for m in METRICS if any(r[m] is not None for r in results.days)]
    value_of = {r["variant"]: r[knob] for r in results.runs}
    values = list(dict.fromkeys(value_of[v] for v in results.variants))
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    cols = 4
    rows = -(-len(metrics) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.8 * rows), squeeze=False)
    for ax, metric in zip(axes.flat, metrics, strict=False):
        for variant in results.variants:
            finals = results.final(variant, metric)
            if finals:
                mean, sd = spread(finals)
                x = value_of[variant] if numeric else values.index(value_of[variant])
                ax.errorbar([x], [mean], yerr=[sd], fmt="o", capsize=3, color="C0")
        if not numeric:
            ax.set_xticks(range(len(values)), [str(v) for v in values])
        ax.set_title(TITLES.get(metric, metric), fontsize=9)
        ax.set_xlabel(knob, fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(metrics):]:
        ax.axis("off")
    fig.suptitle(f"last sim day against {knob} (mean ± spread across seeds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def write_report(folder: Path, to: Path | None = None) -> Path:
    """report.md and the PNGs into `to` (default `<folder>/report`); returns the Markdown's path."""
    results = load(folder)
    target = to or folder / "report"
    target.mkdir(parents=True, exist_ok=True)
    plots = ["summary.png", "days.png"]
    if results.runs and importlib.util.find_spec("matplotlib") is not None:
        plot_days(results, target / "summary.png", SUMMARY)
        plot_days(results, target / "days.png")
        for knob in varied(results):
            plot_knob(results, knob, target / f"vs_{knob}.png")
            plots.append(f"vs_{knob}.png")
    path = target / "report.md"
    drawn = [p for p in plots if (target / p).is_file()]
    path.write_text(markdown(results, drawn), "utf-8")
    return path
