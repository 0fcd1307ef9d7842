"""The design's Worker code (tests/worker/src/index.js: indexMemory, recall, embed), unchanged, under real
`wrangler dev --env memsim` (the memory-sim-miniflare plugin) and under Miniflare's own API (a
remoteProxyConnectionString per binding), against a real `memory-sim serve`; all of it inside a network namespace
with only loopback, so nothing can leave the machine. session.py runs the whole scenario once, within a fixed
budget; each test here judges one part of what it recorded, for each way of running the Worker."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
BUDGET_S = 240  # the whole session: server start, both runners, every call (a first model load included)
RUNNERS = ["wrangler", "miniflare"]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(BUDGET_S + 120)]


def in_namespace(command: list[str]) -> list[str]:
    """`command` in a new network namespace whose only interface, loopback, is brought up."""
    script = 'ip link set lo up && exec "$@"'
    for flags in (["-n"], ["-rn"]):  # root, else an unprivileged user namespace
        probe = subprocess.run(["unshare", *flags, "sh", "-c", "ip link set lo up"], capture_output=True)
        if probe.returncode == 0:
            return ["unshare", *flags, "sh", "-c", script, "sh", *command]
    pytest.skip("cannot make a network namespace here (unshare -n): the Worker suite runs only with loopback")


@pytest.fixture(scope="module")
def report(worker_project: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("unshare and ip (util-linux, iproute2) are needed to run the Worker with only loopback")
    root = tmp_path_factory.mktemp("worker")
    worker = root / "worker"  # wrangler writes .wrangler/ beside wrangler.toml: a copy, not the checkout
    shutil.copytree(HERE / "src", worker / "src")
    shutil.copy(HERE / "wrangler.toml", worker / "wrangler.toml")
    out = root / "report.json"
    command = [sys.executable, str(HERE / "session.py"), "--project", str(worker_project), "--worker", str(worker),
               "--work", str(root / "work"), "--out", str(out), "--budget", str(BUDGET_S)]
    done = subprocess.run(in_namespace(command), capture_output=True, text=True, timeout=BUDGET_S + 60)
    assert done.returncode == 0 and out.exists(), f"session.py exited {done.returncode}:\n{done.stderr[-3000:]}"
    return dict(json.loads(out.read_text()))


def ran(report: dict[str, Any], runner: str) -> dict[str, Any]:
    seen = report[runner]
    assert "failed" not in seen, f"{runner}: {seen.get('failed')}"
    return dict(seen)


def result(seen: dict[str, Any], key: str) -> Any:
    assert "error" not in seen[key], f"{key}: {seen[key]['error']}"
    return seen[key]["result"]


@pytest.mark.parametrize("runner", RUNNERS)
def test_remember_then_recall_ranks_the_right_memory_first(report: dict[str, Any], runner: str) -> None:
    seen = ran(report, runner)
    assert result(seen, "embed") == {"dimensions": 384, "count": 2}  # the local model's width, not BGE's 768
    for memory in ("m1", "m2", "m3", "t1"):
        assert set(result(seen, f"remember:{memory}")) == {"mutationId"}
    recalled = result(seen, "recall")
    assert recalled[0]["id"] == "m1" and recalled[0]["text"].startswith("Tom the blacksmith mended my oven door")
    assert {r["id"] for r in recalled} == {"m1", "m2", "m3"}  # filter {npcId}: Tom's own memory is not Margaret's
    assert [r["score"] for r in recalled] == sorted((r["score"] for r in recalled), reverse=True)


@pytest.mark.parametrize("runner", RUNNERS)
def test_vectorize_methods(report: dict[str, Any], runner: str) -> None:
    seen = ran(report, runner)
    assert result(seen, "describe")["dimensions"] == 384 and result(seen, "describe")["vectorCount"] == 4
    got = result(seen, "getByIds")
    assert [v["id"] for v in got] == ["m1"] and len(got[0]["values"]) == 384
    assert got[0]["metadata"]["npcId"] == "margaret"
    assert [m["id"] for m in result(seen, "queryById")["matches"]][0] == "m1"
    assert set(result(seen, "insert")) == {"mutationId"}
    assert set(result(seen, "deleteByIds")) == {"mutationId"}
    assert result(seen, "getByIds_after_delete") == []
    assert result(seen, "describe_after_delete")["vectorCount"] == 3
    assert result(seen, "ai_run")["shape"] == [1, 384]


@pytest.mark.parametrize("runner", RUNNERS)
def test_d1_methods(report: dict[str, Any], runner: str) -> None:
    seen = ran(report, runner)
    assert result(seen, "exec")["count"] == 2
    assert result(seen, "run")["meta"]["changes"] == 1 and result(seen, "run")["success"] is True
    assert result(seen, "all")["results"] == [{"npc": "margaret", "mood": 0.5}, {"npc": "tom", "mood": -1.25}]
    assert result(seen, "first") == {"npc": "tom", "mood": -1.25}
    assert result(seen, "first_column") == "margaret"
    assert result(seen, "raw") == [["npc", "mood"], ["margaret", 0.5], ["tom", -1.25]]
    batch = result(seen, "batch")
    assert batch[0]["meta"]["changes"] == 1 and batch[1]["results"] == [{"n": 3}]
    assert result(seen, "count_after_failed_batch") == 3  # the failing batch kept nothing
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{12}-[0-9a-f]{32}", result(seen, "session")["bookmark"])


@pytest.mark.parametrize("runner", RUNNERS)
def test_errors_in_the_bindings_own_words(report: dict[str, Any], runner: str) -> None:
    seen = ran(report, runner)
    assert seen["topK_over_limit"] == {"error": "VECTOR_QUERY_ERROR (code = 40025): max top K is 100, but got 101"}
    assert seen["topK_over_limit_with_metadata"] == {  # returnMetadata "all" (or returnValues) caps topK at 50
        "error": "VECTOR_QUERY_ERROR (code = 40025): max top K is 50, but got 51"}
    assert "matches" in result(seen, "topK_50_with_metadata")
    assert seen["bad_sql"] == {"error": "D1_ERROR: no such table: nowhere: SQLITE_ERROR"}
    assert seen["batch_failing"] == {"error": "D1_ERROR: no such table: nowhere: SQLITE_ERROR"}
    assert seen["exec_failing"]["error"].startswith("D1_EXEC_ERROR: Error in line 2: SELEC 2: near \"SELEC\"")
    assert seen["unknown_model"] == {"error": "5007: AiError: No such model @cf/nope/x or task"}


def test_the_worker_writes_the_database_the_python_side_reads(report: dict[str, Any]) -> None:
    """The Worker's D1 binding (database_name "memory", account "local") is the data folder's own memory database:
    `Env.local` on the same folder, in another process, reads through the folder's owner what wrangler's run wrote."""
    ran(report, "wrangler")
    assert report["shared_database"] == {"through": "CloudflareD1Database", "rows": [
        {"npc": "margaret", "mood": 0.5}, {"npc": "tom", "mood": -0.25}, {"npc": "cora", "mood": 1.0}]}


@pytest.mark.parametrize("runner", RUNNERS)
def test_agent_memory_through_env_memory(report: dict[str, Any], runner: str) -> None:
    """A Worker's env.MEMORY (the plugin's RPC service binding) ingests a conversation, recalls, lists, deletes."""
    seen = ran(report, runner)
    assert result(seen, "memory:ingest") is None and result(seen, "memory:ingest_again") is None
    listed = result(seen, "memory:list")["memories"]
    assert sorted(m["type"] for m in listed) == ["event", "fact", "instruction", "task"]  # ingested once
    assert all("content" not in m and m["sessionId"] == "s1" and m["createdAt"].endswith("Z") for m in listed)
    recalled = result(seen, "memory:recall")
    assert recalled["candidates"][0]["summary"] == "The user prefers concise answers." and "concise" in recalled["answer"]
    assert "billing API" in result(seen, "memory:recall_yesterday")["answer"]
    deleted = result(seen, "memory:deleteTasks")
    assert [d["summary"] for d in deleted] == ["The user needs to update the README after the refactor."]
    assert "content" in deleted[0]
    assert len(result(seen, "memory:list_after_delete")["memories"]) == 3
    assert "## Key Facts" in result(seen, "memory:summary")["summary"]
    assert seen["memory:too_many"]["error"] == "AgentMemoryError: Too many messages: 501; at most 500 per ingest call"
    assert result(seen, "memory:deleteSession") is None
    assert result(seen, "memory:list_after_session") == {"memories": []}
    assert result(seen, "memory:fresh_recall") == {"count": 0, "answer": "", "candidates": []}
    assert result(seen, "memory:example") == "The user prefers concise answers."  # docs/agent-memory.md's Worker example
    assert result(seen, "memory:example_tasks") == {"memories": []}
