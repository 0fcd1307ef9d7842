"""The sim tests run on the memory tests' fast real backends (tests/memory/memory_env.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "memory"))
