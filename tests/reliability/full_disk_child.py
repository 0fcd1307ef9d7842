"""Run as a child process, in a mount namespace of its own over a small tmpfs (test_full_disk.py): remember
important memories (D1 and Chroma both written) until the disk is full, close, reopen and count. Prints one JSON
line: memories acknowledged, the error that stopped them, whether close finished, and the memories found after."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(data: Path, engine: str) -> None:
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.env import Env
    from memory_sim.memory.ledger import store
    from memory_sim.memory.models import ShortTermMemory, WorldTime
    from memory_sim.memory.system import MemorySystem

    def opened() -> Env:
        return Env.local(data, embedder=HashingEmbedder(64), d1_engine=engine, serve_owner=False)

    env = opened()
    system = MemorySystem(env, clock=lambda: 0.0)
    acked: list[str] = []
    error = ""
    for hour in range(100_000):
        batch = [ShortTermMemory("margaret", f"hour {hour} note {n} " + "flour and iron " * 600, 0.9,
                                 WorldTime(hour // 24, hour % 24)) for n in range(10)]
        try:
            system.remember_many(batch)
        except Exception as exc:  # noqa: BLE001 - the test reads what stopped the writes
            error = f"{type(exc).__name__}: {exc}"
            break
        acked += [m.id for m in batch]
    try:
        env.close()
        closed = "closed"
    except Exception as exc:  # noqa: BLE001
        closed = f"{type(exc).__name__}: {exc}"
    with opened() as again:
        found = {m.id for m in store.all_memories(again.DB)}
    print(json.dumps({"acked": len(acked), "lost": len(set(acked) - found), "error": error, "closed": closed}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
