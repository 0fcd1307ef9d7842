"""The folder's owner serves everyone else: while `memory-sim run`, `memory-sim serve` or a program's `Env.local`
owns a data folder, other processes (CLI verbs, `Env.local` elsewhere, the Cloudflare SDK) work through it over
loopback instead of being refused; a killed owner leaves the folder openable with nothing acknowledged lost.
Real subprocesses, real DuckDB and Chroma, the hashing embedder (an index built with `fake/hashing` opens with
it), loopback only, every wait bounded."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memory_sim.env import Env
from memory_sim.errors import DataInUseError
from memory_sim.folder_lock import TOKEN_FILE, database_id_for, read_owner
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.owner import LOCAL_ACCOUNT
from memory_sim.server.loopback import free_port

CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]
THROUGH = "memory-sim: working through the owner of"
START_S = 3601.0  # the world's time when the owner starts: one hour in, so that `run` at x60 crosses no period
TEXTS = [
    ("margaret", "Tom the blacksmith mended my oven door for nothing.", 0.9),
    ("margaret", "The baker sold me stale bread again this morning.", 0.8),
    ("margaret", "Tom and I walked to the mill by the river.", 0.75),
    ("tom", "Margaret brought me an apple pie at the forge.", 0.85),
    ("tom", "The mayor wants new iron gates for the square.", 0.6),
]
HOLDER = """
import sys, time
from memory_sim.env import Env
env = Env.local(sys.argv[1])
print("ready", flush=True)
time.sleep(float(sys.argv[2]))
env.close()
"""


def seed(folder: Path) -> list[str]:
    """A folder whose index records the hashing embedder, with a few memories; its world is START_S old."""
    with Env.local(folder, embed_model="fake/hashing", serve_owner=False) as env:
        system = MemorySystem(env, clock=lambda: START_S)
        memories = [ShortTermMemory(npc, text, importance, WorldTime(0, 9 + i), about=("tom",) if npc == "margaret" else ())
                    for i, (npc, text, importance) in enumerate(TEXTS)]
        system.remember_many(memories)
        store.set_meta(env.DB, "world_seconds", repr(START_S))
    return [m.id for m in memories]


def cli(folder: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "--data", str(folder), *args], capture_output=True, text=True, timeout=timeout)


def wait_for_address(folder: Path, process: subprocess.Popen[Any], timeout_s: float = 90) -> str:
    deadline = time.monotonic() + timeout_s
    while True:
        owner = read_owner(folder)
        if owner is not None and owner.pid == process.pid and owner.address:
            return owner.address
        assert process.poll() is None, f"the owner exited with {process.returncode}"
        assert time.monotonic() < deadline, "the owner did not publish its address"
        time.sleep(0.05)  # waiting for another process to open the folder


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[Any]]]:
    started: list[subprocess.Popen[Any]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


def start_run(folder: Path, processes: list[subprocess.Popen[Any]], seconds: float = 120) -> subprocess.Popen[str]:
    run = subprocess.Popen([*CLI, "--data", str(folder), "run", "--scale", "60", "--for-seconds", str(seconds)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    processes.append(run)
    wait_for_address(folder, run)
    return run


def went_through_owner(done: subprocess.CompletedProcess[str], folder: Path, pid: int) -> None:
    assert done.returncode == 0, (done.args[-4:], done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.startswith(THROUGH)]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"{THROUGH} {folder} (pid {pid}, memory-sim run) at http://127.0.0.1:"), lines[0]


def ids_in_d1(folder: Path) -> set[str]:
    """The memories in D1, read by a fresh process (embedded Chroma caches a folder's state per process, so this
    one, which seeded the folder, must not reopen it after others wrote to it)."""
    done = cli(folder, "d1", "execute", "memory", "--command", "SELECT id FROM short_term_memories", "--json")
    assert done.returncode == 0, done.stderr
    return {row["id"] for row in json.loads(done.stdout)[0]["results"]}


def recalled(done: subprocess.CompletedProcess[str]) -> list[tuple[str, float]]:
    return [(r["id"], round(r["score"], 5)) for r in json.loads(done.stdout)]


@pytest.mark.timeout(300)
def test_verbs_from_other_processes_work_through_run_and_agree_with_a_local_run(
    tmp_path: Path, processes: list[subprocess.Popen[Any]]
) -> None:
    seeded = seed(tmp_path)
    run = start_run(tmp_path, processes)
    token_file = tmp_path / TOKEN_FILE
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    verbs = [
        ("recall", "margaret", "What does Margaret think of Tom?", "--json"),
        ("stats", "--json"),
        ("d1", "execute", "memory", "--command", "SELECT count(*) AS n FROM short_term_memories", "--json"),
        ("check", "--json"),
        ("vectorize", "info", "memories", "--json"),
        *[("remember", "tom", f"Customer number {n} paid for a new horseshoe.", "--importance", "0.9", "--day", "0",
          "--json") for n in range(4)],
    ]
    with ThreadPoolExecutor(len(verbs)) as pool:
        done = list(pool.map(lambda args: cli(tmp_path, *args), verbs))
    for result in done:
        went_through_owner(result, tmp_path, run.pid)
    remembered = [json.loads(d.stdout)["id"] for d in done[-4:]]
    assert all(json.loads(d.stdout)["indexed"] for d in done[-4:])
    assert json.loads(done[1].stdout)["memories"] >= len(seeded)
    assert json.loads(done[2].stdout)[0]["results"][0]["n"] >= len(seeded)
    assert json.loads(done[3].stdout)["before"]["memories"] >= len(seeded)

    question = ("recall", "tom", "Who paid for a horseshoe?", "--json", "--top-k", "8")
    through = cli(tmp_path, *question)
    went_through_owner(through, tmp_path, run.pid)
    counted = cli(tmp_path, "d1", "execute", "memory", "--command", "SELECT id FROM short_term_memories", "--json")
    went_through_owner(counted, tmp_path, run.pid)
    run.send_signal(signal.SIGINT)  # the owner stops; the same questions asked of the folder itself
    assert run.wait(timeout=60) == 0, run.stderr.read() if run.stderr else ""
    assert read_owner(tmp_path) is None and not token_file.exists()
    local = cli(tmp_path, *question)
    assert local.returncode == 0 and THROUGH not in local.stderr, local.stderr
    assert recalled(through) == recalled(local) and len(recalled(local)) >= 4
    in_d1 = ids_in_d1(tmp_path)
    assert {row["id"] for row in json.loads(counted.stdout)[0]["results"]} == in_d1
    assert set(seeded) | set(remembered) <= in_d1  # nothing lost
    checked = cli(tmp_path, "check")
    assert checked.returncode == 0 and "no drift" in checked.stdout, checked.stdout


CLIENT = """
import sys
from memory_sim.env import Env
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
with Env.local(sys.argv[1]) as env:
    print(type(env.DB).__name__, flush=True)
    system = MemorySystem(env, clock=lambda: 3601.0)
    for n in range(int(sys.argv[2])):
        memory = ShortTermMemory("tom", f"Delivery {n} of coal reached the forge.", 0.9, WorldTime(0, 10))
        system.remember(memory)
        print(memory.id, flush=True)  # acknowledged: remember returned
"""


@pytest.mark.timeout(300)
def test_killing_the_owner_mid_way_loses_nothing_acknowledged(tmp_path: Path, processes: list[subprocess.Popen[Any]]) -> None:
    seeded = seed(tmp_path)
    run = start_run(tmp_path, processes)
    client = subprocess.Popen([sys.executable, "-c", CLIENT, str(tmp_path), "100000"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    processes.append(client)
    assert client.stdout is not None
    assert client.stdout.readline().strip() == "CloudflareD1Database"  # the Env went through the owner
    acked = [client.stdout.readline().strip() for _ in range(15)]
    os.kill(run.pid, signal.SIGKILL)  # mid-way: the client is remembering
    run.wait(timeout=30)
    rest, errors = client.communicate(timeout=120)
    acked += [line for line in rest.splitlines() if line]
    assert client.returncode != 0 and errors.strip(), "the client should fail once its owner is gone"
    assert read_owner(tmp_path).pid == run.pid and (tmp_path / TOKEN_FILE).exists()  # type: ignore[union-attr]
    repaired = cli(tmp_path, "check", "--repair")  # the next process opens the folder itself, Chroma included
    assert repaired.returncode == 0 and THROUGH not in repaired.stderr, repaired.stderr + repaired.stdout
    assert read_owner(tmp_path) is None and not (tmp_path / TOKEN_FILE).exists()  # the dead owner's token went
    assert len(acked) >= 15 and set(acked) | set(seeded) <= ids_in_d1(tmp_path)


@pytest.mark.timeout(180)
def test_env_local_in_another_process_works_through_a_program_holding_the_folder(
    tmp_path: Path, processes: list[subprocess.Popen[Any]]
) -> None:
    seed(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), "120"], stdout=subprocess.PIPE, text=True)
    processes.append(holder)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
    owner = read_owner(tmp_path)
    assert owner is not None and owner.pid == holder.pid and owner.address and owner.account_id == LOCAL_ACCOUNT
    assert owner.database_id == database_id_for("memory")
    client = subprocess.run([sys.executable, "-c", CLIENT, str(tmp_path), "3"], capture_output=True, text=True,
                            timeout=120)
    assert client.returncode == 0, client.stderr
    kind, *ids = client.stdout.split()
    assert kind == "CloudflareD1Database" and len(ids) == 3
    listed = cli(tmp_path, "d1", "list")  # a verb without an Env goes through the program too
    assert listed.returncode == 0 and listed.stdout.split() == ["memory"], listed.stderr
    assert f"{THROUGH} {tmp_path} (pid {holder.pid}, python -c)" in listed.stderr
    holder.kill()
    holder.wait(timeout=30)
    assert set(ids) <= ids_in_d1(tmp_path)


def test_a_stale_owner_file_is_cleaned_up_and_the_folder_opens_here(tmp_path: Path) -> None:
    seed(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    port = free_port()
    (tmp_path / "owner.json").write_text(json.dumps({
        "pid": int(dead.stdout), "verb": "memory-sim run", "since": "then",
        "address": f"http://127.0.0.1:{port}/client/v4", "account_id": "local"}))
    (tmp_path / TOKEN_FILE).write_text("a dead owner's token")
    with Env.local(tmp_path) as env:  # opens here, and serves in its turn
        assert type(env.DB).__name__ != "CloudflareD1Database"
        owner = read_owner(tmp_path)
        assert owner is not None and owner.pid == os.getpid() and owner.address != f"http://127.0.0.1:{port}/client/v4"
        token = tmp_path / TOKEN_FILE
        assert stat.S_IMODE(token.stat().st_mode) == 0o600 and token.read_text() != "a dead owner's token"
    assert read_owner(tmp_path) is None and not (tmp_path / TOKEN_FILE).exists()


NO_SERVER = """
import sys, time
sys.modules["fastapi"] = None  # as if the `server` extra were not installed
from memory_sim.env import Env
env = Env.local(sys.argv[1])
print("ready", flush=True)
time.sleep(120)
"""


def test_an_owner_without_the_server_extra_does_not_serve_and_others_are_refused_in_one_line(
    tmp_path: Path, processes: list[subprocess.Popen[Any]]
) -> None:
    seed(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", NO_SERVER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    processes.append(holder)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
    assert read_owner(tmp_path).address is None and not (tmp_path / TOKEN_FILE).exists()  # type: ignore[union-attr]
    with pytest.raises(DataInUseError, match=rf"in use by pid {holder.pid} \(python -c"):
        Env.local(tmp_path)
    refused = cli(tmp_path, "stats")
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr


@pytest.mark.timeout(180)
def test_serve_listens_before_it_publishes_its_address(
    tmp_path: Path, processes: list[subprocess.Popen[Any]]
) -> None:
    """A process that reads owner.json and connects at once is served, not refused: `serve` listens first."""
    import socket
    from urllib.parse import urlparse

    port = free_port()
    server = subprocess.Popen([*CLI, "--data", str(tmp_path), "serve", "--port", str(port), "--token", "secret",
                               "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    processes.append(server)
    deadline = time.monotonic() + 90
    owner = read_owner(tmp_path)
    while owner is None or owner.pid != server.pid or not owner.address:
        assert server.poll() is None and time.monotonic() < deadline, "the server did not publish its address"
        time.sleep(0.001)
        owner = read_owner(tmp_path)
    with socket.create_connection(("127.0.0.1", urlparse(owner.address).port or 0), timeout=30) as connection:
        connection.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert connection.recv(64).startswith(b"HTTP/1.1 200")
    server.terminate()
    assert server.wait(timeout=60) == 128 + signal.SIGTERM


@pytest.mark.timeout(180)
def test_serve_answers_the_sdk_with_the_folders_own_memories_as_the_default_account(
    tmp_path: Path, processes: list[subprocess.Popen[Any]]
) -> None:
    import cloudflare

    from memory_sim.embedding.fake import HashingEmbedder

    seeded = seed(tmp_path)
    port = free_port()
    server = subprocess.Popen([*CLI, "--data", str(tmp_path), "serve", "--port", str(port), "--token", "secret",
                               "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    processes.append(server)
    base_url = wait_for_address(tmp_path, server)
    assert base_url == f"http://127.0.0.1:{port}/client/v4"
    sdk = cloudflare.Cloudflare(api_token="secret", base_url=base_url, max_retries=0, timeout=30)
    try:
        databases = {d.name: d.uuid for d in sdk.d1.database.list(account_id=LOCAL_ACCOUNT)}
        assert databases == {"memory": database_id_for("memory")}
        page = sdk.d1.database.query(databases["memory"], account_id=LOCAL_ACCOUNT,
                                     sql="SELECT id FROM short_term_memories ORDER BY id")
        rows = next(iter(page)).results
        assert [r["id"] for r in rows] == sorted(seeded)
        vector = HashingEmbedder(64).embed(["Tom the blacksmith mended my oven door"], query=True)[0]
        found = sdk.vectorize.indexes.query("memories", account_id=LOCAL_ACCOUNT, vector=[float(x) for x in vector],
                                            top_k=3, return_metadata="all", filter={"npcId": "margaret"})
        assert found is not None and found.matches and found.matches[0].id == seeded[0]
        made = sdk.d1.database.create(account_id="another", name="elsewhere")  # other accounts live beside it
        assert made.uuid != databases["memory"]
        assert [d.name for d in sdk.d1.database.list(account_id="another")] == ["elsewhere"]
        with pytest.raises(cloudflare.BadRequestError, match="in use"):  # the data the server works on stays
            sdk.d1.database.delete(databases["memory"], account_id=LOCAL_ACCOUNT)
    finally:
        sdk.close()
    stats = cli(tmp_path, "stats", "--json")  # the CLI sees the same memories, through the server
    assert stats.returncode == 0 and THROUGH in stats.stderr and f"(pid {server.pid}, memory-sim serve)" in stats.stderr
    assert json.loads(stats.stdout)["memories"] == len(seeded)
    server.terminate()
    assert server.wait(timeout=60) == 128 + signal.SIGTERM  # unwound through the folder lock
    assert read_owner(tmp_path) is None and not (tmp_path / TOKEN_FILE).exists()


BUSY_OWNER = """
import sys, time
from pathlib import Path
from memory_sim.env import Env
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
env = Env.local(sys.argv[1])
system = MemorySystem(env, clock=lambda: 3601.0)
print("ready", flush=True)
n, deadline = 0, time.monotonic() + 120
while not Path(sys.argv[2]).exists() and time.monotonic() < deadline:  # its own writes, while it serves
    memory = ShortTermMemory("margaret", f"Owner note {n} about the harvest fair.", 0.9, WorldTime(0, 11))
    system.remember(memory)
    print(memory.id, flush=True)
    system.recall("margaret", "the harvest fair", top_k=3)
    n += 1
env.close()
"""


@pytest.mark.timeout(300)
def test_the_owners_own_writes_and_its_clients_writes_interleave_without_loss_or_drift_and_check_agrees(
    tmp_path: Path, processes: list[subprocess.Popen[Any]]
) -> None:
    folder, stop = tmp_path / "data", tmp_path / "stop"
    seeded = seed(folder)
    owner = subprocess.Popen([sys.executable, "-c", BUSY_OWNER, str(folder), str(stop)], stdout=subprocess.PIPE,
                             text=True)
    processes.append(owner)
    assert owner.stdout is not None and owner.stdout.readline().strip() == "ready"
    clients = [subprocess.Popen([sys.executable, "-c", CLIENT, str(folder), "60"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(2)]
    processes.extend(clients)
    for _ in range(3):  # while everyone writes: a write in flight is not drift
        checked = cli(folder, "check", "--json")
        assert checked.returncode == 0 and json.loads(checked.stdout)["before"]["clean"], checked.stdout
    acked: set[str] = set()
    for client in clients:
        out, errors = client.communicate(timeout=240)
        assert client.returncode == 0, errors
        kind, *ids = out.split()
        assert kind == "CloudflareD1Database" and len(ids) == 60
        acked |= set(ids)
    stop.touch()
    out, _ = owner.communicate(timeout=60)
    own = set(out.split())
    assert owner.returncode == 0 and len(own) >= 2  # the owner wrote while its clients did
    assert set(seeded) | acked | own <= ids_in_d1(folder)
    checked = cli(folder, "check", "--json")  # every memory marked indexed is in the index, once, as D1 says
    report = json.loads(checked.stdout)["before"]
    assert checked.returncode == 0 and report["clean"], report
    important = [memory_id for memory_id, (_, _, importance) in zip(seeded, TEXTS) if importance > 0.7]
    assert report["vectors"] == report["due"] == len(set(important) | acked | own)


def test_the_owners_own_vectorize_calls_wait_for_the_served_accounts_lock() -> None:
    """The local Vectorize backend is not thread-safe: the server's routes hold the account's lock around every
    call, so the owner's own calls (its scheduler, its program's threads) must take that same lock."""
    import threading

    from memory_sim.builder.server import local_factories
    from memory_sim.owner import guard_env
    from memory_sim.server.env_account import EnvAccount

    env = Env.in_memory()
    raw = env.vectorize_account
    _, d1_factory = local_factories("sqlite")
    account = EnvAccount(env, raw, guard_env(env), d1_factory)  # type: ignore[arg-type]
    with account.lock:  # what every Vectorize route holds while it works
        own = threading.Thread(target=env.VECTORIZE.describe)
        own.start()
        own.join(timeout=0.5)
        assert own.is_alive()  # the owner's call waits for the route ...
        by_account = threading.Thread(target=lambda: env.vectorize_account.index(env.VECTORIZE.name).describe())  # type: ignore[union-attr]
        by_account.start()
        by_account.join(timeout=0.2)
        assert by_account.is_alive()  # ... also through the account's indexes
    own.join(timeout=120)
    by_account.join(timeout=120)
    assert not own.is_alive() and not by_account.is_alive()
    env.close()
