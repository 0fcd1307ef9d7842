"""The package stands on its own: nothing under memory_sim/ reaches into the repository's scripts/ or tests/, and
`memory-sim bench` and `memory-sim eval village` work from an installed wheel, run from an empty folder."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "memory_sim"
REPOSITORY_FOLDERS = {"scripts", "tests", "conftest"}
PATH_LOADERS = {"spec_from_file_location", "SourceFileLoader", "run_path"}  # code loaded from a file path


def _trees() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(PACKAGE.rglob("*.py"))]


def imported_names(tree: ast.Module) -> list[str]:
    """Top-level names of every absolute import in a module, function-local ones included."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return names


def test_the_scan_sees_function_local_imports() -> None:
    tree = ast.parse("import os\ndef f():\n    from tests.embedding import fakes\n    import scripts.bench_d1 as b\n")
    assert imported_names(tree) == ["os", "tests", "scripts"]


def test_the_package_imports_only_itself_the_standard_library_and_installed_distributions() -> None:
    installed = set(importlib.metadata.packages_distributions())
    wrong = []
    for path, tree in _trees():
        for name in imported_names(tree):
            known = name == "memory_sim" or name in sys.stdlib_module_names or name in installed
            if name in REPOSITORY_FOLDERS or not known:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}: import {name}")
    assert wrong == []


def test_the_package_loads_no_code_by_file_path_or_sys_path() -> None:
    """What an import scan misses: modules loaded from a file path, folders pushed onto sys.path."""
    wrong = []
    for path, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in PATH_LOADERS | {"path"} and _is_sys_path_or_loader(node):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert wrong == []


def _is_sys_path_or_loader(node: ast.Attribute) -> bool:
    if node.attr == "path":
        return isinstance(node.value, ast.Name) and node.value.id == "sys"
    return node.attr in PATH_LOADERS


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_bench_and_eval_run_from_an_installed_wheel(tmp_path: Path) -> None:
    """Build a wheel, install it (no deps) into a fresh venv whose dependencies come from this interpreter's
    site-packages, and run the commands from an empty folder, away from the checkout."""
    started = time.monotonic()
    source, wheels, venv, work = tmp_path / "source", tmp_path / "wheels", tmp_path / "venv", tmp_path / "empty"
    work.mkdir()
    for name in ("pyproject.toml", "README.md"):  # built from a copy: setuptools leaves build/ in the source tree
        (source / name).parent.mkdir(exist_ok=True)
        shutil.copy(PACKAGE.parent / name, source / name)
    shutil.copytree(PACKAGE, source / "memory_sim", ignore=shutil.ignore_patterns("__pycache__"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels),
          str(source)], tmp_path)
    wheel, = wheels.glob("memory_sim-*.whl")
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    own_site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work).strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (own_site / "_dependencies_from_the_test_venv.pth").write_text("\n".join(sorted(deps)) + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)], work)

    where = _run([str(python), "-c", "import memory_sim; print(memory_sim.__file__)"], work)
    assert Path(where.strip()).is_relative_to(venv)  # the wheel's copy, not the checkout
    cli = str(venv / "bin" / "memory-sim")
    assert "./memory-sim-bench" in _run([cli, "bench", "--quick", "--help"], work)
    assert "shipped with memory_sim" in _run([cli, "eval", "village", "--help"], work)
    packaged = "from memory_sim.eval.village import load_questions; print(len(load_questions().questions))"
    assert int(_run([str(python), "-c", packaged], work)) >= 20  # the default question set is package data

    tiny = {"village": {"npcs": 3, "seed": 7, "days": 2}, "questions": [
        {"npc": "margaret", "query": "What does Margaret think of Tom?", "rule": {"type": "opinion", "about": "tom"}},
        {"npc": "tom", "query": "How does Tom feel about Eleanor?", "rule": {"type": "opinion", "about": "eleanor"}}]}
    (work / "tiny.json").write_text(json.dumps(tiny))
    village = json.loads(_run([cli, "eval", "village", "--questions", "tiny.json", "--json"], work))
    assert set(village["methods"]) == {"vector", "keyword", "hybrid", "weighted", "like-scan"}
    assert village["meta"]["npcs"] == 3 and village["meta"]["memories"] > 0

    _run([cli, "bench", "--quick", "--sizes", "1000"], work)
    report = json.loads((work / "memory-sim-bench" / "bench-quick.json").read_text())
    assert [r["n"] for r in report["index"]] == [1000] and report["d1"]["overhead"]["ratio"] > 0
    assert sorted(p.name for p in (work / "memory-sim-bench").iterdir())[:2] == ["bench-quick.json", "bench-quick.md"]
    assert not list(Path(where.strip()).parent.glob("**/bench-quick*"))  # nothing written into the package
    assert sorted(p.name for p in work.iterdir()) == ["memory-sim-bench", "tiny.json"]
    assert time.monotonic() - started < 400


def _run(argv: list[str], cwd: Path) -> str:
    """Run a command away from the checkout: no PYTHONPATH, so only what is installed is imported."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout
