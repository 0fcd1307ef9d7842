"""The command line: `memory-sim <verb> ...`. One verb, one library call; `--json` where a script reads it.

Each group of verbs lives in its own module with a `register(subparsers)` function; adding a group is one line
in `GROUPS`. Modules import heavy libraries inside their handlers, so `memory-sim --help` stays fast.
Handlers return an exit code; a `MemorySimError` prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Callable, Sequence

GROUPS = (
    "memory_sim.cli.vectorize",
    "memory_sim.cli.d1",
    "memory_sim.cli.ai",
    "memory_sim.cli.memory",
    "memory_sim.cli.server",
    "memory_sim.cli.transfer",
    "memory_sim.cli.check",
    "memory_sim.cli.eval",
    "memory_sim.cli.bench",
)

Handler = Callable[[argparse.Namespace], int]


def default_data_dir() -> str:
    return os.environ.get("MEMORY_SIM_DATA", "./.memory_sim")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory-sim",
        description="Local-first long-term memory for simulated characters (Vectorize, D1, Workers AI locally).",
    )
    parser.add_argument(
        "--data",
        default=default_data_dir(),
        help="data folder (default: $MEMORY_SIM_DATA or ./.memory_sim)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in GROUPS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # a group not built yet
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from memory_sim.errors import MemorySimError

    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0 if args.command is None else 2
    from memory_sim.folder_lock import acting_as
    from memory_sim.owner import cli_process

    try:  # acting_as tells others who owns a folder; cli_process: whether it serves, or goes through an owner
        with acting_as(f"memory-sim {args.command}"), cli_process(args.command):
            return handler(args)
    except MemorySimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
