"""Chroma in a child process (local/vectorize/chroma_process.py): Chroma's own errors cross back as they are, a
killed child is an error at once (never a hang) and loses nothing acknowledged, and closing ends the child."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from memory_sim.bindings.vectorize import Vector
from memory_sim.errors import VectorizeInputError, VectorizeUnavailable
from memory_sim.local.vectorize.chroma import ChromaAccount


def test_chromas_errors_cross_back_and_closing_ends_the_child(tmp_path: Path) -> None:
    account = ChromaAccount(tmp_path, own_process=True)
    chroma = account.chroma_process
    assert chroma is not None and chroma.pid is not None and chroma.pid != os.getpid()
    with pytest.raises(VectorizeInputError, match="not_found|not found|does not exist"):
        account.index("missing")  # Chroma's NotFoundError, raised in the child, is the binding's not-found
    account.create_index("idx", 3, "cosine")
    account.index("idx").upsert([Vector("a", [1.0, 0.0, 0.0], {"k": "x"})])
    account.close()
    assert not chroma.busy
    with pytest.raises(ProcessLookupError):
        os.kill(chroma.pid, 0)  # the child is gone (joined: no zombie left)


def test_a_killed_child_is_an_error_at_once_and_loses_nothing_acknowledged(tmp_path: Path) -> None:
    account = ChromaAccount(tmp_path, own_process=True)
    account.create_index("idx", 3, "cosine")
    account.index("idx").upsert([Vector("a", [1.0, 0.0, 0.0], {"k": "x"})])
    chroma = account.chroma_process
    assert chroma is not None and chroma.pid is not None
    os.kill(chroma.pid, signal.SIGKILL)
    with pytest.raises(VectorizeUnavailable, match="Chroma's process is gone"):
        account.index("idx").upsert([Vector("b", [0.0, 1.0, 0.0])])
    with pytest.raises(VectorizeUnavailable):
        account.close()  # settling needs Chroma too: an error, within the deadline
    reopened = ChromaAccount(tmp_path, own_process=True)
    try:
        found = reopened.index("idx").get_by_ids(["a", "b"])
        assert [(v.id, list(v.values), v.metadata) for v in found] == [("a", [1.0, 0.0, 0.0], {"k": "x"})]
    finally:
        reopened.close()
