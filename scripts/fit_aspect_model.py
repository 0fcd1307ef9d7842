"""Fits key inference's aspect model for the bundled MiniLM and writes the weights the package ships
(memory_sim/memory/beliefs/aspect_weights.npz), stamped with the model and the hash of the training inputs
(exemplars.py, the cue words of aspects.py, the fit's settings). Run it after any of those change, and commit the
file: tests/memory/test_aspect_weights.py fails until the shipped weights match them.

    .venv/bin/python scripts/fit_aspect_model.py          # about a minute of CPU (embeds the examples)
    .venv/bin/python scripts/fit_aspect_model.py --check  # exit 1 when the shipped weights are stale
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_sim.env import Env  # noqa: E402
from memory_sim.memory.beliefs import aspect_weights  # noqa: E402
from memory_sim.memory.beliefs.aspect_model import TRAINING_HASH, fit_for  # noqa: E402
from memory_sim.memory.beliefs.exemplars import EXAMPLES  # noqa: E402

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the shipped weights are current")
    parser.add_argument("--out", type=Path, default=aspect_weights.SHIPPED, help="where to write the weights")
    args = parser.parse_args(argv)
    shipped = aspect_weights.load(args.out)
    if args.check:
        current = shipped is not None and shipped.model == MINILM and shipped.training_hash == TRAINING_HASH
        print(f"{args.out}: {'current' if current else 'stale: run scripts/fit_aspect_model.py'}")
        return 0 if current else 1
    with tempfile.TemporaryDirectory() as folder, Env.local(folder, environ={}, embed_model=MINILM) as env:
        if env.embedder.model != MINILM:
            raise SystemExit(f"expected the bundled {MINILM}, got {env.embedder.model}")
        started = time.perf_counter()
        fitted = fit_for(MINILM, env.embedder.embed)
        took = time.perf_counter() - started
    aspect_weights.save(args.out, fitted)
    print(f"{args.out}: fitted for {MINILM} on {len(EXAMPLES)} examples in {took:.1f} s "
          f"(training hash {TRAINING_HASH[:16]}; weights {fitted.weights.shape})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
