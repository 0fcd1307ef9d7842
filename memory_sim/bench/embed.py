"""Embedding benchmarks (`memory-sim bench`'s embeddings section; scripts/bench_embed.py writes them on their own).

1. Throughput of the project path (AiEmbedder over LocalAi: validation, cache lookup, length-sorted batches,
   Workers AI response shape) against the raw model forward pass (tokenize + transformer + pooling) at the same
   batch size, on the same texts.
2. A second embed of the same texts makes no model call (ai.run calls counted).
3. Import time of `memory_sim` and `memory-sim --help` (fresh processes, median of 5).
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memory_sim.embedding.cache import EmbeddingCache
from memory_sim.embedding.embedder import AiEmbedder

WORDS = (
    "the a miller smith guard margaret tom harbour grain market ship storm lied trusted saw heard remembered "
    "promised stole sold bought night morning tavern church field river bread silver debt letter secret friend "
    "angry quietly yesterday because although never always village festival wolf road gate captain"
).split()


def sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40))) + "." for _ in range(n)]


def raw_forward(encoder: Any, texts: list[str], batch_size: int, pooling: str) -> float:
    """Seconds for tokenize + forward + pool + normalise over `texts` in the given order: the model alone."""
    started = time.perf_counter()
    for start in range(0, len(texts), batch_size):
        encoder.embed(texts[start : start + batch_size], pooling)
    return time.perf_counter() - started


def project_path(ai: Any, model: str, texts: list[str], batch_size: int, pooling: str) -> tuple[float, AiEmbedder]:
    embedder = AiEmbedder(ai, model, pooling=pooling, cache=EmbeddingCache(), batch_size=batch_size)  # type: ignore[arg-type]
    started = time.perf_counter()
    embedder.embed(texts)
    return time.perf_counter() - started, embedder


def throughput(ai: Any, model: str, texts: list[str], batch_size: int, pooling: str, rounds: int) -> dict[str, Any]:
    """Raw and project runs alternate for `rounds`; the best round of each counts (the 2 cores are shared)."""
    loaded = ai.load(model)
    loaded.embed(texts[:batch_size], pooling)  # warm-up
    raw_runs, project_runs = [], []
    for _ in range(rounds):
        raw_runs.append(raw_forward(loaded, texts, batch_size, pooling))
        project_runs.append(project_path(ai, model, texts, batch_size, pooling)[0])
    raw_s, project_s, n = min(raw_runs), min(project_runs), len(texts)
    return {
        "model": model,
        "runtime": loaded.runtime,
        "texts": n,
        "batch_size": batch_size,
        "rounds": rounds,
        "raw_forward_per_s": round(n / raw_s, 1),
        "project_path_per_s": round(n / project_s, 1),
        "ratio_project_over_raw": round(raw_s / project_s, 3),
    }


class CountingHashAi:
    """A counting `Ai` over the hashing model: whether a call happens does not depend on the model."""

    def __init__(self) -> None:
        from memory_sim.embedding.fake import HashingEmbedder

        self.hashing = HashingEmbedder(384)
        self.calls = 0

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        from memory_sim.bindings.ai_validation import output, parse_inputs

        texts, pooling = parse_inputs(inputs)
        self.calls += 1
        return output(self.hashing.embed(texts), 384, pooling)


def cache_check(texts: list[str], cache_path: Path) -> dict[str, Any]:
    ai = CountingHashAi()
    embedder = AiEmbedder(ai, "fake/hashing-384", pooling="mean", cache=EmbeddingCache(cache_path), batch_size=32)
    started = time.perf_counter()
    embedder.embed(texts)
    first_s, calls_after_first = time.perf_counter() - started, ai.calls
    started = time.perf_counter()
    embedder.embed(texts)
    second_s = time.perf_counter() - started
    return {
        "texts": len(texts),
        "distinct_texts": len(set(texts)),
        "model": "hashing model (call counting; the model does not matter), sqlite cache file",
        "model_calls_first_embed": calls_after_first,
        "model_calls_second_embed": ai.calls - calls_after_first,
        "first_embed_s": round(first_s, 2),
        "second_embed_s": round(second_s, 3),
    }


def startup_seconds(argv: list[str], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 3)


def import_times() -> dict[str, float]:
    cli = str(Path(sys.executable).with_name("memory-sim"))
    python = startup_seconds([sys.executable, "-c", "pass"])
    return {
        "python_bare_s": python,
        "import_memory_sim_s": startup_seconds([sys.executable, "-c", "import memory_sim"]),
        "memory_sim_help_s": startup_seconds([cli, "--help"]),
    }
