"""A visitor trusts only the real owner: the lock holder, a process of this user, listening on loopback, in a folder
that is this user's own. Whatever else a record or a folder says, no token and no memory leave the visitor, and it
stops with one line saying why. Real subprocesses and sockets on loopback; other users simulated with chown (the
tests run as root; skipped elsewhere where they need it)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_sim.errors import ConfigError
from memory_sim.folder_lock import LOCK_FILE, OWNER_FILE, TOKEN_FILE, FolderLock, read_owner
from memory_sim.owner import UntrustedOwner, find_route, published_address

CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]
TOKEN = "the-owners-secret-token"
STRANGER = 4242  # a uid that is not ours
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another uid needs root")

# Holds the folder's lock and publishes an address and a token, as an owner does (or as another user's process
# does in a folder it made); stops when its stdin closes.
HOLDER = """
import sys
from memory_sim.folder_lock import FolderLock
held = FolderLock.acquire(sys.argv[1])
held.publish(sys.argv[2], sys.argv[3], account_id="local")
print("ready", flush=True)
sys.stdin.read()
"""
LISTENER = """
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
sys.stdin.read()
"""


class Trap:
    """A loopback listener recording every byte sent to it: where a rewritten record points the visitor."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}/client/v4"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.received += conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.sock.close()


@pytest.fixture
def trap() -> Iterator[Trap]:
    listening = Trap()
    yield listening
    listening.close()


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


def start(processes: list[subprocess.Popen[str]], script: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-c", script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    processes.append(process)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def hold(folder: Path, address: str, processes: list[subprocess.Popen[str]]) -> subprocess.Popen[str]:
    holder, said = start(processes, HOLDER, str(folder), address, TOKEN)
    assert said == "ready"
    return holder


def remember(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "--data", str(folder), "remember", "margaret", "My savings are under the third stone.",
                           "--importance", "0.9"], capture_output=True, text=True, timeout=120)


def refused_in_one_line(done: subprocess.CompletedProcess[str], why: str, trap: Trap) -> None:
    assert TOKEN.encode() not in trap.received and b"savings" not in trap.received, trap.received[:300]
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert len(done.stderr.splitlines()) == 1 and why in done.stderr, done.stderr


def rewrite_address(folder: Path, address: str) -> None:
    record = json.loads((folder / OWNER_FILE).read_text())
    (folder / OWNER_FILE).write_text(json.dumps({**record, "address": address}))


@pytest.mark.timeout(180)
def test_a_rewritten_address_gets_no_token_the_listener_there_is_not_the_lock_holder(
    tmp_path: Path, trap: Trap, processes: list[subprocess.Popen[str]]
) -> None:
    hold(tmp_path, f"http://127.0.0.1:{free_port()}/client/v4", processes)
    rewrite_address(tmp_path, trap.address)
    refused_in_one_line(remember(tmp_path), f"the process listening at 127.0.0.1:{trap.port} is not pid", trap)


def test_a_non_loopback_address_is_refused_before_any_connection(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    hold(tmp_path, "http://192.0.2.7:8787/client/v4", processes)  # TEST-NET-1: nothing of ours is there
    with pytest.raises(UntrustedOwner, match=r"its address http://192\.0\.2\.7:8787/client/v4 is not on loopback"):
        find_route(tmp_path)
    for address in ("http://localhost:8787/client/v4", "http://127.0.0.1.example.org:80/", "https://127.0.0.1:1/"):
        rewrite_address(tmp_path, address)
        with pytest.raises(UntrustedOwner, match="loopback"):
            find_route(tmp_path)


def test_a_listener_of_this_user_that_does_not_hold_the_lock_is_not_the_owner(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    hold(tmp_path, f"http://127.0.0.1:{free_port()}/client/v4", processes)
    listener, port = start(processes, LISTENER)
    record = json.loads((tmp_path / OWNER_FILE).read_text())
    (tmp_path / OWNER_FILE).write_text(json.dumps({**record, "pid": listener.pid,
                                                   "address": f"http://127.0.0.1:{port}/client/v4"}))
    with pytest.raises(UntrustedOwner, match=rf"pid {listener.pid}, named in owner.json, does not hold the folder"):
        find_route(tmp_path)


def foreign_folder(folder: Path) -> None:
    for path in (folder, folder / LOCK_FILE, folder / OWNER_FILE, folder / TOKEN_FILE):
        os.chown(path, STRANGER, STRANGER)
    (folder / TOKEN_FILE).chmod(0o644)


def readable_token(folder: Path) -> None:
    (folder / TOKEN_FILE).chmod(0o644)


def writable_folder(folder: Path) -> None:
    folder.chmod(0o777)


def foreign_record(folder: Path) -> None:
    os.chown(folder / OWNER_FILE, STRANGER, STRANGER)


def foreign_token(folder: Path) -> None:
    os.chown(folder / TOKEN_FILE, STRANGER, STRANGER)


@as_root
@pytest.mark.timeout(180)
@pytest.mark.parametrize(("planted", "why"), [
    (foreign_folder, f"belongs to uid {STRANGER}, not to you"),
    (readable_token, "others can read owner.token (mode 0644; 0600 expected)"),
    (writable_folder, "others can write the data folder"),
    (foreign_record, f"owner.json belongs to uid {STRANGER}"),
    (foreign_token, f"owner.token belongs to uid {STRANGER}"),
])
def test_a_folder_record_or_token_that_is_not_this_users_own_gets_no_memory(
    tmp_path: Path, trap: Trap, processes: list[subprocess.Popen[str]], planted: Any, why: str
) -> None:
    """Another local user made the folder in a shared place, holds its lock, and names its own server."""
    folder = tmp_path / "shared" / "data"
    hold(folder, trap.address, processes)
    planted(folder)
    refused_in_one_line(remember(folder), why, trap)


def test_planted_links_under_the_records_temporary_names_are_never_followed(tmp_path: Path) -> None:
    folder, victim = tmp_path / "data", tmp_path / "victim.txt"
    victim.write_text("only the victim may write this")
    folder.mkdir(mode=0o700)
    pid = os.getpid()
    for name in (f".{OWNER_FILE}.{pid}", f".{TOKEN_FILE}.{pid}", OWNER_FILE, TOKEN_FILE):
        (folder / name).symlink_to(victim)
    with FolderLock.acquire(folder) as held:
        held.publish("http://127.0.0.1:9/client/v4", TOKEN)
        assert read_owner(folder).address == "http://127.0.0.1:9/client/v4"  # type: ignore[union-attr]
        assert not (folder / OWNER_FILE).is_symlink() and (folder / TOKEN_FILE).read_text() == TOKEN
    assert victim.read_text() == "only the victim may write this"


def test_a_lock_file_planted_as_a_link_is_refused(tmp_path: Path) -> None:
    folder, victim = tmp_path / "data", tmp_path / "victim.txt"
    victim.write_text("only the victim may write this")
    folder.mkdir(mode=0o700)
    (folder / LOCK_FILE).symlink_to(victim)
    with pytest.raises(ConfigError, match=r"\.lock is a symbolic link"):
        FolderLock.acquire(folder)
    assert victim.read_text() == "only the victim may write this"


def test_a_folder_made_here_is_0700_and_the_files_the_lock_writes_are_0600(tmp_path: Path) -> None:
    folder = tmp_path / "made" / "data"
    with FolderLock.acquire(folder) as held:
        held.publish("http://127.0.0.1:9/client/v4", TOKEN)
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (folder, *folder.iterdir())}
    assert modes == {"data": 0o700, LOCK_FILE: 0o600, OWNER_FILE: 0o600, TOKEN_FILE: 0o600}


@as_root
def test_an_owner_will_not_keep_data_in_another_users_folder(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chown(folder, STRANGER, STRANGER)
    with pytest.raises(ConfigError, match=rf"will not keep data in {folder}: .* belongs to uid {STRANGER}"):
        FolderLock.acquire(folder)
    assert list(folder.iterdir()) == []


def test_serve_publishes_a_loopback_address_where_it_can_be_reached_on_one() -> None:
    assert published_address("0.0.0.0", 8787) == "http://127.0.0.1:8787/client/v4"
    assert published_address("localhost", 8787) == "http://127.0.0.1:8787/client/v4"
    assert published_address("::", 8787) == "http://[::1]:8787/client/v4"
    assert published_address("192.0.2.7", 8787) == "http://192.0.2.7:8787/client/v4"  # visitors refuse it


def free_port() -> int:
    from memory_sim.server.loopback import free_port as port

    return port()


REAL_OWNER = """
import sys
from memory_sim.env import Env
env = Env.local(sys.argv[1])
print("ready", flush=True)
sys.stdin.read()
env.close()
"""


@pytest.mark.timeout(180)
def test_backup_while_another_process_owns_the_folder_says_what_is_true(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    from memory_sim.env import Env

    folder = tmp_path / "data"
    Env.local(folder, embed_model="fake/hashing", serve_owner=False).close()
    owner, said = start(processes, REAL_OWNER, str(folder))
    assert said == "ready" and read_owner(folder).address  # type: ignore[union-attr]  # it serves the folder
    done = subprocess.run([*CLI, "--data", str(folder), "backup", str(tmp_path / "bk")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert f"{folder} is in use by pid {owner.pid} (python -c); a backup copies the folder" in done.stderr
    assert "Cloudflare" not in done.stderr and not (tmp_path / "bk").exists()


def test_nothing_an_env_makes_in_a_users_own_folder_is_open_to_others(tmp_path: Path) -> None:
    """A folder the user made (0755 here) keeps its mode; what the project makes in it is theirs only."""
    from memory_sim.backup import backup
    from memory_sim.embedding.cache import EmbeddingCache
    from memory_sim.env import Env
    from memory_sim.memory.system import MemorySystem

    folder = tmp_path / "data"
    folder.mkdir(mode=0o755)
    with Env.local(folder, embed_model="fake/hashing", serve_owner=False) as env:
        MemorySystem(env, clock=lambda: 0.0)
        EmbeddingCache(folder / "embeddings.sqlite").close()  # the cache MiniLM's embeddings go to
        backup(env, tmp_path / "bk")
        made = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir() if not p.name.startswith(".lock")}
    open_to_others = {name: f"{mode:04o}" for name, mode in made.items() if mode & 0o077}
    assert {"d1", "vectorize", "embeddings.sqlite", OWNER_FILE} <= set(made) and open_to_others == {}
    assert stat.S_IMODE((tmp_path / "bk").stat().st_mode) == 0o700


@pytest.mark.timeout(180)
def test_a_visitor_still_open_sends_nothing_once_its_owner_is_gone(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    """The owner dies (its port is free for anyone to take): a visitor opened before stops at its next request, D1
    or AI, before anything is sent, instead of sending to whatever listens there then."""
    import signal

    from memory_sim.env import Env
    from memory_sim.errors import DataInUseError

    folder = tmp_path / "data"
    Env.local(folder, embed_model="fake/hashing", serve_owner=False).close()
    owner, said = start(processes, REAL_OWNER, str(folder))
    assert said == "ready"
    with Env.local(folder) as visitor:
        assert visitor.DB.prepare("SELECT 1 AS one").first("one") == 1  # through the owner
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=30)
        gone = rf"the owner of {folder} \(pid {owner.pid}\) stopped serving it; nothing was sent"
        with pytest.raises(DataInUseError, match=gone):
            visitor.DB.prepare("SELECT 'my savings' AS secret").all()
        with pytest.raises(DataInUseError, match=gone):
            visitor.AI.run("@cf/baai/bge-small-en-v1.5", {"text": ["my savings are under the third stone"]})


@pytest.mark.timeout(180)
def test_a_visitor_still_open_follows_no_rewritten_address(
    tmp_path: Path, trap: Trap, processes: list[subprocess.Popen[str]]
) -> None:
    from memory_sim.env import Env
    from memory_sim.errors import DataInUseError

    folder = tmp_path / "data"
    Env.local(folder, embed_model="fake/hashing", serve_owner=False).close()
    owner, said = start(processes, REAL_OWNER, str(folder))
    assert said == "ready"
    with Env.local(folder) as visitor:
        assert visitor.DB.prepare("SELECT 1 AS one").first("one") == 1
        rewrite_address(folder, trap.address)
        with pytest.raises(DataInUseError, match="stopped serving it; nothing was sent"):
            visitor.DB.prepare("SELECT 'my savings' AS secret").all()
    assert trap.received == b""
