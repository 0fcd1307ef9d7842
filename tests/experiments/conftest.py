"""The tiny spec, written where a test can run it, and a folder for experiments on tmpfs where the machine has
one: the tests check results, and on a loaded disk the runs' fsyncs would take most of their time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from experiment_helpers import TINY

from memory_sim.testing import scratch_folder


@pytest.fixture
def fast_tmp(tmp_path: Path) -> Iterator[Path]:
    with scratch_folder(tmp_path) as folder:
        yield folder


@pytest.fixture(scope="module")
def fast_module_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with scratch_folder(tmp_path_factory.mktemp("experiments")) as folder:
        yield folder


@pytest.fixture
def tiny_spec(fast_tmp: Path) -> Path:
    path = fast_tmp / "tiny.toml"
    path.write_text(TINY)
    return path
