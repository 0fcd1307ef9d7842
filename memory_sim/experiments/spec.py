"""The experiment spec: a TOML file naming a target, a base configuration and its variations.

    name = "decay"
    [target]
    kind = "village"                 # or "locomo", with dataset = "path/to/locomo10.json" (and conversations = N)
    [base]
    seeds = [1, 2, 3]
    npcs = 6
    days = 12
    decay_rate = 0.04                # any MemoryConfig knob, by its name
    [grid]
    decay_rate = [0.02, 0.08, 0.2]   # every combination of the listed values
    [[variants]]                     # and/or explicit variants, each a set of overrides (and an optional name)
    name = "no consolidation"
    consolidation_hours = 100000

The name is a slug (letters, digits, `.`, `_`, `-`; 64 at most), since it names the results folder
(`results/<name>`). A spec of more than `MAX_RUNS` runs needs `confirm_runs=True` (`experiment run --yes`), and
more than `HARD_MAX_RUNS` is refused: both counted before the grid is expanded.

Every run is one variant with one seed; its id is a digest of everything that decides its results, so the same
spec always gives the same runs and a finished one is recognised when the experiment is run again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memory_sim.bindings.limits import VECTORIZE_MAX_TOP_K
from memory_sim.errors import ConfigError
from memory_sim.memory.models import MemoryConfig
from memory_sim.memory.recalling.presets import Scoring
from memory_sim.settings import HASHING_MODEL, KNOWN_MODELS

MAX_RUNS = 1000  # more needs --yes
HARD_MAX_RUNS = 100_000  # never: a spec that large is several experiments
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"  # the bundled model: no download, the same everywhere
MEMORY_KNOBS: tuple[str, ...] = tuple(MemoryConfig.model_fields)
_LATER_KNOBS: dict[str, object] = {"scoring": "design", "query_cues": True, "calendar_start": ""}


class RunConfig(BaseModel):
    """What one run is set to, besides its seed: the simulation, the recall asked, the jobs' periods (sim hours)
    and every MemoryConfig knob (`memory`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    npcs: int = Field(default=8, ge=2, le=10, description="villagers (village only)")
    days: int = Field(default=14, ge=1, le=3650, description="sim days (village only)")
    model: str = DEFAULT_MODEL
    recall_mode: Literal["vector", "keyword", "hybrid"] = "hybrid"
    scoring: Scoring = Field(default="design", description="how weighted recall ranks (recalling/presets.py)")
    top_k: int = Field(default=10, ge=1, le=VECTORIZE_MAX_TOP_K)
    d1_engine: Literal["duckdb", "sqlite"] = "duckdb"
    consolidation_hours: int = Field(default=6, ge=1, description="the consolidation job's period")
    decay_hours: int = Field(default=24, ge=1, description="the decay-and-prune job's period")
    retry_hours: int = Field(default=1, ge=1, description="the retry job's period")
    memory: MemoryConfig = Field(default_factory=MemoryConfig)

    def flat(self) -> dict[str, Any]:
        """Every knob under its own name (MemoryConfig's fields beside the run's own)."""
        values = self.model_dump(exclude={"memory"})
        return values | self.memory.model_dump()


RUN_KNOBS: tuple[str, ...] = tuple(n for n in RunConfig.model_fields if n != "memory")
KNOBS: tuple[str, ...] = RUN_KNOBS + MEMORY_KNOBS


class Target(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["village", "locomo"] = "village"
    dataset: Path | None = Field(default=None, description="LoCoMo's locomo10.json (never bundled: give its path)")
    conversations: int | None = Field(default=None, ge=1, description="LoCoMo: only the first N conversations")


@dataclasses.dataclass(frozen=True, slots=True)
class Run:
    """One run of the experiment: a variant of the base configuration with one seed."""

    position: int  # its place in the spec's order (reports list variants in this order)
    variant: str
    seed: int
    config: RunConfig
    varied: tuple[str, ...]  # the knobs this spec varies

    @property
    def id(self) -> str:
        return run_id(self.variant, self.seed, self.config)


@dataclasses.dataclass(frozen=True, slots=True)
class Spec:
    name: str
    description: str
    target: Target
    runs: tuple[Run, ...]
    varied: tuple[str, ...]
    text: str  # the TOML as given, kept with the results

    def canonical(self) -> str:
        """What decides the results (target and runs), as one JSON text: two specs agreeing here are the same."""
        target = self.target.model_dump(mode="json")
        return json.dumps({"target": target, "runs": [r.id for r in self.runs]}, sort_keys=True)


def run_id(variant: str, seed: int, config: RunConfig) -> str:
    """Readable and stable: the variant's label as a slug, the seed, and a digest of the whole configuration.
    Knobs added later are left out of the digest at their defaults, so runs recorded before they existed keep
    their ids."""
    flat = config.flat()
    for knob, default in _LATER_KNOBS.items():
        if flat[knob] == default:
            del flat[knob]
    text = json.dumps({"seed": seed, "config": flat}, sort_keys=True)
    digest = hashlib.blake2b(text.encode(), digest_size=5).hexdigest()
    slug = re.sub(r"[^a-z0-9.]+", "-", variant.lower()).strip("-")[:48] or "base"
    return f"{slug}-seed{seed}-{digest}"


def load_spec(path: str | Path, *, confirm_runs: bool = False) -> Spec:
    """The spec in the TOML file at `path`; a bad one raises ConfigError naming the file and what is wrong.
    `confirm_runs`: more than MAX_RUNS runs were asked for knowingly (`--yes`)."""
    where = Path(path)
    try:
        text = where.read_text("utf-8")
        raw = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read the experiment spec: {exc}") from exc
    try:
        return parse_spec(raw, text, confirm_runs=confirm_runs)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def parse_spec(raw: dict[str, Any], text: str = "", *, confirm_runs: bool = False) -> Spec:
    known = {"name", "description", "target", "base", "grid", "variants"}
    _refuse_unknown("top-level key", raw, known)
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("the spec needs a name (name = \"...\")")
    if not NAME.fullmatch(name.strip()):
        raise ConfigError(f"name must be a slug (letters, digits, '.', '_', '-', at most 64, not starting with "
                          f"'.' or '-'): it names the results folder; got {name!r}")
    target = _validated(Target, dict(raw.get("target", {})), "target")
    if target.kind == "locomo" and target.dataset is None:
        raise ConfigError("target.dataset: a LoCoMo target needs the path of locomo10.json")
    base = dict(_table(raw, "base"))
    seeds = base.pop("seeds", [0])
    if not isinstance(seeds, list) or not seeds or not all(type(s) is int for s in seeds) or len(set(seeds)) < len(
        seeds
    ):
        raise ConfigError(f"base.seeds must be a list of distinct whole numbers, got {seeds!r}")
    _check_run_count(_table(raw, "grid"), raw.get("variants", []), len(seeds), confirm_runs)
    variants = _variants(_table(raw, "grid"), raw.get("variants", []))
    varied = tuple(dict.fromkeys(k for _, overrides in variants for k in overrides))
    runs, position = [], 0
    for label, overrides in variants:
        config = run_config({**base, **overrides}, f"variant {label!r}" if overrides else "base")
        for seed in seeds:
            runs.append(Run(position, label, seed, config, varied))
            position += 1
    configs = [json.dumps(r.config.flat(), sort_keys=True) for r in runs[:: len(seeds)]]
    if len(set(configs)) < len(configs):
        raise ConfigError("two variants have the same configuration (each variant must change something)")
    return Spec(name.strip(), str(raw.get("description", "")), target, tuple(runs), varied, text)


def _check_run_count(grid: dict[str, Any], explicit: Any, seeds: int, confirmed: bool) -> None:
    """The number of runs, counted from the lists' lengths before anything is expanded."""
    combos = 0
    if grid:
        combos = 1
        for values in grid.values():
            combos *= len(values) if isinstance(values, list) else 1
    runs = (combos + (len(explicit) if isinstance(explicit, list) else 0) or 1) * seeds
    if runs > HARD_MAX_RUNS:
        raise ConfigError(f"the spec makes {runs:,} runs, over the limit of {HARD_MAX_RUNS:,}: split it")
    if runs > MAX_RUNS and not confirmed:
        raise ConfigError(f"the spec makes {runs:,} runs, over {MAX_RUNS:,}: pass --yes to run them all")


def run_config(values: dict[str, Any], where: str) -> RunConfig:
    """Flat knobs -> RunConfig, MemoryConfig's under `memory`; one line naming the knob when one is wrong."""
    _refuse_unknown(f"knob in {where}", values, set(KNOBS))
    memory = {k: v for k, v in values.items() if k in MEMORY_KNOBS}
    own = {k: v for k, v in values.items() if k in RUN_KNOBS}
    if "model" in own and not _known_model(own["model"]):
        raise ConfigError(f"{where}: unknown embedding model {own['model']!r} (e.g. {DEFAULT_MODEL!r}, "
                          f"{HASHING_MODEL!r} or a sentence-transformers folder)")
    for knob, value in memory.items():  # checked here too, for a one-line message naming the variant
        expected = type(getattr(MemoryConfig(), knob))
        if type(value) is not expected and not (expected is float and type(value) is int):
            raise ConfigError(f"{where}: {knob} must be {expected.__name__}, got {value!r}")
    try:
        return _validated(RunConfig, own | {"memory": MemoryConfig(**memory)}, where)
    except ValueError as exc:  # MemoryConfig's own range checks
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{where}: {exc}") from None


def _known_model(value: object) -> bool:
    return isinstance(value, str) and (value in KNOWN_MODELS or value.startswith("@cf/") or Path(value).is_dir())


def _variants(grid: dict[str, Any], explicit: Any) -> list[tuple[str, dict[str, Any]]]:
    """(label, overrides) for each combination of the grid, then each explicit variant; the base alone if none."""
    out: list[tuple[str, dict[str, Any]]] = []
    for knob, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(f"grid.{knob} must be a non-empty list of values, got {values!r}")
    if grid:
        for combo in itertools.product(*grid.values()):
            overrides = dict(zip(grid, combo, strict=True))
            out.append((", ".join(f"{k}={v}" for k, v in overrides.items()), overrides))
    if not isinstance(explicit, list) or not all(isinstance(v, dict) for v in explicit):
        raise ConfigError("variants must be an array of tables ([[variants]])")
    for number, variant in enumerate(explicit, 1):
        overrides = {k: v for k, v in variant.items() if k != "name"}
        label = str(variant.get("name") or ", ".join(f"{k}={v}" for k, v in overrides.items()) or f"variant {number}")
        out.append((label, overrides))
    labels = [label for label, _ in out]
    if len(set(labels)) < len(labels):
        raise ConfigError(f"two variants share a name: {sorted(n for n in labels if labels.count(n) > 1)[0]!r}")
    return out or [("base", {})]


def _table(raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{key} must be a table ([{key}])")
    return value


def _refuse_unknown(what: str, values: dict[str, Any], known: set[str]) -> None:
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"unknown {what}: {unknown[0]!r}; known: {', '.join(sorted(known))}")


def _validated(model: Any, values: dict[str, Any], where: str) -> Any:
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise ConfigError(f"{where}: {field}: {error['msg']}, got {error.get('input')!r}") from None
