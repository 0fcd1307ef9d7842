"""Embedding benchmark, side by side in one run (results: benchmarks/embed.json and benchmarks/embed.md).

1. Runtimes (runtime_bench): model ready (import + load, fresh process) on torch vs onnxruntime with the export
   already made, and the one-off export; embed latency at batch 1/2/8/32 on one thread (and two), torch vs onnx;
   cosine of the ONNX vectors to torch's, for MiniLM and for a 768-d BERT-base shape (12 layers, random weights).
2. Throughput of the project path (AiEmbedder over LocalAi: validation, cache lookup, length-sorted batches,
   Workers AI response shape) against the raw model forward pass (tokenize + transformer + pooling) at the same
   batch size, on the same texts, on each runtime.
3. A second embed of the same texts makes no model call (ai.run calls counted).
4. Import time of `memory_sim` and `memory-sim --help` (fresh processes, median of 5).

Usage: .venv/bin/python scripts/bench_embed.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "embedding"))  # build_bge_shaped_model lives with the tests

from memory_sim.bench.embed import cache_check, import_times, sentences, throughput  # noqa: E402
from memory_sim.bindings.ai import BGE_BASE  # noqa: E402
from memory_sim.local.ai.local_ai import LocalAi  # noqa: E402
from memory_sim.local.ai.models import MINILM  # noqa: E402
from memory_sim.local.ai.torch_encoder import Encoder  # noqa: E402

BATCHES = (1, 2, 8, 32)
LONG = "the miller counted sacks of grain by the river before the storm came " * 40  # past MiniLM's window


def ready_seconds(model: str, cache: Path, runtime: str, repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds from importing memory_sim's LocalAi to the model loaded, in fresh processes."""
    code = (
        "import time; wall, cpu = time.perf_counter(), time.process_time(); from memory_sim.local.ai.local_ai import LocalAi; "
        f"LocalAi(runtime={runtime!r}).load({model!r}); print(time.perf_counter() - wall, time.process_time() - cpu)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMORY_SIM_ONNX_CACHE": str(cache)}
    walls, cpus = [], []
    for _ in range(repeats):
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        wall, cpu = run.stdout.split()[-2:]
        walls.append(float(wall))
        cpus.append(float(cpu))
    return round(statistics.median(walls), 2), round(statistics.median(cpus), 2)


def milliseconds(encoder: Encoder, texts: list[str], pooling: str) -> tuple[float, float]:
    """Wall-clock and this thread's CPU milliseconds of one embed. On one thread the CPU time hardly depends
    on what else the shared cores are running; the wall clock does."""
    wall, cpu = time.perf_counter(), time.thread_time()
    encoder.embed(texts, pooling)  # type: ignore[arg-type]
    return (time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000


def latencies(encoders: dict[str, Encoder], texts: list[str], pooling: str, rounds: int) -> list[dict[str, Any]]:
    """Per thread count and batch size, runs alternate between the runtimes; median and best of `rounds`.
    All one-thread runs come first, so no thread pool left spinning by a two-thread run competes with them."""
    import torch

    default_threads = torch.get_num_threads()
    rows: dict[int, dict[str, Any]] = {n: {"batch": n} for n in BATCHES}
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for n in BATCHES:
            samples: dict[str, list[tuple[float, float]]] = {"torch": [], "onnx": []}
            for _ in range(rounds + 1):  # the first round warms up and is dropped
                samples["torch"].append(milliseconds(encoders["torch"], texts[:n], pooling))
                samples["onnx"].append(milliseconds(encoders[f"onnx_{threads}t"], texts[:n], pooling))
            for runtime, values in samples.items():
                key, walls = f"{runtime}_{threads}t", [wall for wall, _ in values[1:]]
                rows[n][f"{key}_ms"] = round(statistics.median(walls), 1)
                rows[n][f"{key}_best_ms"] = round(min(walls), 1)
                rows[n][f"{key}_cpu_ms"] = round(statistics.median(cpu for _, cpu in values[1:]), 1)
    torch.set_num_threads(default_threads)
    for row in rows.values():
        row["speedup_1t"] = round(row["torch_1t_ms"] / row["onnx_1t_ms"], 2)
        row["speedup_1t_cpu"] = round(row["torch_1t_cpu_ms"] / row["onnx_1t_cpu_ms"], 2)
    return list(rows.values())


def min_cosine(a: Any, b: Any) -> float:
    import numpy as np

    cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return round(float(cos.min()), 6)


def compare_runtimes(model: str, folder: str, pooling: str, cache: Path, rounds: int, repeats: int) -> dict[str, Any]:
    """Ready time, latency per batch size and agreement of the two runtimes for one model."""
    first_s, _ = ready_seconds(folder, cache, "onnx", 1)  # the cache is empty: this load exports
    (torch_s, torch_cpu_s), (onnx_s, onnx_cpu_s) = (ready_seconds(folder, cache, r, repeats) for r in ("torch", "onnx"))
    ready = {
        "torch_s": torch_s,
        "torch_cpu_s": torch_cpu_s,
        "onnx_s": onnx_s,
        "onnx_cpu_s": onnx_cpu_s,
        "onnx_first_load_with_export_s": first_s,
    }
    encoders: dict[str, Encoder] = {"torch": LocalAi(runtime="torch").load(folder)}
    for threads in (1, 2):
        encoders[f"onnx_{threads}t"] = LocalAi(runtime="onnx", onnx_cache=cache, threads=threads).load(folder)
    texts = sentences(31, 4) + [LONG]
    batch_cos = min_cosine(encoders["onnx_1t"].embed(texts, pooling), encoders["torch"].embed(texts, pooling))  # type: ignore[arg-type]
    single_cos = min(
        min_cosine(encoders["onnx_1t"].embed([t], pooling), encoders["torch"].embed([t], pooling))  # type: ignore[arg-type]
        for t in texts
    )
    return {
        "model": model,
        "pooling": pooling,
        "ready": ready,
        "latency": latencies(encoders, sentences(32, 5), pooling, rounds),
        "min_cosine_onnx_vs_torch": {"batch_of_32": batch_cos, "one_by_one": single_cos, "texts": len(texts)},
    }


def runtime_markdown(results: dict[str, Any]) -> list[str]:
    lines = [
        "## Runtimes: torch vs onnxruntime",
        "",
        "Model ready = import of memory_sim's LocalAi + model load, in a fresh process (median wall clock, and "
        "the process's CPU time); onnx with the "
        "export already in the cache; the first onnx load makes the export. Latency = tokenize + forward + pool + "
        f"normalise of one batch, median (best) of {results['rounds']} rounds alternating runtimes and thread "
        "counts; CPU = the median CPU time of the calling thread, which on one thread is the work itself whatever "
        "else the shared cores run. torch is today's sentence-transformers path (LocalAi runtime='torch').",
        "",
    ]
    for entry in results["runtimes"]:
        ready, cos = entry["ready"], entry["min_cosine_onnx_vs_torch"]
        lines += [
            f"### {entry['model']} ({entry['pooling']} pooling)",
            "",
            f"Model ready: torch {ready['torch_s']} s ({ready['torch_cpu_s']} s CPU), onnx {ready['onnx_s']} s "
            f"({ready['onnx_cpu_s']} s CPU); first onnx load, exporting: "
            f"{ready['onnx_first_load_with_export_s']} s. Lowest cosine onnx vs torch over {cos['texts']} texts: "
            f"{cos['batch_of_32']} in one padded batch, {cos['one_by_one']} one by one.",
            "",
            "| batch | torch 1 thread: wall ms (best), CPU ms | onnx 1 thread: wall ms (best), CPU ms | onnx speed-up:"
            " wall, CPU | torch 2 threads ms | onnx 2 threads ms |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for row in entry["latency"]:
            one = [f"{row[k + '_ms']} ({row[k + '_best_ms']}), {row[k + '_cpu_ms']}" for k in ("torch_1t", "onnx_1t")]
            two = [f"{row[k + '_ms']} ({row[k + '_best_ms']})" for k in ("torch_2t", "onnx_2t")]
            speedup = f"{row['speedup_1t']}x, {row['speedup_1t_cpu']}x"
            lines.append(f"| {row['batch']} | {one[0]} | {one[1]} | {speedup} | {two[0]} | {two[1]} |")
        lines.append("")
    return lines


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "# Embedding benchmark",
        "",
        f"Machine: {results['machine']}. Mode: {results['mode']}. Generated by `scripts/bench_embed.py`.",
        "",
        *runtime_markdown(results),
        "## Throughput",
        "",
        "Best of the rounds, raw and project runs alternating; raw = tokenize + forward + pool in the given "
        "order; project = AiEmbedder over LocalAi with an empty cache; each runtime with its default threads.",
        "",
        "| model | runtime | texts | batch | raw forward (texts/s) | project path (texts/s) | project / raw |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in results["throughput"]:
        lines.append(
            f"| {row['model']} | {row['runtime']} | {row['texts']} | {row['batch_size']} | {row['raw_forward_per_s']} | "
            f"{row['project_path_per_s']} | {row['ratio_project_over_raw']}x |"
        )
    cache = results["cache"]
    lines += [
        "",
        "## Cache and startup",
        "",
        f"Cache: {cache['texts']} texts ({cache['distinct_texts']} distinct; {cache['model']}): first embed "
        f"{cache['model_calls_first_embed']} model calls in {cache['first_embed_s']} s; second embed "
        f"{cache['model_calls_second_embed']} model calls in {cache['second_embed_s']} s.",
        "",
        "| startup (median of 5, fresh process) | seconds |",
        "|---|---:|",
    ]
    lines += [f"| {k} | {v} |" for k, v in results["startup"].items()]
    return "\n".join(lines) + "\n"


def machine() -> str:
    import onnxruntime  # type: ignore[import-untyped]
    import torch

    cpu = platform.processor() or platform.machine()
    info = Path("/proc/cpuinfo")
    if info.is_file():
        names = [line.split(":", 1)[1].strip() for line in info.read_text().splitlines() if line.startswith("model name")]
        cpu = names[0] if names else cpu
    return (
        f"{cpu}, {os.cpu_count()} cores (shared), torch {torch.__version__} ({torch.get_num_threads()} threads by "
        f"default), onnxruntime {onnxruntime.__version__}, Python {platform.python_version()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()

    sizes = {"minilm": 128, "bert": 32, "cache": 1000, "rounds": 1, "latency_rounds": 5, "ready": 1}
    if not args.quick:
        sizes = {"minilm": 512, "bert": 96, "cache": 10_000, "rounds": 3, "latency_rounds": 15, "ready": 3}
    with tempfile.TemporaryDirectory() as tmp:
        from embedding_fakes import build_bge_shaped_model

        bert = build_bge_shaped_model(Path(tmp), layers=12)
        cache = Path(tmp) / "onnx-cache"
        runtimes = [
            compare_runtimes(MINILM, "minilm", "mean", cache, sizes["latency_rounds"], sizes["ready"]),
            compare_runtimes("BERT-base shape (768-d, 12 layers)", str(bert), "cls", cache, sizes["latency_rounds"], sizes["ready"]),
        ]
        throughputs = []
        for runtime in ("torch", "onnx"):
            ai = LocalAi(model_dirs={BGE_BASE: bert}, runtime=runtime, onnx_cache=cache)  # type: ignore[arg-type]
            throughputs += [
                throughput(ai, MINILM, sentences(sizes["minilm"], 1), 32, "mean", sizes["rounds"]),
                throughput(ai, BGE_BASE, sentences(sizes["bert"], 2), 32, "cls", sizes["rounds"]),
            ]
        results: dict[str, Any] = {
            "machine": machine(),
            "mode": "quick" if args.quick else "full",
            "rounds": sizes["latency_rounds"],
            "runtimes": runtimes,
            "throughput": throughputs,
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
