"""One seeded village for the module's tests (read-only: no test writes it)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inspector_helpers import Inspector, inspector, seed_village  # noqa: E402


@pytest.fixture(scope="session")
def village_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seeded village, closed and never opened again: tests copy it (shutil.copytree) to open one."""
    folder = tmp_path_factory.mktemp("village")
    seed_village(folder)
    return folder


@pytest.fixture(scope="session")
def ui(village_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspector]:
    folder = tmp_path_factory.mktemp("inspected") / "village"
    shutil.copytree(village_folder, folder)
    with inspector(folder) as served:
        yield served
