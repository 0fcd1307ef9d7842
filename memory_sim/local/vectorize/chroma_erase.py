"""Removed records leave embedded Chroma's files: its log purged, its free pages vacuumed.

Chroma keeps every write in its log (`embeddings_queue` in `chroma.sqlite3`), metadata included, until each of the
collection's segments has persisted past it; the vector segment persists every `sync_threshold` records (1,000 by
default), so a deleted record's metadata stays in the log until a thousand later writes. Chroma purges the log
itself once the segments have caught up (its `automatically_purge`, on by default), but never zeroes the pages it
frees: `chroma vacuum` (its CLI) rewrites the file.

`purge_log` makes the segments catch up through Chroma's public configuration: on a client opened afresh (Chroma
builds a segment's writer, and reads `sync_threshold`, once per system), the collection's `sync_threshold` is
lowered, one sentinel record written and deleted (the write that makes the vector segment persist and the log
purge), and the threshold set back. `vacuum` then runs Chroma's own `chroma vacuum --path <folder> --force`.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from memory_sim.errors import VectorizeUnavailable

SENTINEL_ID = "__memory_sim_compact__"  # written and deleted at once; never a Vectorize id (`__` is ours)
LOW_SYNC_THRESHOLD = 2  # Chroma's smallest useful: persist after the sentinel
VACUUM_TIMEOUT_S = 600


def purge_log(collection: Any, dimensions: int) -> None:
    """Makes Chroma persist the collection's segments and purge its log up to the last write. `collection` must
    come from a client opened after the last write through any other client of the folder."""
    with warnings.catch_warnings():  # chromadb 1.5 warns of its own legacy embedding-function config on reading it
        warnings.simplefilter("ignore", DeprecationWarning)
        hnsw = dict((collection.configuration or {}).get("hnsw") or {})
    sync, batch = int(hnsw.get("sync_threshold") or 1000), int(hnsw.get("batch_size") or 100)
    collection.modify(configuration={"hnsw": {"sync_threshold": LOW_SYNC_THRESHOLD, "batch_size": LOW_SYNC_THRESHOLD}})
    try:
        collection.add(ids=[SENTINEL_ID], embeddings=np.ones((1, dimensions), dtype=np.float32))
        collection.delete(ids=[SENTINEL_ID])
    finally:
        collection.modify(configuration={"hnsw": {"sync_threshold": sync, "batch_size": batch}})


def chroma_cli() -> Path:
    """Chroma's CLI: the `chroma` entry point the chromadb package installs beside this Python, else on PATH."""
    import shutil

    beside = Path(sys.executable).parent / "chroma"
    found = shutil.which("chroma")
    return beside if beside.exists() or found is None else Path(found)


def vacuum(folder: Path, timeout_s: float = VACUUM_TIMEOUT_S) -> None:
    """`chroma vacuum` on the folder: Chroma purges what its segments have persisted and VACUUMs its file, so
    freed pages hold nothing."""
    command = [str(chroma_cli()), "vacuum", "--path", str(folder), "--force", "--timeout", str(int(timeout_s))]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s + 30, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VectorizeUnavailable("INDEX_COMPACT", f"chroma vacuum could not run: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise VectorizeUnavailable("INDEX_COMPACT", f"chroma vacuum failed ({done.returncode}): {tail[0]}")
