"""`memory-sim --help` and every verb's `--help` load no heavy library (the README's figure for it depends on
this): numpy, torch, chromadb, duckdb and onnxruntime load only when a verb runs."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("numpy", "torch", "chromadb", "duckdb", "onnxruntime")


def test_help_of_every_verb_loads_no_heavy_library() -> None:
    code = (
        "import sys, argparse\n"
        "from memory_sim.cli import build_parser\n"
        "parser = build_parser(); parser.format_help()\n"
        "def walk(p):\n"
        "    for a in p._actions:\n"
        "        if isinstance(a, argparse._SubParsersAction):\n"
        "            for sub in a.choices.values():\n"
        "                sub.format_help(); walk(sub)\n"
        "walk(parser)\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == ""
