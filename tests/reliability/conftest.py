"""Reliability tests: the memory-system helpers (tests/memory) and the scripts are importable from here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for folder in (ROOT / "tests" / "memory", ROOT / "scripts", Path(__file__).parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from memory_sim.sim.clock import SimClock  # noqa: E402


@pytest.fixture
def clock() -> SimClock:
    return SimClock()
