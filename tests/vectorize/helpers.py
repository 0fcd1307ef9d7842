"""Small builders shared by the Vectorize tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from memory_sim.bindings.vectorize import Vector

DIMS = 8


def vectors(count: int, seed: int = 0, dims: int = DIMS, start: int = 0, **extra: Any) -> list[Vector]:
    """`count` random vectors with npcId/day/importance metadata, ids v<start>..."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(start, start + count):
        metadata = {"npcId": f"npc{i % 4}", "day": i % 10, "importance": round(float(rng.random()), 3), "text": f"memory {i}"}
        out.append(Vector(f"v{i}", rng.normal(size=dims).astype(np.float32).tolist(), metadata, extra.get("namespace")))
    return out


def memories_index(account: Any, name: str = "memories", metric: str = "cosine", dims: int = DIMS) -> Any:
    account.create_index(name, dims, metric, "all-MiniLM-L6-v2")
    index = account.index(name)
    index.create_metadata_index("npcId", "string")
    index.create_metadata_index("day", "number")
    index.create_metadata_index("importance", "number")
    return index


def brute_force(data: list[Vector], query: list[float], metric: str, k: int) -> list[str]:
    q = np.asarray(query, dtype=np.float32).astype(np.float64)
    scored = []
    for v in data:
        x = np.asarray(v.values, dtype=np.float32).astype(np.float64)
        if metric == "cosine":
            scored.append((-float(x @ q / (np.linalg.norm(x) * np.linalg.norm(q))), v.id))
        elif metric == "euclidean":
            scored.append((float(np.linalg.norm(x - q)), v.id))
        else:
            scored.append((-float(x @ q), v.id))
    return [vid for _, vid in sorted(scored)[:k]]
