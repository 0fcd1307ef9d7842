"""Every benchmark side by side in one run: a thin wrapper of `memory-sim bench [--quick] [--json]` that writes
into the repository's benchmarks/ folder unless --out is given.

    .venv/bin/python scripts/bench.py --quick          # 10k vectors, about 1-2 minutes
    .venv/bin/python scripts/bench.py                  # 10k, 100k and 300k vectors
    .venv/bin/python scripts/bench.py --sizes 10000,100000

Writes benchmarks/bench[-quick].{json,md} and the plots benchmarks/bench[-quick]_*.png.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_sim.cli import main  # noqa: E402

if __name__ == "__main__":
    given = any(arg == "--out" or arg.startswith("--out=") for arg in sys.argv[1:])
    raise SystemExit(main(["bench", *([] if given else ["--out", str(ROOT / "benchmarks")]), *sys.argv[1:]]))
