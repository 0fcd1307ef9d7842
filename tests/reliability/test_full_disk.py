"""A really full disk (a 32 MB tmpfs, mounted in a user and mount namespace of the child's own: no root needed)
with D1 and Chroma on it: the writes stop with one error that says the disk is full, close finishes, and every
acknowledged memory is there after reopening. Before, requests got no answer for 60-120 s and Env.close() hung
over 200 s inside Chroma. Skipped where `unshare -rm` is not allowed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def _namespaces_allowed() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=30, check=False)
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not _namespaces_allowed(), reason="user and mount namespaces are not allowed here")
@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_a_full_disk_stops_writes_with_one_error_and_close_finishes(tmp_path: Path, engine: str) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    child = (f"mount -t tmpfs -o size=32m tmpfs {mount} && "
             f"{sys.executable} {HERE / 'full_disk_child.py'} {mount / 'data'} {engine}")
    done = subprocess.run(["unshare", "-rm", "sh", "-c", child], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["acked"] > 0  # room for some writes first
    assert "disk is full" in outcome["error"] and "\n" not in outcome["error"], outcome
    assert outcome["closed"] == "closed", outcome
    assert outcome["lost"] == 0, outcome


def test_close_closes_every_part_even_when_one_fails() -> None:
    from memory_sim.env import Env
    from memory_sim.errors import VectorizeUnavailable

    env = Env.in_memory()
    closed: list[str] = []
    env.close_hooks[:0] = [lambda: closed.append("lock")]  # hooks run last-first: the lock goes last

    def failing() -> None:
        raise VectorizeUnavailable("INDEX_CLOSE", "Chroma did not close")

    env.close_hooks += [failing, lambda: closed.append("server")]
    with pytest.raises(VectorizeUnavailable, match="did not close"):
        env.close()
    assert closed == ["server", "lock"]  # before, the failure left the lock (and the rest) held


def test_chroma_close_has_a_deadline(tmp_path: Path) -> None:
    """Past its deadline, close says so instead of waiting (here a deadline of 0 s: no close is that fast)."""
    from memory_sim.errors import VectorizeUnavailable
    from memory_sim.local.vectorize.chroma import ChromaAccount

    account = ChromaAccount(tmp_path / "vectorize")
    account.create_index("idx", 8, "cosine")
    account.index("idx")
    with pytest.raises(VectorizeUnavailable, match="did not close within 0 s"):
        account.close(deadline_s=0)
    ChromaAccount(tmp_path / "other").close()  # a close with time to finish returns
