"""Bounded mixed load: threads (or server clients) each remember, recall and run jobs for a wall-clock window;
returns counts, errors and throughput. Used by test_load_and_isolation.py and scripts/load_test.py."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from memory_sim.memory.models import ShortTermMemory, WorldTime


@dataclass
class LoadReport:
    workers: int
    seconds: float
    remembered: int = 0
    recalls: int = 0
    jobs: int = 0
    errors: list[str] = field(default_factory=list)
    foreign: int = 0  # recalls that returned another NPC's memory (must stay 0)
    acked: set[str] = field(default_factory=set)

    @property
    def operations_per_s(self) -> float:
        return (self.remembered + self.recalls + self.jobs) / self.seconds if self.seconds else 0.0


def run_load(systems: list[Any], seconds: float, seed: int = 0, clock: Callable[[], float] = time.monotonic) -> LoadReport:
    """One thread per system (they may share one); worker i is NPC `npc-i`. Stops after `seconds` (wall)."""
    report, lock = LoadReport(len(systems), seconds), threading.Lock()
    deadline = clock() + seconds

    def work(worker: int, system: Any) -> None:
        rng, npc, n = random.Random(seed * 100 + worker), f"npc-{worker}", 0
        system.register_npc(npc, npc)  # a recall before its first memory asks after a known NPC, not an unknown one
        while clock() < deadline:
            n += 1
            try:
                draw = rng.random()
                if draw < 0.5:
                    memory = ShortTermMemory(npc, f"{npc} saw the forge glow, note {n} {rng.random():.6f}",
                                             rng.choice([0.3, 0.8, 0.95]), WorldTime(n // 24, n % 24))
                    system.remember(memory)
                    with lock:
                        report.remembered += 1
                        report.acked.add(memory.id)
                elif draw < 0.95:
                    found = system.recall(npc, "the forge glow", top_k=5)
                    with lock:
                        report.recalls += 1
                        report.foreign += sum(1 for r in found if r.npc_id != npc)
                else:
                    system.retry_pending()
                    with lock:
                        report.jobs += 1
            except Exception as exc:  # noqa: BLE001 - every error is a finding: counted, worded
                with lock:
                    report.errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=work, args=(i, s), daemon=True) for i, s in enumerate(systems)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 60)
    if any(t.is_alive() for t in threads):
        report.errors.append("deadlock: a worker did not finish within 60 s of the window")
    report.seconds = time.monotonic() - started
    return report


def server_clients(server: Any, account_id: str, count: int = 8, dimensions: int = 64) -> tuple[list[Any], Any]:
    """`count` MemorySystems on one account of the local server, each with its own SDK client (its own HTTP
    connection pool), over one index and one database; returns them and a D1 handle for the final count."""
    from memory_sim.builder import build_cloudflare_env
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.memory.system import MemorySystem
    from memory_sim.settings import Settings
    from memory_sim.sim.clock import SimClock

    clock = SimClock()
    settings = Settings.load(environ={}, backend="cloudflare", account_id=account_id, api_token="unused",
                             embed_model="fake/hashing")  # each env below brings its own client
    systems = []
    for _ in range(count):  # the first creates the index and the database; the others open them
        env = build_cloudflare_env(settings, embedder=HashingEmbedder(dimensions), client=server.client(account_id))
        systems.append(MemorySystem(env, clock=clock))
    return systems, systems[0].env.DB
