"""`memory-sim eval locomo|village`: recall quality through the memory system's own API (memory_sim/eval).

    memory-sim eval locomo [--dataset locomo10.json] [--json] [--modes vector,hybrid] [--conversations N]
                           [--scoring design,generative-agents-code]
    memory-sim eval village [--questions FILE.json] [--json]

Both build a fresh local Env (Chroma + DuckDB + bundled MiniLM) in a temp folder; the global --data folder is
not touched. `--out DIR` also writes <name>.json and <name>.md there.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

_DEFAULT_CACHE = Path(os.environ.get("TMPDIR", "/tmp")) / "memory_sim_eval" / "embeddings.sqlite"
LOCOMO_FILE = "locomo10.json"
LOCOMO_ORIGIN = ("LoCoMo is not shipped with memory_sim: its authors publish locomo10.json, for research use, at "
                 "https://github.com/snap-research/locomo (read its licence there)")


def locomo_cache(environ: dict[str, str] | None = None) -> Path:
    """Where `eval locomo` looks for the dataset when no --dataset is given: the user's cache folder."""
    env = os.environ if environ is None else environ
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memory_sim" / LOCOMO_FILE


def _locomo_file(text: str) -> Path:
    """--dataset: an existing file; a missing one is refused with where LoCoMo comes from."""
    from memory_sim.cli import arguments

    try:
        return Path(arguments.input_file(text))
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc}. {LOCOMO_ORIGIN}") from None


def locomo_dataset(given: Path | None) -> Path:
    """The dataset the user named, else the cached copy; when neither is there, one line: where LoCoMo comes
    from, its terms, and where to put it."""
    from memory_sim.errors import ConfigError

    path = given if given is not None else locomo_cache()
    if path.is_file():
        return path
    where = f"no file {str(path)!r}" if given is not None else f"no --dataset given and no {str(path)!r}"
    raise ConfigError(f"{where}. {LOCOMO_ORIGIN}; pass its path with --dataset PATH or put it at {locomo_cache()}")


def register(sub: Any) -> None:
    from memory_sim.cli import arguments

    group = sub.add_parser("eval", help="recall quality: LoCoMo evidence recall, the village's ground truth")
    verbs = group.add_subparsers(dest="eval_command", metavar="EVAL", required=True)
    locomo = verbs.add_parser("locomo", help="LoCoMo evidence recall@k per mode through MemorySystem.recall")
    locomo.add_argument(
        "--dataset",
        dest="locomo_path",
        type=_locomo_file,
        default=None,
        help=f"the LoCoMo file (default: {locomo_cache()}); get it from github.com/snap-research/locomo",
    )
    locomo.add_argument("--modes", default="vector,keyword,hybrid,weighted",
                        help="comma-separated: vector, keyword, hybrid, weighted")
    locomo.add_argument("--conversations", type=arguments.whole("conversations", 1), default=None,
                        help="only the first N conversations")
    locomo.add_argument("--scoring", default="design",
                        help="comma-separated weighted-recall presets, one `weighted` mode each: design, "
                             "generative-agents-paper, generative-agents-code (default design)")
    locomo.add_argument("--no-query-cues", action="store_true",
                        help="rank without query cues (MemoryConfig.query_cues=False): the ranking before them")
    locomo.add_argument("--cache", type=Path, default=_DEFAULT_CACHE,
                        help=f"embedding cache kept between runs (default {_DEFAULT_CACHE})")
    _common(locomo)
    locomo.set_defaults(handler=cmd_locomo)
    village = verbs.add_parser("village", help="what NPCs think of each other: recall vs a LIKE scan of D1")
    village.add_argument("--questions", type=arguments.input_file, default=None,
                         help="the ground-truth set (default: the 37 questions shipped with memory_sim)")
    village.add_argument("--scoring", default="design",
                         help="comma-separated weighted-recall presets, one `weighted` method each: design, "
                              "generative-agents-paper, generative-agents-code (default design)")
    _common(village)
    village.set_defaults(handler=cmd_village)


def _common(parser: argparse.ArgumentParser) -> None:
    from memory_sim.cli import arguments

    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--out", type=arguments.folder, default=None, help="also write <name>.json and <name>.md here")
    parser.add_argument("--threads", type=arguments.whole("threads", 1, 1024), default=1,
                        help="torch threads (default 1: faster than 2 on a loaded 2-core machine)")


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}"


def _set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(max(1, threads))


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _env_options(args: argparse.Namespace) -> dict[str, Any]:
    """The settings an evaluation honours (--model, --d1-engine, their variables): its folders are its own."""
    options: dict[str, Any] = {"d1_engine": args.settings.d1_engine}
    if args.embed_model is not None or "MEMORY_SIM_MODEL" in os.environ:
        options["model"] = args.settings.embed_model
    return options


def cmd_locomo(args: argparse.Namespace) -> int:
    from memory_sim.errors import ConfigError
    from memory_sim.eval.locomo import MODES, markdown, run_locomo, with_scorings
    from memory_sim.locomo import load_locomo

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or set(modes) - set(MODES):
        raise ConfigError(f"--modes takes some of {', '.join(MODES)}, got {args.modes!r}")
    modes = with_scorings(modes, _scorings(args.scoring))
    if args.conversations is not None and args.conversations < 1:
        raise ConfigError("--conversations must be at least 1")
    conversations = load_locomo(locomo_dataset(args.locomo_path))[: args.conversations]
    _set_threads(args.threads)
    from memory_sim.memory.config import MemoryConfig

    config = MemoryConfig(query_cues=not args.no_query_cues)
    report = run_locomo(conversations, modes=modes, cache=args.cache, progress=_progress, config=config,
                        **_env_options(args))
    report["meta"]["machine"] = machine()
    return _emit(args, "locomo", report, markdown(report, machine()))


def cmd_village(args: argparse.Namespace) -> int:
    from memory_sim.errors import ConfigError
    from memory_sim.eval.village import METHODS, load_questions, markdown, run_village_eval, with_scorings

    scorings = _scorings(args.scoring)
    try:
        question_set = load_questions(args.questions)
    except (OSError, ValueError, KeyError) as exc:
        where = args.questions or "shipped with memory_sim"
        raise ConfigError(f"cannot read the village questions ({where}): {exc}") from exc
    _set_threads(args.threads)
    methods = with_scorings(METHODS, scorings)
    report = run_village_eval(question_set, methods=methods, progress=_progress, **_env_options(args))
    report["meta"]["machine"] = machine()
    return _emit(args, "village_eval", report, markdown(report, machine()))


def _scorings(value: str) -> list[str]:
    from memory_sim.errors import ConfigError
    from memory_sim.memory.recalling.presets import SCORINGS

    scorings = list(dict.fromkeys(s.strip() for s in value.split(",") if s.strip()))
    if not scorings or set(scorings) - set(SCORINGS):
        raise ConfigError(f"--scoring takes some of {', '.join(SCORINGS)}, got {value!r}")
    return scorings


def _emit(args: argparse.Namespace, name: str, report: dict[str, Any], table: str) -> int:
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
        (args.out / f"{name}.md").write_text(table)
    print(json.dumps(report, indent=2) if args.json else table)
    return 0
