"""LoCoMo evidence recall through the memory system's recall API: a thin wrapper of `memory-sim eval locomo`.

    .venv/bin/python scripts/eval_locomo.py [--data ../shared/data/locomo10.json] [--conversations N] [--modes ...]

Writes benchmarks/locomo.{json,md} (pass --out to write elsewhere).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_sim.cli import main  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--out" not in args:
        args += ["--out", str(ROOT / "benchmarks")]
    raise SystemExit(main(["eval", "locomo", *args]))
