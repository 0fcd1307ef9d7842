"""One process owns a data folder: a second opener (another `serve`, an Env, a CLI verb, the demo) is refused in
one line naming the owner, the demo never deletes what it did not make or what another process holds, and the
lock dies with its owner (SIGKILL included). Real subprocesses, real DuckDB/sqlite3 and Chroma, loopback only."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.env import Env
from memory_sim.errors import DataInUseError
from memory_sim.folder_lock import read_owner
from memory_sim.server.loopback import free_port, wait_until_serving

CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]
HOLDER = """
import sys, time
from memory_sim.env import Env
from memory_sim.embedding.fake import HashingEmbedder
env = Env.local(sys.argv[1], embedder=HashingEmbedder(16), d1_engine=sys.argv[2], serve_owner=False)
env.DB.exec("CREATE TABLE IF NOT EXISTS notes(text TEXT)")
env.DB.exec("INSERT INTO notes VALUES ('kept')")
print("ready", flush=True)
time.sleep(120)
"""


def one_line_refusal(stderr: str, folder: Path, pid: int, verb: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert re.fullmatch(rf"error: {re.escape(str(folder))} is in use by pid {pid} \({re.escape(verb)}, since [^)]+\); "
                        r"stop it first, or .+", lines[0]), lines[0]
    return lines[0]


def start_holder(folder: Path, engine: str = "duckdb") -> subprocess.Popen[str]:
    """A Python process holding an Env over `folder` (the hashing embedder: no model load), not serving it
    (tests/reliability/test_owner.py has owners that serve)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), engine], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "ready", "the holder did not open"
    return holder


@pytest.fixture
def holders() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=120)


def files_of(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_a_second_env_in_another_process_is_refused_naming_the_holder(
    tmp_path: Path, engine: str, holders: list[subprocess.Popen[str]]
) -> None:
    holders.append(holder := start_holder(tmp_path, engine))
    with pytest.raises(DataInUseError) as refused:
        Env.local(tmp_path, embedder=HashingEmbedder(16), d1_engine=engine)
    one_line_refusal(f"error: {refused.value}", tmp_path, holder.pid, "python -c")
    assert read_owner(tmp_path).pid == holder.pid  # type: ignore[union-attr]


def test_two_serve_on_one_folder_the_second_exits_2_naming_the_first(tmp_path: Path) -> None:
    first_port, second_port = free_port(), free_port()
    env = {**os.environ, "MEMORY_SIM_API_TOKEN": "secret"}

    def serve(port: int) -> list[str]:
        return [*CLI, "--data", str(tmp_path), "serve", "--port", str(port), "--d1-engine", "sqlite",
                "--log-level", "warning"]

    first = subprocess.Popen(serve(first_port), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_serving(first_port, first)
        second = subprocess.run(serve(second_port), env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        line = one_line_refusal(second.stderr, tmp_path, first.pid, "memory-sim serve")
        assert f"http://127.0.0.1:{first_port}/client/v4" in line  # how to reach the data through the owner
        url = f"http://127.0.0.1:{first_port}/client/v4/accounts/a/d1/database"
        assert httpx.get(url, headers={"Authorization": "Bearer secret"}).status_code == 200  # the owner serves on
    finally:
        first.terminate()
        first.wait(timeout=120)
    assert read_owner(tmp_path) is None  # a clean stop removes the owner record


def test_demo_refuses_a_folder_another_process_holds_and_deletes_nothing(
    tmp_path: Path, holders: list[subprocess.Popen[str]]
) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / ".memory-sim-demo").write_text("made by memory-sim demo\n")  # an earlier demo's folder ...
    holders.append(holder := start_holder(folder))  # ... that a running process is using
    before = files_of(folder)
    done = subprocess.run([*CLI, "--data", str(folder), "demo", "--days", "1", "--npcs", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    one_line_refusal(done.stderr, folder, holder.pid, "python -c")
    holder.kill()
    holder.wait(timeout=120)
    assert files_of(folder).keys() == before.keys()
    with Env.local(folder, embedder=HashingEmbedder(16)) as env:  # the holder's data is still there
        assert env.DB.prepare("SELECT text FROM notes").all().results == [{"text": "kept"}]


def test_demo_never_deletes_data_it_did_not_make(tmp_path: Path) -> None:
    from memory_sim.cli import main

    mine = tmp_path / "mine"
    (mine / "d1").mkdir(parents=True)
    (mine / "d1" / "memory.duckdb").write_bytes(b"someone's database")
    earlier_demo = tmp_path / "earlier-demo"
    earlier_demo.mkdir()
    (earlier_demo / ".memory-sim-demo").write_text("made by memory-sim demo\n")
    (earlier_demo / "d1").mkdir()
    (earlier_demo / "notes.txt").write_text("the user's own notes, added later")
    for folder in (mine, earlier_demo):
        before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
        assert main(["--data", str(folder), "demo", "--days", "1", "--npcs", "2"]) == 2
        assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_a_sigkilled_holder_leaves_the_folder_openable(tmp_path: Path) -> None:
    holder = start_holder(tmp_path)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=120)
    assert read_owner(tmp_path).pid == holder.pid  # type: ignore[union-attr]  # its record outlives it ...
    with Env.local(tmp_path, embedder=HashingEmbedder(16)) as env:  # ... and blocks nobody: the OS dropped the lock
        assert read_owner(tmp_path).pid == os.getpid()  # type: ignore[union-attr]
        assert env.DB.prepare("SELECT text FROM notes").all().results == [{"text": "kept"}]


def test_close_releases_the_lock_and_cli_verbs_wait_their_turn(tmp_path: Path) -> None:
    env = Env.local(tmp_path, embedder=HashingEmbedder(16), serve_owner=False)
    try:
        with pytest.raises(DataInUseError, match="already open in this process"):
            Env.local(tmp_path, embedder=HashingEmbedder(16))  # two Envs in one process would hide each other's writes
        refused = subprocess.run([*CLI, "--data", str(tmp_path), "d1", "list"], capture_output=True, text=True,
                                 timeout=60)
        assert refused.returncode == 2
        assert f"is in use by pid {os.getpid()} (" in refused.stderr and len(refused.stderr.splitlines()) == 1
    finally:
        env.close()
    assert read_owner(tmp_path) is None
    listed = subprocess.run([*CLI, "--data", str(tmp_path), "d1", "list"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and listed.stdout.split() == ["memory"], listed.stderr
    Env.local(tmp_path, embedder=HashingEmbedder(16)).close()  # close, then open again in the same process: fine


def test_a_stale_owner_record_is_never_reported_as_the_owner(
    tmp_path: Path, holders: list[subprocess.Popen[str]]
) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / "owner.json").write_text(f'{{"pid": {dead.stdout.strip()}, "verb": "memory-sim run", "since": "then"}}')
    locker = ("import sys, time, filelock; held = filelock.FileLock(sys.argv[1], timeout=0); held.acquire(); "
              "print('ready', flush=True); time.sleep(120)")  # holds the OS lock and writes no record
    holders.append(holder := subprocess.Popen([sys.executable, "-c", locker, str(tmp_path / ".lock")],
                                              stdout=subprocess.PIPE, text=True))
    assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
    with pytest.raises(DataInUseError, match=r"in use by another process \(it left no owner record\)"):
        Env.local(tmp_path, embedder=HashingEmbedder(16))


def _held_briefly_then_let_go(folder: Path, record_gone_for_s: float) -> tuple[threading.Thread, threading.Event]:
    """The inspector's way of holding a folder, with the moment between removing its record and unlocking (which
    release() makes microseconds long) stretched to `record_gone_for_s`, once an opener has been refused."""
    from memory_sim.builder import BRIEF_HOLDER
    from memory_sim.folder_lock import OWNER_FILE, FolderLock

    held = FolderLock.acquire(folder, verb=BRIEF_HOLDER)
    refused_once = threading.Event()

    def let_go() -> None:
        refused_once.wait(timeout=60)
        (folder / OWNER_FILE).unlink()
        time.sleep(record_gone_for_s)
        held.release()

    return threading.Thread(target=let_go), refused_once


def test_an_opener_that_waited_on_a_brief_holder_still_waits_while_it_lets_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory_sim.folder_lock as folder_lock

    folder = tmp_path / "data"
    letting_go, refused_once = _held_briefly_then_let_go(folder, record_gone_for_s=1.0)  # past the 0.5 s re-read
    acquire = folder_lock.FolderLock.acquire.__func__  # type: ignore[attr-defined]

    def acquire_and_note(cls: type, data_dir: str | Path, verb: str | None = None) -> object:
        try:
            return acquire(cls, data_dir, verb)
        except DataInUseError:
            refused_once.set()
            raise

    monkeypatch.setattr(folder_lock.FolderLock, "acquire", classmethod(acquire_and_note))
    letting_go.start()
    with Env.local(folder, embedder=HashingEmbedder(16), serve_owner=False) as env:
        assert read_owner(folder) is not None and read_owner(folder).pid == os.getpid()  # type: ignore[union-attr]
        env.DB.exec("CREATE TABLE opened(x INTEGER)")
    letting_go.join(timeout=60)


def test_the_refusal_carries_the_holder_it_names(tmp_path: Path) -> None:
    from memory_sim.folder_lock import FolderLock, holder_of

    with FolderLock.acquire(tmp_path, verb="memory-sim inspect"), \
            pytest.raises(DataInUseError, match="memory-sim inspect") as refused:
        FolderLock.acquire(tmp_path)
    holder = holder_of(refused.value)
    assert holder is not None and holder.verb == "memory-sim inspect" and holder.pid == os.getpid()
