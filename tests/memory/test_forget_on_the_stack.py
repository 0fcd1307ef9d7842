"""Forget on the shipped stack, through the folder's owner: a process owns the folder (Chroma, DuckDB, real MiniLM),
this one remembers, consolidates and forgets through it as a visitor, then every reader is searched for the
forgotten words: the visitor's recall (each mode, weighted), contexts, listing, diaries and exports; the
inspector's JSON routes and pages; and what `push` sends to an account. Loopback only, every wait bounded."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memory_sim.cli import main
from memory_sim.env import Env
from memory_sim.folder_lock import read_owner
from memory_sim.memory.ledger import store
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from memory_sim.testing import TEST_TOKEN, ServerForTests, scratch_folder
from memory_sim.transfer import export_sql, export_vectors
from tests.inspector.inspector_helpers import inspector
from tests.memory.forget_sweep import DEBT, SECRET_WORDS, assert_nowhere, every_reader, memories_of_day_one

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
OWNER = """
import sys
from memory_sim.env import Env
env = Env.local(sys.argv[1], environ={}, embed_model=sys.argv[2])
print("ready", flush=True)
sys.stdin.read()  # owns the folder until the test closes its stdin
env.close()
"""


def start_owner(folder: Path) -> subprocess.Popen[str]:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(folder), MINILM], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not ((found := read_owner(folder)) and found.pid == owner.pid and found.address):
        assert owner.poll() is None, f"the owner exited with {owner.returncode}"
        assert time.monotonic() < deadline, "the owner did not publish its address"
        time.sleep(0.05)
    return owner


def inspector_texts(folder: Path, ids: list[str], forgotten: str, summary: str) -> str:
    seen: list[Any] = []
    with inspector(folder) as ui:
        record = ui.json(f"/ui/api/memories/{forgotten}")  # what the forget changed: the summary made again
        assert record["forgotten"]["reason"] == "the player asked" and record["row"]["content"] == ""
        assert [(s["id"], s["state"]) for s in record["summaries"]] == [(summary, "indexed")]
        assert "made again without it" in ui.get(f"/ui/memories/{forgotten}").text
        seen += [ui.json("/ui/api/village"), ui.json("/ui/api/npcs/mira"), ui.get("/ui/npcs/mira").text]
        for memory_id in ids:
            seen += [ui.json(f"/ui/api/memories/{memory_id}"), ui.get(f"/ui/memories/{memory_id}").text]
        for mode in ("vector", "keyword", "hybrid"):
            for weighted in ("false", "true"):
                seen.append(ui.json("/ui/api/recall", npc="mira", q="What did Oswin drink and not pay for?", mode=mode,
                                    weighted=weighted, top_k=10))
        seen.append(ui.get("/ui/recall", npc="mira", q="the ale Oswin drank at the dance").text)
        seen.append(ui.json("/ui/api/relationships/mira/oswin"))
    return repr(seen)


def pushed_texts(folder: Path, tmp_path: Path) -> str:
    with scratch_folder(tmp_path / "prod") as prod, ServerForTests(prod) as server:
        account = server.fresh_account_id()
        flags = ["--account-id", account, "--api-token", TEST_TOKEN, "--base-url", server.base_url]
        assert main(["--data", str(folder), "push", *flags]) == 0
        with Env.cloudflare(account, TEST_TOKEN, "memories", base_url=server.base_url, environ={},
                            embed_model=MINILM, data_dir=tmp_path / "cache") as env:
            export_sql(env.DB, tmp_path / "pushed.sql")
            export_vectors(env.VECTORIZE, tmp_path / "pushed.ndjson")
            assert store.count_memories(env.DB) > 0  # the push carried the memories
    return (tmp_path / "pushed.sql").read_text() + (tmp_path / "pushed.ndjson").read_text()


@pytest.mark.timeout(600)
def test_a_forgotten_memory_leaves_every_reader_on_chroma_duckdb_minilm_through_the_owner(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    owner = start_owner(folder)
    try:
        clock = SimClock()
        with Env.local(folder, environ={}, embed_model=MINILM) as env:
            assert type(env.DB).__module__.startswith("memory_sim.cloudflare")  # a visitor: through the owner
            system = MemorySystem(env, clock=clock)
            system.register_npc("oswin", "Oswin", "the miller")
            ids = memories_of_day_one(system, clock)
            summary = next(m for m in store.all_memories(env.DB) if m.kind == "summary")
            assert "silver" in summary.content and "silver" in every_reader(system, tmp_path)  # before: readable
            system.forget(ids[DEBT], "the player asked")
            assert_nowhere(every_reader(system, tmp_path))
            assert system.memory(summary.id).index_state == "indexed"  # made again from what is left
            memory_ids = [m.id for m in store.all_memories(env.DB)] + [ids[DEBT]]
            summary_id = summary.id
    finally:
        owner.communicate(timeout=120)
    assert owner.returncode == 0
    assert_nowhere(inspector_texts(folder, memory_ids, ids[DEBT], summary_id))
    assert_nowhere(pushed_texts(folder, tmp_path), SECRET_WORDS)
