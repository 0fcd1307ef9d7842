"""docs/inspector.md: its Python example prints what its comments say, and its shell lines are commands the
CLI accepts."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from memory_sim.cli import build_parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "inspector.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text("utf-8"), re.S)


def test_python_example_prints_what_its_comments_say(tmp_path: Path) -> None:
    (code,) = blocks("python")
    expected = [m.group(1).strip() for line in code.splitlines() if (m := re.search(r"print\(.*\)\s+#\s*(.+)$", line))]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_SIM_", "CLOUDFLARE_"))}
    env["MEMORY_SIM_MODEL"] = "fake/hashing"  # the breakdown adds up whatever the model; no torch here
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected


def test_shell_lines_are_commands_the_cli_accepts() -> None:
    parser = build_parser()
    lines = [line.split("#")[0] for block in blocks("bash") for line in block.splitlines() if line.strip()]
    assert any(" inspect " in f" {line} " for line in lines)
    for line in lines:
        argv = shlex.split(line)
        assert argv[0] == "memory-sim"
        args = parser.parse_args(argv[1:])  # an unknown verb or flag raises InvalidInput
        assert args.handler is not None
