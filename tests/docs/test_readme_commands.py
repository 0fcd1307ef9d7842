"""The README's two commands are what `.ci/run` runs, and the README says what each one uses and installs, as read
from the commands and the scripts and suites they run: PyPI for both; for the tests also Debian's chromium (the
browser script's apt-get) and, from the npm registry with Node.js, the wrangler release the suites pin."""

from __future__ import annotations

import re
import shlex

from tests.docs.test_code_blocks import ROOT, blocks
from tests.wrangler.wrangler_helpers import WRANGLER_VERSION

README = ROOT / "README.md"


def _section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def _commands() -> tuple[str, str]:
    found = [body.strip() for info, body in blocks(README, "bash") if "python3 -m venv .venv" in body]
    assert len(found) == 2, found
    tests, demo = (found if "pytest" in found[0] else found[::-1])
    return tests, demo


def _steps(command: str) -> list[list[str]]:
    return [shlex.split(step) for step in command.split("&&")]


def _uses(command: str) -> set[str]:
    """What a command reaches beyond Python: PyPI through pip, apt-get through the browser script, npm and Node
    through the suites pytest runs."""
    uses: set[str] = set()
    for step in _steps(command):
        if step[:1] and step[0].endswith("pip") and "install" in step:
            uses.add("PyPI")
        if step and step[0] == "scripts/ensure-browser":
            script = (ROOT / step[0]).read_text(encoding="utf-8")
            if re.search(r"apt-get install .*\bchromium\b", script):
                uses |= {"apt-get", "chromium"}
        if step and step[0].endswith("python") and step[1:3] == ["-m", "pytest"]:
            suites = [(ROOT / "tests" / s / "conftest.py").read_text(encoding="utf-8") for s in ("wrangler", "worker")]
            if any('shutil.which("npm")' in text for text in suites):
                uses |= {"npm", "Node.js", "wrangler"}
    return uses


def test_ci_runs_the_readmes_test_command_exactly() -> None:
    tests, _ = _commands()
    assert tests in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_the_readme_says_what_each_command_uses_and_installs() -> None:
    tests, demo = _commands()
    assert _uses(tests) == {"PyPI", "apt-get", "chromium", "npm", "Node.js", "wrangler"}
    assert _uses(demo) == {"PyPI"}
    said = " ".join(_section("Two commands").split())
    assert "only Python 3.11 and PyPI" not in said.replace("Python 3.11 and PyPI only", "")  # no claim for both
    demo_line = re.search(r"\*\*The demo\*\* (.*?)(?=- \*\*The tests\*\*)", said)
    tests_line = re.search(r"\*\*The tests\*\* (.*?)(?=No model)", said)
    assert demo_line and tests_line, said
    assert "PyPI only" in demo_line.group(1)
    for needed in ("PyPI", "apt-get", "Debian's `chromium`", "npm registry", "Node.js", f"wrangler {WRANGLER_VERSION}"):
        assert needed in tests_line.group(1), f"the README does not say the test command uses {needed}"


def test_the_check_sees_a_command_that_uses_more() -> None:
    assert _uses("python3 -m venv .venv && scripts/ensure-browser") == {"apt-get", "chromium"}
    assert _uses(".venv/bin/python -m pytest -q") == {"npm", "Node.js", "wrangler"}
