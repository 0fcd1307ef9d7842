"""Reproducible experiments over the memory system: a TOML spec names a target (the seeded village or LoCoMo), a
base configuration and its variations; every run (variant x seed) gets its own data folder, and its per-day
figures land in one DuckDB database; a report turns them into Markdown tables and PNG plots.

    spec.py     the spec: parsed with tomllib, validated with pydantic, expanded into runs
    village.py  one run of the seeded village, probed every sim day
    locomo.py   one run on LoCoMo, per-category recall at the end
    probes.py   what a run records each day: counts, recall quality, latency, sizes
    runner.py   the runs, in order or in processes; finished runs skipped, half-done ones started again
    store.py    the DuckDB database (tables runs, daily_metrics, question_results, measurements), its export
    report.py   Markdown tables (mean +/- spread across seeds) and PNG plots
"""
