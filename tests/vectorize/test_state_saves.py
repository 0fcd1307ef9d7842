"""Embedded Chroma stores the index state with snapshots and at close, not after every write: an index left
without a close (a crash) still reopens with every vector, and a closed one records its last mutation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memory_sim.local.vectorize.chroma import ChromaAccount

from .helpers import memories_index, vectors

WRITE_AND_DIE = """
import os, sys
sys.path.insert(0, {tests!r})
from memory_sim.local.vectorize.chroma import ChromaAccount
from vectorize.helpers import memories_index, vectors
index = memories_index(ChromaAccount({folder!r}), metric="dot-product")
for v in vectors(12):
    index.upsert([v])          # one mutation each, as remember does
index.delete_by_ids(["v3"])
os._exit(0)                    # no close: nothing is stored on the way out
"""


def test_an_index_left_without_close_reopens_with_every_vector(tmp_path: Path) -> None:
    folder = tmp_path / "v"
    script = WRITE_AND_DIE.format(tests=str(Path(__file__).parent.parent), folder=str(folder))
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    reopened = ChromaAccount(folder)
    index = reopened.index("memories")
    data = {v.id: v for v in vectors(12)}
    assert index.describe().vector_count == 11
    assert sorted(v.id for v in index.get_by_ids(list(data))) == sorted(set(data) - {"v3"})
    assert index.query(data["v5"].values, top_k=1).matches[0].id == "v5"
    # the metadata indexes made before the writes were stored at once: filters still work
    assert index.query(data["v5"].values, top_k=1, filter={"npcId": "npc1"}).matches[0].id == "v5"
    last = index.upsert([data["v3"]])
    reopened.close()
    again = ChromaAccount(folder)
    assert again.index("memories").describe().processed_up_to_mutation == last.mutation_id
    assert again.index("memories").describe().vector_count == 12
    again.close()
