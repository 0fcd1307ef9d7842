"""The tiny spec, written where a test can run it, and a folder for experiments on tmpfs where the machine has
one: the tests check results, and on a loaded disk the runs' fsyncs would take most of their time."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from experiment_helpers import TINY


def fast_folder(fallback: Path) -> Iterator[Path]:
    shm = Path("/dev/shm")
    if not shm.is_dir():
        yield fallback
        return
    folder = Path(tempfile.mkdtemp(prefix="memory_sim_experiment_", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def fast_tmp(tmp_path: Path) -> Iterator[Path]:
    yield from fast_folder(tmp_path)


@pytest.fixture(scope="module")
def fast_module_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from fast_folder(tmp_path_factory.mktemp("experiments"))


@pytest.fixture
def tiny_spec(fast_tmp: Path) -> Path:
    path = fast_tmp / "tiny.toml"
    path.write_text(TINY)
    return path
