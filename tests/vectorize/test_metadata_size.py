"""Vectorize's metadata cap as production enforces it (2026): 10,240 bytes of compact JSON, UTF-8, per vector; one
vector over it fails the whole batch with `VECTOR_UPSERT_ERROR (code = 40016)` (insert: VECTOR_INSERT_ERROR), and
nothing of the batch is stored."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from memory_sim.bindings import limits
from memory_sim.bindings.vectorize import Vector
from memory_sim.errors import VectorizeInputError

from .helpers import DIMS, memories_index

Make = Callable[..., Any]


def _metadata_of(size: int) -> dict[str, str]:
    """Metadata whose compact JSON is exactly `size` bytes, with multi-byte characters (an escape would differ)."""
    base = len(json.dumps({"text": ""}, separators=(",", ":")).encode())
    wide = "é" * ((size - base) // 2)
    return {"text": wide + "x" * (size - base - 2 * len(wide))}


def test_the_helper_counts_compact_utf8_bytes() -> None:
    for size in (10_240, 10_241):
        assert len(json.dumps(_metadata_of(size), separators=(",", ":"), ensure_ascii=False).encode()) == size


def test_10240_bytes_pass_and_one_more_fails_the_whole_batch(make_account: Make) -> None:
    index = memories_index(make_account())
    ok = [0.5] * DIMS
    fits = [Vector(f"v{i}", ok, _metadata_of(limits.VECTORIZE_MAX_METADATA_BYTES)) for i in range(3)]
    index.upsert(fits)  # exactly at the cap: accepted
    batch = [Vector(f"w{i}", ok, {"n": i}) for i in range(99)] + [Vector("big", ok, _metadata_of(10_241))]
    for write, op in ((index.upsert, "VECTOR_UPSERT"), (index.insert, "VECTOR_INSERT")):
        with pytest.raises(VectorizeInputError) as refused:
            write(batch)
        assert str(refused.value).startswith(f"{op}_ERROR (code = 40016): metadata too large: 10241 bytes > 10240")
        assert refused.value.code == 40016
    assert index.get_by_ids(["w0", "w98", "big"]) == []  # the whole batch refused
    assert len(index.get_by_ids(["v0", "v1", "v2"])) == 3


def test_a_written_vector_keeps_a_private_copy_of_its_metadata_in_json_types() -> None:
    """The copy a write keeps is the one a JSON round trip gives (numpy floats as floats), and the caller's later
    changes to its lists and nested object do not reach it."""
    import numpy as np

    from memory_sim.bindings.vectorize import Vector
    from memory_sim.bindings.vectorize_validation import check_vectors

    tags, nested = ["a", "b"], {"x": 1, "tags": ["c"]}
    metadata = {"npcId": "tom", "day": np.float64(2.5), "tags": tags, "nested": nested, "ok": True}
    values = np.ones(4, dtype=np.float32)
    record = check_vectors([Vector("v1", values, metadata)], 4, "VECTOR_UPSERT")[0]
    values[0] = 7.0
    tags.append("z")
    nested["tags"].append("d")
    nested["x"] = 9
    assert record.metadata == {"npcId": "tom", "day": 2.5, "tags": ["a", "b"], "nested": {"x": 1, "tags": ["c"]},
                               "ok": True}
    assert type(record.metadata["day"]) is float
    assert record.values.dtype == np.float32 and record.values.tolist() == [1.0, 1.0, 1.0, 1.0]
