"""One run of the test Worker against a real `memory-sim serve`, meant to run inside `unshare -n` (only loopback):
the server, then the Worker under `wrangler dev --env memsim` (the memory-sim-miniflare plugin) and under
Miniflare's own API (a remoteProxyConnectionString per binding, miniflare_run.mjs), each driven over HTTP
through the same scenario. What each call answered is written as JSON to `--out`; test_worker.py judges it.

    python session.py --project DIR --worker DIR --work DIR --out FILE [--budget SECONDS]

`--project`: the npm project holding wrangler and memory-sim-miniflare (conftest.py installs it). Every wait is
bounded by the budget; a step past it is recorded as an error, not waited for.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from memory_sim.server.loopback import free_port

TOKEN = "worker-suite-token"
ACCOUNT = "local"  # the data folder's own account: the database the Python MemorySystem uses
DATABASE = "memory"  # the folder's memory database (Settings.database_name's default)
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MEMORIES = [
    {"id": "m1", "npcId": "margaret", "content": "Tom the blacksmith mended my oven door and asked nothing for it",
     "day": 3, "importance": 0.8},
    {"id": "m2", "npcId": "margaret", "content": "Rain spoiled the harvest festival in the square", "day": 4,
     "importance": 0.5},
    {"id": "m3", "npcId": "margaret", "content": "The baker's daughter sang at the wedding", "day": 5,
     "importance": 0.4},
    {"id": "t1", "npcId": "tom", "content": "I fixed the widow's oven door today", "day": 3, "importance": 0.6},
]


class Budget:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def left(self, at_most: float) -> float:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the suite's time budget is spent")
        return min(at_most, remaining)


def wait_for(check: Callable[[], bool], budget: Budget, what: str, process: subprocess.Popen[bytes]) -> None:
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited {process.returncode} before it was ready")
        try:
            if check():
                return
        except httpx.TransportError:
            pass
        budget.left(1)
        time.sleep(0.25)  # polling a real process that is still starting


def server(data: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())",
               "--data", str(data), "serve", "--port", str(port), "--token", TOKEN, "--log-level", "warning"]
    return subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)


def api(base: str, method: str, path: str, **request: Any) -> Any:
    answer = httpx.request(method, f"{base}/client/v4/accounts/{ACCOUNT}{path}",
                           headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60, **request)
    answer.raise_for_status()
    return answer.json()["result"]


def make_index(base: str, name: str) -> None:
    api(base, "POST", "/vectorize/v2/indexes", json={"name": name, "config": {"dimensions": 384, "metric": "cosine"}})
    api(base, "POST", f"/vectorize/v2/indexes/{name}/metadata_index/create",
        json={"propertyName": "npcId", "indexType": "string"})


AGENT_NAMESPACE = "npc-agent"  # the namespace env.MEMORY is bound to (wrangler.toml, miniflare_run.mjs)
CONVERSATION = [
    {"role": "user", "content": "I prefer dark mode in all applications."},
    {"role": "user", "content": "I prefer concise answers."},
    {"role": "user", "content": "We deployed the billing API yesterday.", "timestamp": "2026-04-20T10:00:00Z"},
    {"role": "user", "content": "I need to update the README after the refactor."},
]


def memory_scenario(call: Callable[[str, str, Any], Any], profile: str) -> None:
    """Agent Memory through the Worker's env.MEMORY: ingest (twice), list, recall, delete, summary, the limits."""
    said = {"profile": profile}
    call("memory:ingest", "/memory/ingest", {**said, "messages": CONVERSATION, "sessionId": "s1"})
    call("memory:ingest_again", "/memory/ingest", {**said, "messages": CONVERSATION, "sessionId": "s1"})
    call("memory:list", "/memory/list", said)
    call("memory:recall", "/memory/recall", {**said, "query": "How should I answer this user?"})
    call("memory:recall_yesterday", "/memory/recall", {**said, "query": "What did we deploy yesterday?",
                                                       "options": {"referenceDate": "2026-04-20"}})
    call("memory:deleteTasks", "/memory/deleteTasks", said)
    call("memory:list_after_delete", "/memory/list", said)
    call("memory:summary", "/memory/summary", said)
    call("memory:too_many", "/memory/ingest", {**said, "messages": [{"role": "user", "content": "x"}] * 501})
    call("memory:deleteSession", "/memory/deleteSession", {**said, "sessionId": "s1"})
    call("memory:list_after_session", "/memory/list", said)
    call("memory:fresh_recall", "/memory/recall", {"profile": f"{profile}-fresh", "query": "anything?"})
    call("memory:example", "/memory/example", {"profile": f"{profile}-docs", "messages": CONVERSATION,
                                               "question": "How should I answer this user?"})
    call("memory:example_tasks", "/memory/list", {"profile": f"{profile}-docs", "options": {"type": "task"}})


def scenario(worker: str, table: str, budget: Budget) -> dict[str, Any]:
    """Every binding method the Worker's routes reach, in order; each answer kept as `{result}` or `{error}`."""
    seen: dict[str, Any] = {}

    def call(key: str, route: str, body: Any) -> Any:
        try:
            answer = httpx.post(f"{worker}{route}", json=body, timeout=budget.left(120))
            seen[key] = answer.json()
        except (httpx.HTTPError, ValueError, TimeoutError) as exc:
            seen[key] = {"error": f"no answer: {type(exc).__name__}: {exc}"}
        return seen[key].get("result")

    call("embed", "/embed", {"texts": ["the miller", "the baker"]})
    for memory in MEMORIES:
        call(f"remember:{memory['id']}", "/remember", memory)
    call("recall", "/recall", {"npcId": "margaret", "query": "Who mended the oven door?", "k": 3})
    call("describe", "/vectorize/describe", {})
    call("getByIds", "/vectorize/getByIds", {"ids": ["m1", "nope"]})
    call("queryById", "/vectorize/queryById", {"id": "m1", "options": {"topK": 2, "filter": {"npcId": "margaret"}}})
    call("insert", "/vectorize/insert", {"vectors": [{"id": "m1", "values": [0.1] * 384}]})
    call("topK_over_limit", "/vectorize/query", {"vector": [0.1] * 384, "options": {"topK": 101}})
    call("topK_over_limit_with_metadata", "/vectorize/query",
         {"vector": [0.1] * 384, "options": {"topK": 51, "returnMetadata": "all"}})
    call("topK_50_with_metadata", "/vectorize/query",
         {"vector": [0.1] * 384, "options": {"topK": 50, "returnMetadata": "all"}})
    call("deleteByIds", "/vectorize/deleteByIds", {"ids": ["m3"]})
    call("getByIds_after_delete", "/vectorize/getByIds", {"ids": ["m3"]})
    call("describe_after_delete", "/vectorize/describe", {})
    call("unknown_model", "/ai/run", {"model": "@cf/nope/x", "inputs": {"text": ["x"]}})
    call("ai_run", "/ai/run", {"model": MINILM, "inputs": {"text": ["x"], "pooling": "cls"}})
    call("exec", "/d1/exec", {"sql": f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, npc TEXT, mood REAL)\n"
                                     f"INSERT INTO {table} (npc, mood) VALUES ('margaret', 0.5)"})
    call("run", "/d1/run", {"sql": f"INSERT INTO {table} (npc, mood) VALUES (?1, ?2)", "params": ["tom", -1.25]})
    call("all", "/d1/all", {"sql": f"SELECT npc, mood FROM {table} ORDER BY id"})
    call("first", "/d1/first", {"sql": f"SELECT npc, mood FROM {table} WHERE mood < ?", "params": [0]})
    call("first_column", "/d1/first", {"sql": f"SELECT npc FROM {table} ORDER BY id", "column": "npc"})
    call("raw", "/d1/raw", {"sql": f"SELECT npc, mood FROM {table} ORDER BY id"})
    call("batch", "/d1/batch", {"statements": [
        {"sql": f"INSERT INTO {table} (npc, mood) VALUES (?, ?)", "params": ["cora", 1]},
        {"sql": f"SELECT count(*) AS n FROM {table}"}]})
    call("batch_failing", "/d1/batch", {"statements": [
        {"sql": f"INSERT INTO {table} (npc, mood) VALUES ('lost', 0)"}, {"sql": "SELECT * FROM nowhere"}]})
    call("count_after_failed_batch", "/d1/first", {"sql": f"SELECT count(*) AS n FROM {table}", "column": "n"})
    call("bad_sql", "/d1/all", {"sql": "SELECT * FROM nowhere"})
    call("exec_failing", "/d1/exec", {"sql": "SELECT 1\nSELEC 2"})
    call("session", "/d1/session", {"sql": f"UPDATE {table} SET mood = mood + 1 WHERE npc = 'tom'"})
    memory_scenario(call, table.removeprefix("notes_"))
    return seen


def wrangler_run(project: Path, worker_dir: Path, work: Path, base: str, budget: Budget) -> dict[str, Any]:
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work), "XDG_CONFIG_HOME": str(work / "config"),
           "CLOUDFLARE_API_BASE_URL": f"{base}/client/v4", "CLOUDFLARE_API_TOKEN": TOKEN,
           "CLOUDFLARE_ACCOUNT_ID": ACCOUNT, "WRANGLER_SEND_METRICS": "false", "WRANGLER_HIDE_BANNER": "true",
           "WRANGLER_SEND_ERROR_REPORTS": "false", "WRANGLER_LOG_PATH": str(work / "logs"), "CI": "true",
           "NO_COLOR": "1"}
    command = ["node", str(project / "node_modules" / "wrangler" / "bin" / "wrangler.js"), "dev", "--env", "memsim",
               "--ip", "127.0.0.1", "--port", str(port),
               "--persist-to", str(work / "state")]
    with (work / "wrangler.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=worker_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: httpx.get(f"{url}/ready", timeout=2).status_code == 404, budget, "wrangler dev", process)
        return scenario(url, "notes_wrangler", budget)
    finally:
        stop(process)


def miniflare_run(project: Path, worker_dir: Path, work: Path, base: str, budget: Budget) -> dict[str, Any]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work), "CLOUDFLARE_API_BASE_URL": f"{base}/client/v4",
           "CLOUDFLARE_API_TOKEN": TOKEN, "CLOUDFLARE_ACCOUNT_ID": ACCOUNT}
    script = Path(__file__).with_name("miniflare_run.mjs")
    command = ["node", str(script), str(project), str(worker_dir / "src" / "index.js"), "npc-memories-mf", DATABASE]
    with (work / "miniflare.log").open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.PIPE,
                                   start_new_session=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()  # {"url": ...} once Miniflare is ready, or nothing if it failed
        if not line:
            raise RuntimeError(f"miniflare_run.mjs exited {process.wait(budget.left(10))} before it was ready")
        return scenario(json.loads(line)["url"].rstrip("/"), "notes_miniflare", budget)
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group (wrangler starts workerd), then SIGKILL after 10 s."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
            process.wait(wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


PYTHON_SIDE = """
import json, sys
from memory_sim import Env
with Env.local(sys.argv[1]) as env:  # the folder is served: this Env goes through its owner
    rows = env.DB.prepare("SELECT npc, mood FROM notes_wrangler ORDER BY id").all().results
    print(json.dumps({"through": type(env.DB).__name__, "rows": rows}))
"""


def python_reads(data: Path, budget: Budget) -> Any:
    """What the Python side (Env.local on the same folder, another process) reads of the Worker's table."""
    done = subprocess.run([sys.executable, "-c", PYTHON_SIDE, str(data)], capture_output=True, text=True,
                          timeout=budget.left(120))
    return json.loads(done.stdout) if done.returncode == 0 else {"failed": done.stderr[-1500:]}


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("--project", "--worker", "--work", "--out"):
        parser.add_argument(name, type=Path, required=True)
    parser.add_argument("--budget", type=float, default=240)
    args = parser.parse_args()
    budget, work = Budget(args.budget), args.work
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    served = server(work / "data", port, work / "serve.log")
    report: dict[str, Any] = {}
    try:
        wait_for(lambda: httpx.get(f"{base}/health", timeout=2).status_code == 200, budget, "memory-sim serve", served)
        make_index(base, "npc-memories")
        make_index(base, "npc-memories-mf")
        api(base, "POST", "/agent-memory/namespaces", json={"name": AGENT_NAMESPACE})
        for name, run in (("wrangler", wrangler_run), ("miniflare", miniflare_run)):
            (work / name).mkdir()
            try:
                report[name] = run(args.project, args.worker, work / name, base, budget)
            except Exception as exc:  # one runner failing still lets the other report, with its log's tail
                logs = "".join(log.read_text(errors="replace")[-1500:] for log in (work / name).glob("*.log"))
                report[name] = {"failed": f"{type(exc).__name__}: {exc}\n{logs}"}
        report["shared_database"] = python_reads(work / "data", budget)
    finally:
        stop(served)
    args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
