"""json_each with bound parameters, as the memory system's decay job uses it (one UPDATE ... FROM json_each(?) for
many rows): the same rows on every engine, the parameters before and inside the table function bound in order."""

from __future__ import annotations

import json

from memory_sim.bindings.d1 import D1Database


def test_update_from_json_each_binds_every_parameter(db: D1Database) -> None:
    db.exec("CREATE TABLE m (id TEXT PRIMARY KEY, factor REAL, day INTEGER)")
    db.batch([db.prepare("INSERT INTO m VALUES (?, ?, ?)").bind(i, 0.05, 0) for i in ("a", "b", "c")])
    pairs = json.dumps({"a": 0.5, "c": 0.25})
    done = db.prepare("UPDATE m SET factor = j.value, day = ? FROM json_each(?) AS j WHERE m.id = j.key").bind(
        7, pairs).run()
    assert done.meta.changes == 2
    rows = db.prepare("SELECT id, factor, day FROM m ORDER BY id").all().results
    assert rows == [{"id": "a", "factor": 0.5, "day": 7}, {"id": "b", "factor": 0.05, "day": 0},
                    {"id": "c", "factor": 0.25, "day": 7}]


def test_select_from_json_each_with_a_parameter(db: D1Database) -> None:
    rows = db.prepare("SELECT j.key, j.value FROM json_each(?) AS j ORDER BY j.key").bind(
        json.dumps({"x": 1.5, "y": "text"})).all().results
    assert rows == [{"key": "x", "value": 1.5}, {"key": "y", "value": "text"}]
