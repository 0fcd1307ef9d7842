"""The numpy snapshot beside embedded Chroma: reopen uses it when its tag matches Chroma's state, and a
stale, damaged or missing snapshot is detected and the arrays rebuilt from Chroma (never stale answers)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from memory_sim.bindings.vectorize import Vector
from memory_sim.local.vectorize.chroma import ChromaAccount

from .helpers import memories_index, vectors

SNAPSHOT = Path("snapshots") / "memories.snapshot"


def _answers(index: Any, data: list[Vector]) -> list[Any]:
    query = data[3].values
    return [
        index.query(query, top_k=20, filter={"npcId": "npc1"}, return_metadata="all").to_json(),
        index.query(query, top_k=20, filter={"npcId": {"$in": ["npc0", "npc2"]}, "day": {"$gte": 2, "$lt": 8}}, return_metadata="indexed").to_json(),
        index.query(query, top_k=20, namespace="a", return_values=True).to_json(),
        index.query(query, top_k=50).to_json(),
        [v.to_json() for v in index.get_by_ids(["v0", "v5", "v9"])],
        index.describe().to_json(),
    ]


def _build(folder: Path) -> tuple[list[Vector], list[Any]]:
    account = ChromaAccount(folder)
    index = memories_index(account, metric="dot-product")  # Chroma's cosine space hands values back ~1 ulp off
    data = vectors(40) + vectors(10, seed=2, start=40, namespace="a")
    index.upsert(data)
    index.delete_by_ids(["v7", "v12"])
    index.upsert([Vector("v3", data[3].values, {"npcId": "npc2", "day": 4})])
    answers = _answers(index, data)
    account.close()
    return data, answers


def _reopen(folder: Path) -> tuple[ChromaAccount, Any]:
    account = ChromaAccount(folder)
    return account, account.index("memories")


def test_reopen_uses_the_snapshot_and_answers_the_same(tmp_path: Path) -> None:
    data, before = _build(tmp_path / "v")
    assert (tmp_path / "v" / SNAPSHOT).is_file()
    account, index = _reopen(tmp_path / "v")
    assert index.store.loaded_from_snapshot
    assert _answers(index, data) == before
    index.upsert(vectors(5, seed=9, start=100))  # the row sets keep working after a snapshot load
    assert {m.id for m in index.query(data[0].values, top_k=50, filter={"npcId": "npc0"}).matches} >= {"v100", "v104"}
    account.close()


def test_a_write_after_reopen_removes_the_snapshot_before_changing_chroma(tmp_path: Path) -> None:
    _build(tmp_path / "v")
    account, index = _reopen(tmp_path / "v")
    index.delete_by_ids(["v1"])
    assert not (tmp_path / "v" / SNAPSHOT).exists()  # a crash now cannot leave a snapshot that looks current
    account.close()
    assert (tmp_path / "v" / SNAPSHOT).is_file()


def test_a_stale_snapshot_is_rebuilt_from_chroma(tmp_path: Path) -> None:
    data, _ = _build(tmp_path / "v")
    old = tmp_path / "old.snapshot"
    shutil.copy(tmp_path / "v" / SNAPSHOT, old)
    account, index = _reopen(tmp_path / "v")
    index.upsert([Vector("v0", data[0].values, {"npcId": "npc3", "day": 9})])  # same count, different content
    expected = _answers(index, data)
    account.close()
    shutil.copy(old, tmp_path / "v" / SNAPSHOT)
    account, index = _reopen(tmp_path / "v")
    assert not index.store.loaded_from_snapshot
    assert _answers(index, data) == expected
    assert index.query(data[0].values, top_k=1, filter={"npcId": "npc3", "day": 9}).matches[0].id == "v0"
    account.close()


def test_a_damaged_snapshot_is_rebuilt_from_chroma(tmp_path: Path) -> None:
    data, before = _build(tmp_path / "v")
    path = tmp_path / "v" / SNAPSHOT
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # one flipped byte inside the matrix: its checksum catches it
    path.write_bytes(bytes(raw))
    account, index = _reopen(tmp_path / "v")
    assert not index.store.loaded_from_snapshot
    assert _answers(index, data) == before
    account.close()
    path.write_bytes(bytes(raw[: len(raw) // 3]))  # truncated
    account, index = _reopen(tmp_path / "v")
    assert not index.store.loaded_from_snapshot and _answers(index, data) == before
    account.close()
    path.write_bytes(b"not a snapshot")
    account, index = _reopen(tmp_path / "v")
    assert not index.store.loaded_from_snapshot and _answers(index, data) == before
    account.close()


def test_a_write_burst_writes_a_snapshot_without_close(tmp_path: Path) -> None:
    account = ChromaAccount(tmp_path / "v", snapshot_every=30)
    index = memories_index(account)
    data = vectors(40)
    index.upsert(data[:20])
    assert not (tmp_path / "v" / SNAPSHOT).exists()
    index.upsert(data[20:])
    assert (tmp_path / "v" / SNAPSHOT).is_file()
    other = ChromaAccount(tmp_path / "v")  # as if the first process had been killed
    again = other.index("memories")
    assert again.store.loaded_from_snapshot and again.describe().vector_count == 40
    assert [m.id for m in again.query(data[1].values, top_k=3, filter={"npcId": "npc1"}).matches][0] == "v1"


def test_deleting_the_index_deletes_its_snapshot(tmp_path: Path) -> None:
    _build(tmp_path / "v")
    account = ChromaAccount(tmp_path / "v")
    account.delete_index("memories")
    assert not (tmp_path / "v" / SNAPSHOT).exists()
    account.create_index("memories", 8, "cosine")
    assert account.index("memories").describe().vector_count == 0


def test_vectors_chroma_holds_in_the_older_two_key_form_read_the_same(tmp_path: Path) -> None:
    """Chroma held a vector's metadata and indexed values under two keys ("md", "ix") before they became one:
    a folder written so still opens, rebuilt from Chroma, with the same answers, and takes new writes."""
    data, before = _build(tmp_path / "v")
    account, index = _reopen(tmp_path / "v")
    collection = index.store.collection
    rows = collection.get(include=["embeddings", "metadatas"])
    legacy = []
    for meta in rows["metadatas"]:
        metadata, indexed = json.loads(meta["v"])
        namespace = {"ns": meta["ns"]} if "ns" in meta else {}
        legacy.append({"md": json.dumps(metadata), "ix": json.dumps(indexed)} | namespace)
    collection.delete(ids=rows["ids"])
    collection.add(ids=rows["ids"], embeddings=rows["embeddings"], metadatas=legacy)
    account.close()
    (tmp_path / "v" / SNAPSHOT).unlink()

    account, index = _reopen(tmp_path / "v")
    assert not index.store.loaded_from_snapshot
    assert _answers(index, data) == before
    index.upsert([Vector("v3", data[3].values, {"npcId": "npc0", "day": 9})])  # a legacy row written anew
    assert [m.id for m in index.query(data[3].values, top_k=1, filter={"npcId": "npc0", "day": 9}).matches] == ["v3"]
    account.close()
    (tmp_path / "v" / SNAPSHOT).unlink(missing_ok=True)  # read back from Chroma's row, not the snapshot
    account, index = _reopen(tmp_path / "v")
    assert not index.store.loaded_from_snapshot
    assert index.get_by_ids(["v3"])[0].metadata == {"npcId": "npc0", "day": 9}
    account.close()
