"""The demo's memories are those main left before its D1 statements became set-based (one INSERT a remember
batch, held index outcomes, idle consolidations, a tick's job records in one statement): the digest of every
memory column and the counters, written by main just before that change (9264f2c, with the village that keys its
opinions; tests/sim/demo_memories_digest.py), on both local D1 engines. (Written first by 4d11a42, before the
village changed; on the same village code the digests of 9264f2c and of this code are byte for byte equal.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from demo_memories_digest import demo_memories

from memory_sim.builder import local_d1_account
from memory_sim.env import Env
from memory_sim.sim.clock import SimClock


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_the_demo_villages_memories_are_those_main_left(engine: str, tmp_path: Path) -> None:
    expected = json.loads((Path(__file__).parent / "data" / "demo_memories_8x6.json").read_text("utf-8"))
    with Env.in_memory(clock=SimClock(), db=local_d1_account(tmp_path, engine).create("memory")) as env:
        assert demo_memories(env) == expected
