"""Damaged files for the reliability tests: a small data folder on the real backends (DuckDB or sqlite3 D1, embedded
Chroma) written with the hashing embedder, and three deterministic ways to damage one of its files."""

from __future__ import annotations

from pathlib import Path

from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.env import Env
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

DAMAGES = ("zero", "garbage", "truncate")
DIMENSIONS = 64


def memory(i: int) -> ShortTermMemory:
    """Every other memory is important enough for the index (importance > 0.7)."""
    return ShortTermMemory("margaret", f"memory {i}: Tom mended the oven door at the forge", 0.9 if i % 2 else 0.3,
                           WorldTime(1 + i // 24, i % 24), about=("tom",))


def make_folder(data: Path, count: int = 12, engine: str = "duckdb") -> list[str]:
    """A data folder with `count` memories (half of them indexed); returns their ids."""
    with Env.local(data, embedder=HashingEmbedder(DIMENSIONS), d1_engine=engine) as env:
        system = MemorySystem(env, clock=SimClock())
        system.remember_many([memory(i) for i in range(count)])
        return sorted(m.id for m in store.all_memories(env.DB))


def open_folder(data: Path, engine: str = "duckdb") -> object:
    return Env.local(data, embedder=HashingEmbedder(DIMENSIONS), d1_engine=engine)


def damage(path: Path, how: str) -> bytes:
    """Damages `path` in place and returns its new bytes: `zero` empties it, `garbage` overwrites its first 8 KiB
    with fixed bytes, `truncate` keeps its first third."""
    data = path.read_bytes()
    if how == "zero":
        damaged = b""
    elif how == "garbage":
        junk = bytes((i * 37 + 11) % 256 for i in range(min(len(data), 8192)))
        damaged = junk + data[len(junk) :]
    elif how == "truncate":
        damaged = data[: len(data) // 3]
    else:
        raise ValueError(how)
    path.write_bytes(damaged)
    return damaged


def set_aside(folder: Path, name: str) -> list[Path]:
    """The `<name>.damaged-*` entries beside `name` in `folder` (their journal files left out)."""
    return sorted(p for p in folder.glob(f"{name}.damaged-*") if not p.name.endswith(("-wal", "-shm", "-journal")))
