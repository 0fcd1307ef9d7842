"""Every code block of README.md and docs/*.md is either run here or marked as one that is not, so examples
cannot rot. A fence names its kind:

- ```python: run. A page's python blocks run in order, as one script, in a fresh folder (so a later block may use
  what an earlier one made), with the fake hashing model (MEMORY_SIM_MODEL=fake/hashing: no weights, no torch;
  the examples' output does not depend on the model).
- ```console: every `$ ` line is a command, run with bash in that same folder after the python blocks, in page
  order (`memory-sim` is this checkout's CLI). It must exit 0, unless the first line shown under it starts with
  `error:`: then it must exit 2 and print that line first on stderr.
- ```bash: commands shown but not run (installing, long-running services); checked with `bash -n`.
- ```toml and ```json: parsed.
- ```text: illustrative only (output, diagrams, command synopses); not run.
A fence with no kind, or another kind, fails `test_every_block_says_what_it_is`.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
KINDS = ("python", "console", "bash", "toml", "json", "text")
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)


def blocks(page: Path, kind: str | None = None) -> list[tuple[str, str]]:
    found = [(info.strip(), body) for info, body in FENCE.findall(page.read_text(encoding="utf-8"))]
    return [b for b in found if kind is None or b[0] == kind]


def ids(pages: list[Path]) -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in pages]


def with_blocks(kind: str) -> list[Path]:
    return [p for p in PAGES if blocks(p, kind)]


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_SIM_", "CLOUDFLARE_"))}
    env["MEMORY_SIM_MODEL"] = "fake/hashing"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    shim = tmp_path / "bin" / "memory-sim"  # this checkout's CLI, whatever is installed
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "import sys; from memory_sim.cli import main; '
                    f'sys.exit(main())" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env["PATH"] = f"{shim.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.parametrize("page", PAGES, ids=ids(PAGES))
def test_every_block_says_what_it_is(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    fences = [line for line in text.splitlines() if line.startswith("```")]
    assert len(fences) % 2 == 0, f"{page.name}: an unclosed fence"
    unknown = [info for info, _ in blocks(page) if info not in KINDS]
    assert not unknown, f"{page.name}: fences must name one of {KINDS}, found {unknown}"
    assert len(blocks(page)) * 2 == len(fences), f"{page.name}: a fence the test cannot read"


def commands(body: str) -> list[tuple[str, list[str]]]:
    """(command, the lines shown under it) for each `$ ` line."""
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


# Pages whose examples need more than a fresh folder (a running server, commands before the python blocks): their
# own test runs them as written, in the page's order.
OWN_TEST = {"cloudflare.md": "test_cloudflare_doc.py", "experiments.md": "test_experiments_doc.py"}
RUN = [p for p in PAGES if (blocks(p, "python") or blocks(p, "console")) and p.name not in OWN_TEST]


@pytest.mark.parametrize("page", sorted(OWN_TEST))
def test_pages_left_out_here_have_their_own_test(page: str) -> None:
    own = Path(__file__).with_name(OWN_TEST[page])
    assert own.exists() and page in own.read_text(encoding="utf-8"), f"{page}: {own.name} does not run its examples"


@pytest.mark.parametrize("page", RUN, ids=ids(RUN))
def test_examples_run(page: Path, tmp_path: Path, clean_env: dict[str, str]) -> None:
    """The page's python blocks as one script, then its console commands in order, in the same fresh folder."""
    work = tmp_path / "work"
    work.mkdir()
    script = "\n\n".join(body for _, body in blocks(page, "python"))
    if script:
        done = subprocess.run([sys.executable, "-c", script], cwd=work, env=clean_env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"{page.name}:\n{done.stderr[-3000:]}"
    for _, body in blocks(page, "console"):
        shown_commands = commands(body)
        assert shown_commands, f"{page.name}: a console block with no `$ ` command"
        for command, shown in shown_commands:
            done = subprocess.run(["bash", "-c", command], cwd=work, env=clean_env, capture_output=True, text=True,
                                  timeout=300)
            if shown and shown[0].startswith("error:"):
                assert done.returncode == 2, (command, done.returncode, done.stderr)
                assert done.stderr.strip().splitlines()[0] == shown[0], (command, done.stderr)
            else:
                assert done.returncode == 0, f"{page.name}: {command}\n{done.stderr[-2000:]}"


@pytest.mark.parametrize("page", with_blocks("bash"), ids=ids(with_blocks("bash")))
def test_bash_blocks_parse(page: Path) -> None:
    for _, body in blocks(page, "bash"):
        done = subprocess.run(["bash", "-n"], input=body, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"{page.name}: {done.stderr}"


@pytest.mark.parametrize("page", with_blocks("toml") + with_blocks("json"),
                         ids=ids(with_blocks("toml") + with_blocks("json")))
def test_data_blocks_parse(page: Path) -> None:
    for kind, body in blocks(page):
        if kind == "toml":
            tomllib.loads(body)
        elif kind == "json":
            json.loads(body)


def test_readme_keeps_its_two_commands() -> None:
    readme = ROOT / "README.md"
    shown = [body.strip() for _, body in blocks(readme, "bash")][:2]
    assert shown[0].startswith("python3 -m venv .venv && ") and shown[0].endswith("-m pytest -q -n 2")
    assert shown[1].endswith("memory-sim demo")
    ci = ROOT / ".ci" / "run"
    if ci.exists():
        assert shown[0] in ci.read_text(encoding="utf-8")
