"""One seeded village for the module's tests (read-only: no test writes it)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inspector_helpers import Inspector, inspector, seed_village  # noqa: E402


@pytest.fixture(scope="session")
def village_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("village")
    seed_village(folder)
    return folder


@pytest.fixture(scope="session")
def ui(village_folder: Path) -> Iterator[Inspector]:
    with inspector(village_folder) as served:
        yield served
