"""The string row sets (inverted index) of the arrays agree with the reference evaluator through upserts,
re-writes to other values, deletes (which move the last row into the hole) and forgotten indexes."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_sim.bindings.filters import matches, parse_filter
from memory_sim.bindings.vectorize_validation import Record
from memory_sim.local.vectorize.arrays import ArrayTable
from memory_sim.local.vectorize.core import Stored

names = st.sampled_from(["anna", "bob", "cara"])
writes = st.tuples(st.integers(0, 11), st.one_of(names, st.none()), st.integers(0, 3), st.sampled_from([None, "a"]))
steps = st.lists(st.one_of(st.tuples(st.just("write"), writes), st.tuples(st.just("delete"), st.integers(0, 11))), max_size=40)
filters = st.one_of(
    st.builds(lambda n: {"npcId": n}, names),
    st.builds(lambda ns: {"npcId": {"$in": ns}}, st.lists(names, max_size=3)),
    st.builds(lambda n, d: {"npcId": n, "day": {"$gte": d}}, names, st.integers(0, 3)),
    st.builds(lambda n: {"npcId": {"$ne": n}}, names),
)


@settings(max_examples=60, deadline=None)
@given(steps=steps, filter=filters, namespace=st.sampled_from([None, "a"]))
def test_candidates_equal_the_reference_evaluator(steps: list[Any], filter: dict[str, Any], namespace: str | None) -> None:
    table = ArrayTable(2, "euclidean", capacity=2)
    model: dict[str, tuple[dict[str, Any], str | None]] = {}
    for kind, arg in steps:
        if kind == "delete":
            table.delete([f"v{arg}"])
            model.pop(f"v{arg}", None)
            continue
        vid, name, day, ns = f"v{arg[0]}", arg[1], float(arg[2]), arg[3]
        indexed = {"day": day} if name is None else {"npcId": name, "day": day}
        table.write([Stored(Record(vid, np.ones(2, dtype=np.float32), None, ns), indexed)])
        model[vid] = (indexed, ns)
    rows = table.candidates(parse_filter(filter), namespace)
    got = set(table.ids) if rows is None else {table.ids[r] for r in rows.tolist()}
    expected = {v for v, (ix, ns) in model.items() if (namespace is None or ns == namespace) and matches(parse_filter(filter), ix)}
    assert got == expected
    forgotten = set(table.forget("npcId"))
    assert forgotten == {v for v, (ix, _) in model.items() if "npcId" in ix}
    assert table.candidates(parse_filter({"npcId": "anna"}), None).shape[0] == 0
