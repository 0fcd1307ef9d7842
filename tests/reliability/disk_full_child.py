"""Run as a child process: remember memories into DuckDB-backed D1 until the file size limit (RLIMIT_FSIZE)
stops a write, as a full disk would. Prints one JSON line: the acknowledged ids and the error's text."""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from pathlib import Path


def main(data: Path) -> None:
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.env import Env
    from memory_sim.memory.models import ShortTermMemory, WorldTime
    from memory_sim.memory.system import MemorySystem

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the process
    env = Env.local(data, embedder=HashingEmbedder(64))
    system = MemorySystem(env, clock=lambda: 0.0)
    biggest = max(p.stat().st_size for p in data.rglob("*") if p.is_file())
    resource.setrlimit(resource.RLIMIT_FSIZE, (biggest + 256 * 1024, resource.RLIM_INFINITY))
    acked: list[str] = []
    error = ""
    for hour in range(10_000):
        batch = [ShortTermMemory("margaret", f"hour {hour} note {n} " + "flour and iron " * 200, 0.3, WorldTime(hour // 24, hour % 24))
                 for n in range(10)]
        try:
            system.remember_many(batch)
        except Exception as exc:  # noqa: BLE001 - the test reads what escaped and how it was worded
            error = f"{type(exc).__name__}: {exc}"
            break
        acked += [m.id for m in batch]
    print(json.dumps({"acked": acked, "error": error}), flush=True)
    os._exit(0)  # the limit is still set: leave without flushing anything more


if __name__ == "__main__":
    main(Path(sys.argv[1]))
