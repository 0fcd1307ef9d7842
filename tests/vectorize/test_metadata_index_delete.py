"""Cloudflare's rule: vectors written before a metadata index exists are not indexed until re-upserted. So
deleting a metadata index clears its values; re-creating it does not make old vectors filterable again."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from memory_sim.local.vectorize.chroma import ChromaAccount

from .helpers import memories_index, vectors

SNAPSHOT = Path("snapshots") / "memories.snapshot"


def _npc1(index: Any, query: list[float]) -> set[str]:
    return {m.id for m in index.query(query, top_k=100, filter={"npcId": "npc1"}).matches}


def test_recreated_index_does_not_see_old_vectors(make_account: Callable[..., Any]) -> None:
    index = memories_index(make_account())
    data = vectors(20)
    index.upsert(data)
    assert _npc1(index, data[0].values) == {"v1", "v5", "v9", "v13", "v17"}
    index.delete_metadata_index("npcId")
    index.create_metadata_index("npcId", "string")
    assert _npc1(index, data[0].values) == set()
    assert index.query(data[0].values, top_k=3, return_metadata="indexed").matches[0].metadata.keys() == {"day", "importance"}
    index.upsert([data[5]])
    assert _npc1(index, data[0].values) == {"v5"}
    assert index.query(data[0].values, top_k=100, filter={"day": 3}).count == 2  # other indexes untouched


def _recreate_and_close(folder: Path) -> list[float]:
    account = ChromaAccount(folder)
    index = memories_index(account)
    data = vectors(20)
    index.upsert(data)
    index.delete_metadata_index("npcId")
    index.create_metadata_index("npcId", "string")
    index.upsert([data[9]])
    account.close()
    return data[0].values


def test_cleared_values_stay_cleared_after_reopen_from_chroma_and_from_snapshot(tmp_path: Path) -> None:
    query = _recreate_and_close(tmp_path / "v")
    account = ChromaAccount(tmp_path / "v")
    index = account.index("memories")
    assert index.store.loaded_from_snapshot and _npc1(index, query) == {"v9"}
    account.close()
    (tmp_path / "v" / SNAPSHOT).unlink()  # rebuild from Chroma's stored `ix` values
    account = ChromaAccount(tmp_path / "v")
    index = account.index("memories")
    assert not index.store.loaded_from_snapshot and _npc1(index, query) == {"v9"}
    assert index.query(query, top_k=100, filter={"day": {"$gte": 0}}).count == 20
    account.close()
