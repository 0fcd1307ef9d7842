"""D1's file on a full disk (RLIMIT_FSIZE in a child process: the real DuckDB write path fails): the error names
the cause, every acknowledged memory survives, the failed batch is rolled back whole, and writing works again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


@pytest.mark.slow
def test_disk_full_for_d1_loses_nothing_and_says_why(tmp_path: Path) -> None:
    from memory_sim.check import check
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.env import Env
    from memory_sim.memory.ledger import store
    from memory_sim.memory.models import ShortTermMemory, WorldTime
    from memory_sim.memory.system import MemorySystem

    env_vars = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(HERE / "disk_full_child.py"), str(tmp_path)], capture_output=True,
                          text=True, env=env_vars, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["acked"], "the limit must leave room for some writes first"
    assert outcome["error"].startswith("D1Error: D1_ERROR:") and "File too large" in outcome["error"]

    with Env.local(tmp_path, embedder=HashingEmbedder(64)) as env:
        in_d1 = {m.id for m in store.all_memories(env.DB)}
        assert set(outcome["acked"]) == in_d1  # all acknowledged memories; nothing of the failed batch
        system = MemorySystem(env, clock=lambda: 0.0)
        system.remember(ShortTermMemory("margaret", "Space again for the flour accounts.", 0.9, WorldTime(500, 1)))
        assert store.count_memories(env.DB) == len(in_d1) + 1 and check(env).clean
