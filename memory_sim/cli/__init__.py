"""The command line: `memory-sim <verb> ...`. One verb, one library call; `--json` where a script reads it.

Each group of verbs lives in its own module with a `register(subparsers)` function; adding a group is one line
in `GROUPS`. Modules import heavy libraries inside their handlers, so `memory-sim --help` stays fast.
Handlers return an exit code. Arguments are checked at the front door (cli/arguments.py); every error prints one
line on stderr: exit 2 for what the user can fix, 1 for an internal error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from memory_sim.settings import Settings

GROUPS = (
    "memory_sim.cli.vectorize",
    "memory_sim.cli.d1",
    "memory_sim.cli.ai",
    "memory_sim.cli.demo",
    "memory_sim.cli.memory",
    "memory_sim.cli.records",
    "memory_sim.cli.server",
    "memory_sim.cli.inspect",
    "memory_sim.cli.transfer",
    "memory_sim.cli.check",
    "memory_sim.cli.backup",
    "memory_sim.cli.eval",
    "memory_sim.cli.bench",
    "memory_sim.cli.experiment",
    "memory_sim.cli.worker_plugin",
)

Handler = Callable[[argparse.Namespace], int]
DEBUG_ENV = "MEMORY_SIM_DEBUG"
PIP_NAMES = {"PIL": "pillow", "yaml": "pyyaml", "sklearn": "scikit-learn"}  # import name -> PyPI name


class CliParser(argparse.ArgumentParser):
    """argparse, except that a usage error is one line (not the usage block), raised as `InvalidInput` so `main`
    prints it like every other error. Sub-commands get this class too (add_subparsers uses the parent's type), and
    with it the global options, so they are accepted before or after the verb."""

    def __init__(self, *args: Any, global_options: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if global_options:
            add_global_options(self, top=False)

    def error(self, message: str) -> NoReturn:
        from memory_sim.errors import InvalidInput

        raise InvalidInput(f"{message} (see `{self.prog} --help`)")


def add_global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """The settings every verb takes, before or after it (`memory-sim --data D recall ...` or `memory-sim recall
    ... --data D`). A verb's parser leaves them unset unless given, so a value before the verb survives; values
    not given anywhere come from the environment, then memory_sim.toml, then the defaults (memory_sim.settings)."""
    from memory_sim.cli import arguments

    unset = None if top else argparse.SUPPRESS
    group = parser.add_argument_group("global options (before or after the verb)")
    group.add_argument("--data", type=arguments.folder, default=unset,
                       help="data folder (default: $MEMORY_SIM_DATA, then memory_sim.toml, then ./.memory_sim)")
    group.add_argument("--backend", choices=("local", "cloudflare"), default=unset,
                       help="where the bindings live (default: $MEMORY_SIM_BACKEND or local)")
    group.add_argument("--d1-engine", choices=("duckdb", "sqlite"), default=unset,
                       help="local D1 engine (default: $MEMORY_SIM_D1_ENGINE or duckdb)")
    group.add_argument("--model", dest="embed_model", type=arguments.model, default=unset,
                       help="embedding model (default: $MEMORY_SIM_MODEL, else the model the index records)")
    if top:
        group.add_argument("--json", dest="json_first", action="store_true",
                           help="print JSON (for the verbs that can; also accepted after the verb)")


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings of this command: its flags over the environment over memory_sim.toml over the defaults."""
    from memory_sim.settings import Settings

    return Settings.load(
        data_dir=args.data, backend=args.backend, d1_engine=args.d1_engine, embed_model=args.embed_model
    )


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(
        prog="memory-sim",
        description="Local-first long-term memory for simulated characters (Vectorize, D1, Workers AI locally).",
        global_options=False,
    )
    add_global_options(parser, top=True)
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


def _one_line(text: str) -> str:
    """Errors are one line on stderr, whatever the message holds (a value's newlines, undecodable bytes)."""
    flat = re.sub(r"\s*[\r\n]+\s*", " | ", text.strip())
    # other characters a terminal or str.splitlines takes as a line break, or that print nothing: shown escaped
    flat = re.sub("[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]", lambda m: ascii(m.group())[1:-1], flat)
    return flat.encode("utf-8", "backslashreplace").decode("utf-8")


def _check_utf8(argv: Sequence[str]) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates; refuse them here, naming the argument."""
    from memory_sim.errors import InvalidInput

    for position, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            try:
                raw = os.fsencode(arg)  # the bytes as they were given
            except UnicodeEncodeError:
                raw = arg.encode("utf-8", "backslashreplace")
            raise InvalidInput(f"argument {position} is not valid UTF-8 text: {raw!r}") from None


def _show_progress_notes() -> None:
    """The library's notes on slow first steps ("loading <model>...", a one-time ONNX export) go to stderr, so a
    first embedding that waits seconds for its model does not look like a hang."""
    import logging

    notes = logging.getLogger("memory_sim.local")
    if not notes.handlers and notes.level == logging.NOTSET:
        handler = logging.StreamHandler()  # stderr
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler.addFilter(lambda record: not logging.getLogger().handlers)  # else the root's handlers show it
        notes.addHandler(handler)
        notes.setLevel(logging.INFO)


def _run(argv: Sequence[str]) -> int:
    from memory_sim.errors import InvalidInput

    _check_utf8(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        if args.command is None:
            parser.print_help()
            return 0
        raise InvalidInput(f"`memory-sim {args.command}` needs a verb (see `memory-sim {args.command} --help`)")
    if args.json_first:
        if not hasattr(args, "json"):
            raise InvalidInput(f"`memory-sim {args.command}` has no JSON output")
        args.json = True
    _show_progress_notes()
    args.settings = settings_of(args)
    args.data = str(args.settings.data_dir)  # verbs that work on files see the folder the settings chose
    from memory_sim.folder_lock import acting_as
    from memory_sim.owner import cli_process

    # acting_as tells others who owns a folder; cli_process: whether this verb serves it, or goes through its owner
    with acting_as(f"memory-sim {args.command}"), cli_process(args.command):
        return handler(args)


def _missing_package(exc: Exception) -> str | None:
    """The PyPI name of a third-party package an import did not find, else None."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.partition(".")[0]
    return None if top == "memory_sim" else PIP_NAMES.get(top, top)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command. Every failure is one line on stderr, never a traceback: exit 2 for what the caller can
    fix (bad input, a missing file, an error of the project's tree), 1 for an internal error (the traceback with
    MEMORY_SIM_DEBUG=1)."""
    from memory_sim.errors import MemorySimError

    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except MemorySimError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {_one_line(where + (exc.strerror or str(exc)))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, not a traceback
        if os.environ.get(DEBUG_ENV):
            raise
        if missing := _missing_package(exc):  # an install that lost a dependency: name it and how to get it
            print(f"error: this command needs the Python package {missing!r}, which is not installed: "
                  f"pip install {missing}", file=sys.stderr)
            return 2
        print(f"error: internal error: {_one_line(f'{type(exc).__name__}: {exc}')} "
              f"(run with {DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
