"""Embedded Chroma is durable across reopen; large unfiltered queries go through HNSW and stay exact-scored."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory_sim.local.vectorize.chroma import ChromaAccount
from memory_sim.local.vectorize.oracle import OracleAccount

from .conftest import FakeClock
from .helpers import DIMS, brute_force, memories_index, vectors


def test_everything_survives_reopen(tmp_path: Path) -> None:
    account = ChromaAccount(tmp_path / "v")
    index = memories_index(account, metric="dot-product")
    data = vectors(30)
    index.upsert(data)
    index.delete_by_ids(["v7"])
    last = index.upsert([data[0]])
    before = index.query(data[3].values, top_k=10, filter={"npcId": "npc3", "day": {"$gte": 2}}, return_metadata="all")
    account.close()

    reopened = ChromaAccount(tmp_path / "v")
    again = reopened.index("memories")
    assert reopened.get_index("memories").description == "all-MiniLM-L6-v2"
    assert again.describe().vector_count == 29 and again.describe().processed_up_to_mutation == last.mutation_id
    assert {m.property_name for m in again.list_metadata_indexes()} == {"npcId", "day", "importance"}
    assert again.query(data[3].values, top_k=10, filter={"npcId": "npc3", "day": {"$gte": 2}}, return_metadata="all") == before
    reopened.close()


def test_pending_mutations_are_applied_on_close(tmp_path: Path) -> None:
    clock = FakeClock()
    account = ChromaAccount(tmp_path / "v", clock=clock, visibility_lag_s=60)
    account.create_index("idx", DIMS, "cosine")
    account.index("idx").upsert(vectors(3))
    assert account.index("idx").describe().vector_count == 0
    account.close()
    assert ChromaAccount(tmp_path / "v").index("idx").describe().vector_count == 3


def test_hnsw_plan_matches_exact_on_unfiltered_queries(tmp_path: Path) -> None:
    account = ChromaAccount(tmp_path / "v", exact_scan_limit=0)  # force the HNSW plan
    account.create_index("idx", DIMS, "euclidean")
    index = account.index("idx")
    data = vectors(300, seed=5)
    index.upsert(data)
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(20):
        query = rng.normal(size=DIMS).tolist()
        got = index.query(query, top_k=10)
        hits += len({m.id for m in got.matches} & set(brute_force(data, query, "euclidean", 10)))
        oracle_score = {v.id: float(np.linalg.norm(np.float32(v.values) - np.float32(query))) for v in data}
        assert all(abs(m.score - oracle_score[m.id]) < 1e-4 for m in got.matches)
    assert hits / 200 >= 0.95


def test_oracle_and_chroma_agree_on_a_mixed_workload(tmp_path: Path) -> None:
    results = []
    for account in (OracleAccount(), ChromaAccount(tmp_path / "v")):
        index = memories_index(account)
        index.upsert(vectors(50))
        index.insert(vectors(10, seed=3, start=45))
        index.delete_by_ids(["v1", "v2"])
        query = vectors(1, seed=8)[0].values
        results.append([
            index.query(query, top_k=20, filter={"npcId": {"$nin": ["npc0"]}, "importance": {"$gt": 0.2}}, return_values=True).to_json(),
            index.query(query, top_k=100).to_json(),
            index.list_vectors(count=7).to_json(),
        ])
    assert results[0][2] == results[1][2] and [m["id"] for m in results[0][1]["matches"]] == [m["id"] for m in results[1][1]["matches"]]
    for a, b in zip(results[0][0]["matches"], results[1][0]["matches"]):
        assert a["id"] == b["id"] and abs(a["score"] - b["score"]) < 1e-6 and a["values"] == b["values"]
