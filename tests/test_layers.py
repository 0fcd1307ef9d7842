"""The layers are import contracts (pyproject.toml's [tool.importlinter]), checked by `lint-imports` before the
tests in .ci/run. Here: the contracts hold, an import made inside a function counts as much as one at the top,
the memory layer names only the Env's shape, and CI runs the README's command exactly."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """The package and its pyproject.toml in a folder of their own, to be changed by a test."""
    shutil.copytree(ROOT / "memory_sim", tmp_path / "memory_sim", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def lint_imports(root: Path, contract: str | None = None) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the package under `root`: every contract, or the one with id `contract`."""
    only = ["--contract", contract] if contract else []
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", *only, str(root / "pyproject.toml")],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, timeout=600,
    )


def add_function(module: Path, body: str) -> None:
    module.write_text(module.read_text() + "\n\n" + body)


def test_the_package_keeps_its_layers() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


def test_a_backend_imported_inside_a_function_of_a_face_breaks_the_contracts(package_copy: Path) -> None:
    add_function(package_copy / "memory_sim" / "cli" / "ai.py", (
        "def _engine() -> object:\n"
        "    from memory_sim.local.d1.core import D1CoreDatabase\n\n"
        "    return D1CoreDatabase\n"
    ))
    assert lint_imports(package_copy, "layers").returncode == 0  # the faces may import anything below them ...
    result = lint_imports(package_copy, "builder")  # ... but not a backend: only the builder opens one
    assert result.returncode != 0
    assert "0 kept, 1 broken" in result.stdout
    assert "memory_sim.cli.ai -> memory_sim.local.d1.core" in result.stdout


def test_the_memory_layer_names_the_envs_shape_never_env_py() -> None:
    """memory/ sees the bindings through `bindings.worker_env.WorkerEnv`; not even an annotation names env.py."""
    naming = [str(p.relative_to(ROOT)) for p in (ROOT / "memory_sim" / "memory").rglob("*.py")
              if re.search(r"\bmemory_sim\.env\b|from memory_sim import Env", p.read_text())]
    assert naming == []


def test_an_import_of_env_py_from_the_memory_layer_breaks_the_layers(package_copy: Path) -> None:
    recall = package_copy / "memory_sim" / "memory" / "recalling" / "recall.py"
    add_function(recall, "def _opened() -> object:\n    from memory_sim.env import Env\n\n    return Env\n")
    result = lint_imports(package_copy, "layers")
    assert result.returncode != 0
    assert "memory_sim.memory.recalling.recall -> memory_sim.env" in result.stdout


def test_ci_runs_the_readme_test_command_exactly() -> None:
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"```bash\n(python3 -m venv [^\n]*\[test\][^\n]*)\n```", readme)
    assert command is not None, "README.md has no test command"
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("python3 -m venv")]
    assert ci == [command.group(1)]
    steps = command.group(1).split(" && ")
    checks = [".venv/bin/lint-imports", ".venv/bin/ruff check memory_sim", ".venv/bin/mypy memory_sim"]
    assert steps[2:5] == checks and steps[-1] == ".venv/bin/python -m pytest -q -n 2"  # the checks, then the tests


def test_the_memory_system_is_a_thin_facade() -> None:
    """memory/system.py delegates to the groups: about 400 lines at most, no import inside a method (a sign of a
    circle dodged), and the jobs never import it (they name jobs/host.py's MemoryHost)."""
    import ast

    facade = ROOT / "memory_sim" / "memory"
    text = (facade / "system.py").read_text("utf-8")
    assert len(text.splitlines()) <= 400
    inner = [node.lineno for node in ast.walk(ast.parse(text)) if isinstance(node, ast.FunctionDef)
             for child in ast.walk(node) if isinstance(child, ast.Import | ast.ImportFrom)]
    assert inner == []
    for job in (facade / "jobs").glob("*.py"):
        assert not re.search(r"memory_sim\.memory(\.system| import system)\b", job.read_text("utf-8")), job.name
