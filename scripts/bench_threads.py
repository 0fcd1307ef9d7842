"""The `embed_threads` default, measured side by side: one embedding at a time (as `remember` embeds), MiniLM,
on onnxruntime and torch, with 1 thread and with the runtime's own default (0: one per core). Each case runs in
its own process (torch's thread count is process-wide), the cases interleaved over --rounds so a change in the
machine's load falls on all of them alike. Prints one line per case: median and 90th-percentile ms per text.

    python scripts/bench_threads.py [--texts 40] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CASES = [("onnx", 1), ("onnx", 0), ("torch", 1), ("torch", 0)]

CHILD = """
import json, sys, time
from memory_sim.local.ai.local_ai import LocalAi
runtime, threads, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ai = LocalAi(runtime=runtime, threads=threads)
ai.load("minilm")
texts = [f"Tom mended the fence by the mill on day {i} and Margaret saw it" for i in range(count)]
times = []
for text in texts:
    start = time.perf_counter()
    ai.run("minilm", {"text": [text]})
    times.append((time.perf_counter() - start) * 1000)
print(json.dumps(times))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    times: dict[tuple[str, int], list[float]] = {case: [] for case in CASES}
    for _ in range(args.rounds):
        for runtime, threads in CASES:
            out = subprocess.run([sys.executable, "-c", CHILD, runtime, str(threads), str(args.texts)],
                                 capture_output=True, text=True, check=True, env=os.environ.copy()).stdout
            times[(runtime, threads)] += json.loads(out.splitlines()[-1])
    print(f"cpus {os.cpu_count()}, load {os.getloadavg()[0]:.1f}, {args.texts} texts x {args.rounds} rounds")
    for (runtime, threads), found in times.items():
        found.sort()
        p90 = found[int(0.9 * (len(found) - 1))]
        print(f"{runtime:5} threads={threads or 'default':7}  median {statistics.median(found):6.1f} ms  p90 {p90:6.1f} ms")


if __name__ == "__main__":
    main()
