"""The package stands on its own: nothing under memory_sim/ reaches into the repository's scripts/ or tests/, and
every verb of the README works from the installed wheel with only its main dependencies (the README's install),
run from an empty folder."""

from __future__ import annotations

import ast
import contextlib
import email
import importlib.metadata
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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


@dataclass(frozen=True)
class Installed:
    """A fresh venv holding the built wheel and only what its main dependencies pull in."""

    venv: Path
    python: Path
    cli: str
    package: Path  # where the venv imports memory_sim from


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build a wheel and install it (no deps, offline) into a fresh venv without system site-packages. Its
    dependencies are the distributions its metadata requires, without extras, and theirs in turn, taken from this
    interpreter's site-packages (linked, not copied: seconds): a verb that needs a package only an extra or the
    test tools bring fails here as it would after the README's `pip install -e .`."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source, wheels, venv = tmp_path / "source", tmp_path / "wheels", tmp_path / "venv"
    for name in ("pyproject.toml", "README.md"):  # built from a copy: setuptools leaves build/ in the source tree
        (source / name).parent.mkdir(exist_ok=True)
        shutil.copy(PACKAGE.parent / name, source / name)
    shutil.copytree(PACKAGE, source / "memory_sim", ignore=shutil.ignore_patterns("__pycache__"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels),
          str(source)], tmp_path)
    wheel, = wheels.glob("memory_sim-*.whl")
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    own_site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         tmp_path).strip())
    deps = link_distributions(main_dependencies(wheel), tmp_path / "dependencies")
    (own_site / "_main_dependencies.pth").write_text(f"{deps}\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
         tmp_path)
    where = Path(_run([str(python), "-c", "import memory_sim; print(memory_sim.__file__)"], tmp_path).strip())
    return Installed(venv, python, str(venv / "bin" / "memory-sim"), where.parent)


def main_dependencies(wheel: Path) -> set[str]:
    """The distributions a wheel's main dependencies need, transitively (extras not asked for are left out)."""
    with zipfile.ZipFile(wheel) as archive:
        metadata, = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        wanted = email.message_from_bytes(archive.read(metadata)).get_all("Requires-Dist") or []
    found: set[str] = set()
    todo = [Requirement(r) for r in wanted]
    while todo:
        requirement = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        for extra in requirement.extras:  # an extra a dependency asks for of another: its requirements too
            todo += [Requirement(r) for r in importlib.metadata.requires(requirement.name) or []
                     if Requirement(r).marker is not None and Requirement(r).marker.evaluate({"extra": extra})]
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        found.add(name)
        todo += [Requirement(r) for r in importlib.metadata.requires(name) or []]
    return found


def link_distributions(names: set[str], folder: Path) -> Path:
    """A folder of links to each distribution's top-level files and folders (and its .dist-info)."""
    folder.mkdir()
    for name in sorted(names):
        dist = importlib.metadata.distribution(name)
        for file in dist.files or []:
            top = file.parts[0]
            if top in ("..", "__pycache__") or top.endswith(".pth") or (folder / top).exists():
                continue
            target = Path(str(dist.locate_file(top)))
            if target.exists():
                (folder / top).symlink_to(target)
    return folder


def test_the_main_dependencies_leave_out_the_test_tools(installed: Installed) -> None:
    for name in ("pytest", "mypy", "selenium", "openai"):  # in this venv, but needed by no verb of the README
        assert _fails([str(installed.python), "-c", f"import {name}"], installed.venv), name


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_bench_and_eval_run_from_an_installed_wheel(installed: Installed, tmp_path: Path) -> None:
    """`memory-sim bench` and `memory-sim eval village`, run from an empty folder, away from the checkout."""
    work = tmp_path / "empty"
    work.mkdir()
    python, cli = str(installed.python), installed.cli
    assert installed.package.is_relative_to(installed.venv)  # the wheel's copy, not the checkout
    assert "./memory-sim-bench" in _run([cli, "bench", "--quick", "--help"], work)
    assert "shipped with memory_sim" in _run([cli, "eval", "village", "--help"], work)
    packaged = "from memory_sim.eval.village import load_questions; print(len(load_questions().questions))"
    assert int(_run([python, "-c", packaged], work)) >= 20  # the default question set is package data

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
    assert report["plots"]  # matplotlib came with the install
    assert sorted(p.name for p in (work / "memory-sim-bench").iterdir())[:2] == ["bench-quick.json", "bench-quick.md"]
    assert not list(installed.package.glob("**/bench-quick*"))  # nothing written into the package
    assert sorted(p.name for p in work.iterdir()) == ["memory-sim-bench", "tiny.json"]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_server_verb_and_a_visitor_work_from_the_plain_install(installed: Installed, tmp_path: Path) -> None:
    """`serve`, `inspect`, a visitor reaching a folder that `run` owns, and `experiment report` with its plots."""
    cli = [installed.cli, "--model", HASHING]
    _run([*cli, "--data", "village", "remember", "margaret", "Tom mended my oven door for nothing.",
          "--importance", "0.9", "--type", "opinion", "--about", "tom"], tmp_path)

    with _started([*cli, "--data", "village", "run", "--scale", "60"], tmp_path, "running the memory jobs"):
        # visitors of the folder `run` owns: they go through its owner, which needs the cloudflare SDK
        _run([*cli, "--data", "village", "remember", "margaret", "Tom sang at the pub.", "--importance", "0.8"],
             tmp_path)
        found = json.loads(_run([*cli, "--data", "village", "recall", "margaret", "Tom", "--json"], tmp_path))
        assert {"Tom mended my oven door for nothing.", "Tom sang at the pub."} <= {r["text"] for r in found}
        port = _free_port()
        with _started([*cli, "--data", "village", "inspect", "--port", str(port)], tmp_path, "the inspector of") as ui:
            _listening(port, ui)
            token = re.search(r"/ui/\?token=([\w-]+)", ui.ready_line)  # the URL it prints, as a person opens it
            assert token is not None, ui.ready_line
            page = _get(f"http://127.0.0.1:{port}/ui/", token=token.group(1))
            assert "margaret" in page

    port = _free_port()
    serving = [*cli, "--data", "served", "serve", "--token", "tok", "--port", str(port), "--log-level", "warning"]
    with _started(serving, tmp_path, f"127.0.0.1:{port}") as server:
        _listening(port, server)
        listed = json.loads(_get(f"http://127.0.0.1:{port}/client/v4/accounts/acct/d1/database", token="tok"))
        assert listed["success"] is True

    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY_EXPERIMENT)
    _run([installed.cli, "experiment", "run", str(spec), "--out", "experiment", "--quiet"], tmp_path)
    done = subprocess.run([installed.cli, "experiment", "report", "experiment"], cwd=tmp_path, env=_clean_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "skipped" not in done.stderr, done.stderr
    report = tmp_path / "experiment" / "report"
    assert {"summary.png", "days.png"} <= {p.name for p in report.iterdir()}
    assert "summary.png" in (report / "report.md").read_text()


HASHING = "fake/hashing"
TINY_EXPERIMENT = """
name = "tiny"
[target]
kind = "village"
[base]
seeds = [1]
npcs = 2
days = 2
model = "fake/hashing"
d1_engine = "sqlite"
[grid]
decay_rate = [0.05, 0.6]
"""


@contextlib.contextmanager
def _started(argv: list[str], cwd: Path, ready: str) -> Iterator[subprocess.Popen[str]]:
    """A long-running verb, until its output says `ready`; stopped with SIGTERM (then SIGKILL) afterwards."""
    process = subprocess.Popen(argv, cwd=cwd, env=_clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    seen: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:  # a hang is caught by the test's timeout; an exit ends the loop
            seen.append(line)
            if ready in line:
                process.ready_line = line  # type: ignore[attr-defined]
                break
        assert process.poll() is None, "".join(seen)[-3000:]
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def _listening(port: int, process: subprocess.Popen[str]) -> None:
    """Waits until the verb's server accepts connections (it prints its address just before binding it)."""
    deadline = time.monotonic() + 120  # a bound for a hang, not a speed claim
    while process.poll() is None and time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port} (exit status {process.poll()})")


def _get(url: str, token: str | None = None) -> str:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=120) as response:
        return response.read().decode()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME") and
            not k.startswith("MEMORY_SIM_")}


def _fails(argv: list[str], cwd: Path) -> bool:
    return subprocess.run(argv, cwd=cwd, env=_clean_env(), capture_output=True, timeout=120).returncode != 0


def _run(argv: list[str], cwd: Path) -> str:
    """Run a command away from the checkout: no PYTHONPATH, so only what is installed is imported."""
    done = subprocess.run(argv, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout
