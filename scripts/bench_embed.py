"""Embedding benchmark, side by side in one run (results: benchmarks/embed.json and benchmarks/embed.md).

Throughput of the project path against the raw forward pass for MiniLM and for a 768-d BERT-base shape (12
layers, random weights, built by the tests' `build_bge_shaped_model`), the cache check, and startup times. The
measuring code is memory_sim/bench/embed.py (also `memory-sim bench`'s embeddings section).

Usage: .venv/bin/python scripts/bench_embed.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "embedding"))  # build_bge_shaped_model lives with the tests

from memory_sim.bench.embed import cache_check, import_times, markdown, sentences, throughput  # noqa: E402
from memory_sim.bindings.ai import BGE_BASE  # noqa: E402
from memory_sim.local.ai import LocalAi  # noqa: E402
from memory_sim.local.models import MINILM  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    import torch

    sizes = {"minilm": 128, "bert": 32, "cache": 1000, "rounds": 1}
    if not args.quick:
        sizes = {"minilm": 512, "bert": 96, "cache": 10_000, "rounds": 3}
    with tempfile.TemporaryDirectory() as tmp:
        from embedding_fakes import build_bge_shaped_model

        bert = build_bge_shaped_model(Path(tmp), layers=12)
        ai = LocalAi(model_dirs={BGE_BASE: bert})
        results: dict[str, Any] = {
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"torch {torch.__version__} ({torch.get_num_threads()} threads), Python {platform.python_version()}",
            "mode": "quick" if args.quick else "full",
            "throughput": [
                throughput(ai, MINILM, sentences(sizes["minilm"], 1), 32, "mean", sizes["rounds"]),
                throughput(ai, BGE_BASE, sentences(sizes["bert"], 2), 32, "cls", sizes["rounds"]),
            ],
            "cache": cache_check(sentences(sizes["cache"], 3), Path(tmp) / "cache.sqlite"),
            "startup": import_times(),
        }
    out = ROOT / "benchmarks"
    out.mkdir(exist_ok=True)
    (out / "embed.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "embed.md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
