"""The folder's owner serves everyone else: one process holds a data folder (memory_sim/folder_lock.py), and the
others work through it over loopback HTTP instead of being refused.

The owner side (`OwnerService`): a long-running owner (`memory-sim run`, `memory-sim serve`, a program holding
`Env.local(...)` unless MEMORY_SIM_SERVE_OWNER=0) binds a loopback port (ephemeral unless `owner_port` says
otherwise), writes a random token into `<data>/owner.token` (0600) and publishes its address in `owner.json`.
The server itself (FastAPI + uvicorn, the `server` extra) is imported and started only when the first client
connects; until then a connection waits in the socket's backlog. The folder's own Env is served as the account
`local` (LOCAL_ACCOUNT): same objects, no second opening (memory_sim/server/env_account.py).

The other side (`find_route`, `open_through`): an opener refused by the lock finds a live owner that serves,
and gets the Cloudflare-API Env pointed at it, with the embedder the index records; CLI verbs say so in one line
on stderr. Short-lived CLI verbs never serve (`cli_process`). The token goes only to an owner that can be trusted
(memory_sim/trust.py): the folder, the record and the token are this user's and others cannot write them (nor read
the token), the address is a loopback IP, and the process listening there is the one the record names, a process
of this user that holds the folder's lock. Otherwise the opener stops with one line saying why (`UntrustedOwner`).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import secrets
import select
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_sim.errors import DataInUseError
from memory_sim.folder_lock import (
    LOCK_FILE,
    OWNER_FILE,
    TOKEN_FILE,
    FolderLock,
    Owner,
    database_id_for,
    owner_from_json,
)

if TYPE_CHECKING:
    from memory_sim.bindings.ai import Embedder
    from memory_sim.bindings.vectorize import VectorizeAccount
    from memory_sim.env import Env
    from memory_sim.settings import Settings

log = logging.getLogger(__name__)

LOCAL_ACCOUNT = "local"  # the account id under which an owner serves its folder's own data
SERVING_VERBS = frozenset({"run"})  # CLI verbs that live long enough to serve (`serve` serves by itself)

_serve: ContextVar[bool | None] = ContextVar("memory_sim_serve_owner", default=None)
_announce: ContextVar[Callable[[str], None] | None] = ContextVar("memory_sim_announce_owner", default=None)


# --- who serves, who says so ------------------------------------------------------------------------------------


@contextmanager
def serving(enabled: bool) -> Iterator[None]:
    """Local Envs opened meanwhile (in this thread) serve their folder, or not, whatever the settings say."""
    token = _serve.set(enabled)
    try:
        yield
    finally:
        _serve.reset(token)


@contextmanager
def announcing(say: Callable[[str], None]) -> Iterator[None]:
    """Envs opened meanwhile through another process's owner tell `say` in one line (the CLI: stderr)."""
    token = _announce.set(say)
    try:
        yield
    finally:
        _announce.reset(token)


@contextmanager
def cli_process(verb: str | None) -> Iterator[None]:
    """A CLI verb: serves its folder only when it is a long-running one; says on stderr when it goes through
    another process's owner."""
    import sys

    with serving(verb in SERVING_VERBS), announcing(lambda line: print(line, file=sys.stderr, flush=True)):
        yield


def should_serve(settings: Settings) -> bool:
    wanted = _serve.get()
    if not (settings.serve_owner if wanted is None else wanted):
        return False
    if not (_installed("fastapi") and _installed("uvicorn")):
        log.debug("not serving %s to other processes: the 'server' extra is not installed", settings.data_dir)
        return False
    return True


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: blocked in sys.modules
        return False


# --- the owner's side -------------------------------------------------------------------------------------------


class OwnerService:
    """The owner's loopback API over its Env: published at once, started on the first connection."""

    def __init__(self, held: FolderLock, settings: Settings, sock: socket.socket) -> None:
        self.held, self.settings, self._sock = held, settings, sock
        self.token = new_token()
        self.address = f"http://127.0.0.1:{sock.getsockname()[1]}/client/v4"
        self._env: Env | None = None
        self._ready = threading.Event()  # attached, or closing
        self._closing = False
        self._wake_r, self._wake_w = socket.socketpair()
        self._server: Any = None
        self._watcher = threading.Thread(target=self._watch, name=f"memory-sim-owner-{sock.getsockname()[1]}",
                                         daemon=True)

    @classmethod
    def open(cls, held: FolderLock, settings: Settings) -> OwnerService | None:
        """Binds 127.0.0.1 (`owner_port`, else any free port) and publishes; None when the port cannot be had
        (the folder then opens as before, unserved)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind(("127.0.0.1", settings.owner_port or 0))
            sock.listen(64)
        except OSError as exc:
            sock.close()
            log.warning("not serving %s to other processes: cannot listen on 127.0.0.1:%s: %s",
                        settings.data_dir, settings.owner_port or 0, exc.strerror or exc)
            return None
        service = cls(held, settings, sock)
        held.publish(service.address, service.token, **served_fields(settings))
        service._watcher.start()
        return service

    def attach(self, env: Env) -> None:
        """The Env is built: its Vectorize bindings take the served account's lock from now on, and the first
        client to connect starts the server."""
        if env.vectorize_account is None:
            raise ValueError("a served Env needs its Vectorize account")
        self._raw_account: VectorizeAccount = env.vectorize_account
        self._lock = guard_env(env)
        self._env = env
        self._ready.set()

    def close(self) -> None:
        """Withdraws the token and the address, then stops serving (requests in flight finish first): no new
        visitor checks a listener that is about to close (its port could be taken by another process then)."""
        self.held.withdraw()
        self._closing = True
        self._ready.set()
        self._wake_w.send(b"x")
        self._watcher.join(timeout=60)
        if self._server is not None:
            self._server.stop()
        self._sock.close()
        self._wake_r.close()
        self._wake_w.close()

    def _watch(self) -> None:
        self._ready.wait()
        if self._closing:
            return
        readable, _, _ = select.select([self._sock, self._wake_r], [], [])
        if self._closing or self._sock not in readable:
            return
        try:
            self._server = self._start()
        except Exception:  # a server that cannot start must not take the owner down
            log.exception("the owner of %s could not start serving it", self.settings.data_dir)
            self.held.withdraw()  # others are refused in one line again, not left waiting on a silent port
            self._sock.close()

    def _start(self) -> Any:
        from memory_sim.builder.server import build_server_app
        from memory_sim.server.env_account import EnvAccount
        from memory_sim.server.loopback import LoopbackServer

        assert self._env is not None
        app = build_server_app(Path(self.settings.data_dir), [f"{self.token}:{LOCAL_ACCOUNT}"],
                               d1_engine=self.settings.d1_engine, ai=self._env.AI,
                               models=configured_models(self._env))
        accounts = app.state.accounts
        accounts.install(LOCAL_ACCOUNT, EnvAccount(self._env, self._raw_account, self._lock, accounts.d1_factory))
        log.debug("serving %s at %s", self.settings.data_dir, self.address)
        # LoopbackServer shortens the interpreter's switch interval while it serves: measured on an idle owner, a
        # recall through it took 6-8 ms (p50) instead of 19-21 ms with the default 5 ms (docs/reliability.md).
        return LoopbackServer(app, sock=self._sock).start()


class Guarded:
    """`target` with every method call made under `lock`; other attributes pass through. The local Vectorize
    backend is not thread-safe (its mutation queue), and an owner's own threads share it with the server's."""

    def __init__(self, target: Any, lock: threading.RLock) -> None:
        self._target, self._lock = target, lock

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return value
        lock = self._lock

        def locked(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return value(*args, **kwargs)

        return locked


class GuardedAccount(Guarded):
    """A Vectorize account whose indexes come back guarded by the same lock."""

    def index(self, name: str) -> Guarded:
        with self._lock:
            return Guarded(self._target.index(name), self._lock)


def guard_env(env: Env) -> threading.RLock:
    """From now on every call into the Env's Vectorize bindings holds the returned lock, as the served account's
    routes do (memory_sim/server/env_account.py). D1 locks itself; the embedder's cache too."""
    lock = threading.RLock()
    env.VECTORIZE = Guarded(env.VECTORIZE, lock)
    if env.vectorize_account is not None:
        env.vectorize_account = GuardedAccount(env.vectorize_account, lock)
    return lock


def serve_env(app: Any, env: Env) -> None:
    """Serves `env` (a local Env, owning its folder) as the account `local` of `app` (server.app.create_app); its
    other D1 databases open as the app opens any account's."""
    from memory_sim.server.env_account import EnvAccount

    account = env.vectorize_account
    lock = guard_env(env)
    accounts = app.state.accounts
    accounts.install(LOCAL_ACCOUNT, EnvAccount(env, account, lock, accounts.d1_factory))  # type: ignore[arg-type]


def configured_models(env: Env) -> list[str]:
    """The models the operator chose for the folder (its index's model, the settings' `--model`): the only names
    outside the catalogue that the served `/ai` routes accept (server/ai_names.py)."""
    return [str(m) for m in (getattr(env.embedder, "model", None), env.settings.embed_model) if m]


def served_fields(settings: Settings) -> dict[str, str]:
    """What owner.json says about the folder's own data at the owner's address."""
    return {"account_id": LOCAL_ACCOUNT, "database_id": database_id_for(settings.database_name),
            "database_name": settings.database_name, "index_name": settings.index_name}


def published_address(host: str, port: int) -> str:
    """The address `memory-sim serve --host HOST` publishes in owner.json: a loopback IP where the server can be
    reached on one (visitors trust nothing else), else HOST as given (visitors then refuse it, saying why)."""
    import ipaddress

    loopback = {"localhost": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "[::1]", "::1": "[::1]"}.get(host, host)
    try:
        ip = ipaddress.ip_address(loopback.strip("[]"))
    except ValueError:
        return f"http://{host}:{port}/client/v4"
    return f"http://{loopback if ip.version == 4 else f'[{ip}]'}:{port}/client/v4"


def new_token() -> str:
    return secrets.token_urlsafe(32)


# --- everyone else's side ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    """How to reach a folder through its owner: the owner's record and its token."""

    data_dir: Path
    owner: Owner
    token: str

    @property
    def address(self) -> str:
        return self.owner.address or ""

    @property
    def account_id(self) -> str:
        return self.owner.account_id or LOCAL_ACCOUNT

    def check(self) -> None:
        """Before each request: the owner checked when the route was found is still there and serving, so a port
        it left (a crash, a close) gets nothing, whoever listens there next. The folder is this user's alone, so
        its record can be read as it is."""
        from memory_sim.folder_lock import read_owner

        now = read_owner(self.data_dir)
        if now is None or (now.pid, now.address) != (self.owner.pid, self.owner.address) or not now.alive():
            raise DataInUseError(f"the owner of {self.data_dir} (pid {self.owner.pid}) stopped serving it; nothing "
                                 "was sent: open the folder again")

    def notice(self) -> str:
        return (f"memory-sim: working through the owner of {self.data_dir} "
                f"(pid {self.owner.pid}, {self.owner.verb}) at {self.address}")


class UntrustedOwner(DataInUseError):
    """The folder is in use, and what claims to serve it cannot be trusted with this user's token and data."""


def find_route(data_dir: str | Path) -> Route | None:
    """The live owner of `data_dir` that serves it, or None (the folder is in use, and nothing serves it: the
    caller's refusal stands). Needs the `cloudflare` extra (the client side of the API). UntrustedOwner when an
    owner claims to serve it but cannot be trusted (see the module's note): no token is sent."""
    from memory_sim import trust

    try:
        folder = trust.open_folder(data_dir)
    except OSError:
        return None
    try:
        trust.check_folder(folder, data_dir)
        owner = owner_from_json(trust.read_private(folder, OWNER_FILE) or "")
        if owner is None or not owner.address or owner.pid == os.getpid() or not owner.alive():
            return None
        token = (trust.read_private(folder, TOKEN_FILE, secret=True) or "").strip()
        if not token or not _installed("cloudflare"):
            return None
        _check_listener(owner, _lock_inode(folder))
    except trust.Untrusted as why:
        raise UntrustedOwner(f"will not work through the owner of {data_dir}: {why}; nothing was sent to it") from None
    finally:
        os.close(folder)
    return Route(Path(data_dir), owner, token)


def _lock_inode(folder: int) -> int:
    from memory_sim import trust

    try:
        return os.stat(LOCK_FILE, dir_fd=folder, follow_symlinks=False).st_ino
    except OSError:
        raise trust.Untrusted(f"the folder has no {LOCK_FILE}") from None


def _check_listener(owner: Owner, lock_inode: int) -> None:
    """Untrusted unless the record's address is on loopback and the process listening there is the record's pid:
    a process of this user holding the folder's lock."""
    from memory_sim import trust

    host, port = trust.loopback_endpoint(owner.address or "")
    problem = trust.process_problem(owner.pid)
    if problem is not None:
        raise trust.Untrusted(problem)
    if trust.holds_lock(owner.pid, lock_inode) is False:
        raise trust.Untrusted(f"pid {owner.pid}, named in {OWNER_FILE}, does not hold the folder's lock")
    if not trust.listener_is(owner.pid, host, port):
        raise trust.Untrusted(f"the process listening at {host}:{port} is not pid {owner.pid}, the folder's owner")


def announce(route: Route) -> None:
    say = _announce.get()
    if say is not None:
        say(route.notice())
    else:
        log.info(route.notice())


def settings_through(route: Route, settings: Settings) -> Settings:
    """`settings` moved onto the owner's API: the Cloudflare backend at its address, as its account `local`, with
    the database it has open when the settings name that one."""
    same_database = settings.database_name == route.owner.database_name
    return settings.replace(backend="cloudflare", account_id=route.account_id, api_token=route.token,
                            base_url=route.address, database_id=route.owner.database_id if same_database else None)


def open_through(route: Route, settings: Settings, embedder: Embedder | None = None) -> Env:
    """The Cloudflare-API Env over the owner's account: the same Vectorize index and D1 database the owner has
    open, embeddings by the owner's model through its `/ai/run` (no model loads here)."""
    from memory_sim.builder import build_cloudflare_env

    env = build_cloudflare_env(settings_through(route, settings), embedder=embedder, shared_cache=False,
                               before_request=route.check, through_owner=True)
    announce(route)
    return env
