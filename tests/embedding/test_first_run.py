"""First run and every run: the ONNX export is made once per user and model (not per checkout or venv), the
fallback to the bundled model is said where it is news, and a process that works through a folder's owner loads
no model of its own."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory_sim.bindings.ai import BGE_BASE
from memory_sim.folder_lock import read_owner
from memory_sim.local.ai.local_ai import LocalAi
from memory_sim.local.ai.models import BGE_PATH_ENV
from memory_sim.local.ai.onnx_cache import export_dir

CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]
FALLBACK = "bundled offline model"


def test_a_second_install_of_the_same_model_uses_the_first_ones_export(
    tmp_path: Path, bge_folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache, first, second = tmp_path / "cache", tmp_path / "venv-a" / "bge", tmp_path / "venv-b" / "bge"
    shutil.copytree(bge_folder, first)
    shutil.copytree(bge_folder, second)
    later = time.time() + 60
    for path in second.rglob("*"):  # installed at another time: same files, other mtimes
        os.utime(path, (later, later))
    with caplog.at_level(logging.INFO, logger="memory_sim.local.ai.onnx_export"):
        assert LocalAi(model_dirs={BGE_BASE: first}, onnx_cache=cache).load(BGE_BASE).runtime == "onnx"
        assert LocalAi(model_dirs={BGE_BASE: second}, onnx_cache=cache).load(BGE_BASE).runtime == "onnx"
    exports = [r for r in caplog.records if r.getMessage().startswith("exporting")]
    assert len(exports) == 1
    assert export_dir(cache, BGE_BASE, first) == export_dir(cache, BGE_BASE, second)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_fallback_is_said_once_and_a_visitor_loads_no_model(tmp_path: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if k != BGE_PATH_ENV}
    environ["HF_HUB_CACHE"] = str(tmp_path / "empty-hub")  # no BGE here, whatever the machine has
    folder = str(tmp_path / "village")

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*CLI, "--data", folder, *argv], capture_output=True, text=True, env=environ,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return done

    created = cli("remember", "bram", "Cora cured my fever with willow bark.", "--importance", "0.9")
    assert created.stderr.count(FALLBACK) == 1  # the folder is made with the fallback model: said once
    for argv in (["stats"], ["recall", "bram", "Who cured the fever?", "--json"]):
        assert FALLBACK not in cli(*argv).stderr
    assert FALLBACK in cli("models").stdout

    owner = subprocess.Popen([*CLI, "--data", folder, "run", "--scale", "60", "--for-seconds", "240"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environ)
    try:
        deadline = time.monotonic() + 240  # a bound for a hang: the owner loads its model before it serves
        while (found := read_owner(Path(folder))) is None or found.pid != owner.pid or not found.address:
            assert owner.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        visitor = cli("recall", "bram", "Who cured the fever?", "--json")
        assert "working through the owner" in visitor.stderr
        assert "loading" not in visitor.stderr and FALLBACK not in visitor.stderr, visitor.stderr
        assert [r["text"] for r in json.loads(visitor.stdout)] == ["Cora cured my fever with willow bark."]
    finally:
        owner.terminate()
        owner.wait(timeout=120)
