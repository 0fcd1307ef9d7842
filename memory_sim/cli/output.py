"""What a verb prints: a line for people, or JSON for scripts with `--json` (before or after the verb)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

JSON_HELP = "print the result as JSON (also accepted before the verb)"


def json_flag(parser: argparse.ArgumentParser, help: str = JSON_HELP) -> None:
    parser.add_argument("--json", action="store_true", help=help)


def say(args: argparse.Namespace, text: str, result: Any) -> None:
    """`result` as JSON on stdout under --json, else `text`."""
    print(json.dumps(result, indent=2, sort_keys=True) if getattr(args, "json", False) else text, flush=True)


def progress(args: argparse.Namespace, text: str) -> None:
    """A progress line: on stdout for people, on stderr under --json, so stdout stays one JSON document."""
    print(text, file=sys.stderr if getattr(args, "json", False) else sys.stdout, flush=True)


def key_note(r: Any) -> str:
    """A recollection's state key and, for a stale version, what superseded it (the key's history)."""
    note = f"  [{r.state_key}]" if r.state_key else ""
    return note + (f"  (superseded by a later memory: {r.superseded_by})" if r.superseded_by else "")
