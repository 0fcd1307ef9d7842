"""Embedded Chroma in a process of its own, so its calls never stall this process's other threads.

chromadb's Rust bindings hold the GIL for the whole of each call (`Bindings.add`/`upsert` run `block_on` without
releasing it), and overwriting an existing vector costs Chroma 4-25 ms (HNSW's point update): one REST upsert
overwriting 5,000 ids froze every thread of the server, its event loop included, for 20-85 s, and cutting it
into small calls still left others seconds behind (each call holds the GIL; the waiting thread gets it back
only between calls). Here a child process owns the folder's only `PersistentClient` (Chroma allows one process
per folder), and this process talks to it over a pipe: while a call runs there, the caller here waits on the
pipe with the GIL released, and every other thread (other accounts' queries, `/health`) runs.

`ProcessClient` and `ProcessCollection` offer the part of chromadb's client and collection API that
`ChromaAccount` uses, with the same arguments, results and exceptions (Chroma's own, pickled back). A child that
dies answers `ChromaProcessGone` (an ordinary exception, mapped like any of Chroma's failures); the child exits
when this process closes the client or goes away (its end of the pipe reads EOF), after the call in hand: so a
child holds an exclusive lock on `LOCK_FILE` in the folder while it lives, and the next child there (a server
restarted after kill -9) waits for it instead of opening Chroma in a second process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
from typing import Any

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 60.0
LOCK_FILE = "chroma-process.lock"
LOCK_WAIT_S = 60.0  # a previous child finishing its last call


class ChromaProcessGone(RuntimeError):
    """The process holding Chroma is gone (killed, or crashed inside Chroma)."""


class _Channel:
    """Pickled messages, each after its 8-byte length, over two pipe ends (one to read, one to write)."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._in = os.fdopen(read_fd, "rb")
        self._out = os.fdopen(write_fd, "wb")

    def send(self, message: Any) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)  # before writing: a failure sends nothing
        self._out.write(struct.pack("!Q", len(data)) + data)
        self._out.flush()

    def recv(self) -> Any:
        header = self._in.read(8)
        if len(header) < 8:
            raise EOFError("the other end closed the pipe")
        size = struct.unpack("!Q", header)[0]
        data = self._in.read(size)
        if len(data) < size:
            raise EOFError("the other end closed the pipe mid-message")
        return pickle.loads(data)  # noqa: S301 - our own child's messages, over our own pipe

    def poll(self, timeout_s: float) -> bool:
        return bool(select.select([self._in], [], [], timeout_s)[0])

    def close(self) -> None:
        for end in (self._in, self._out):
            with contextlib.suppress(OSError):
                end.close()


def _describe(collection: Any) -> dict[str, Any]:
    return {"name": collection.name}


def _serve(conn: _Channel, path: str) -> None:
    """The child: one PersistentClient on `path`; each request (target, method, args, kwargs) answered in order."""
    import chromadb
    from chromadb.config import Settings

    held = _lock_folder(path)  # kept open (and locked) until this process ends
    if held is None:
        _reply(conn, "error", ChromaProcessGone(f"another process still holds Chroma in {path} ({LOCK_WAIT_S:g} s)"))
        return
    settings = Settings(anonymized_telemetry=False)
    try:
        client = chromadb.PersistentClient(path=path, settings=settings)
    except Exception as exc:  # noqa: BLE001 - sent to the parent, which raises it
        _reply(conn, "error", exc)
        return
    _reply(conn, "ok", None)
    collections: dict[str, Any] = {}
    while True:
        try:
            target, method, args, kwargs = conn.recv()
        except (EOFError, OSError):
            break  # the parent closed the pipe or is gone
        if method == "__stop__":
            break
        try:
            result = _call(client, collections, target, method, args, kwargs)
        except Exception as exc:  # noqa: BLE001 - sent to the parent, which raises it
            _reply(conn, "error", exc)
        else:
            _reply(conn, "ok", result)
    close = getattr(client, "close", None)
    if close is not None:
        close()
    _reply(conn, "ok", None)


def _lock_folder(path: str) -> Any:
    """An exclusive lock on the folder's LOCK_FILE, waited for up to LOCK_WAIT_S; None if still held then."""
    import fcntl
    import time

    handle = open(os.path.join(path, LOCK_FILE), "a")  # noqa: SIM115 - held for the process's life
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except BlockingIOError:
            if time.monotonic() > deadline:
                handle.close()
                return None
            time.sleep(0.1)  # another process's lock: no event to wait on


def _call(client: Any, collections: dict[str, Any], target: str | None, method: str, args: Any, kwargs: Any) -> Any:
    if target is None:  # the client's own methods; collections come back as their names
        result = getattr(client, method)(*args, **kwargs)
        if method in ("create_collection", "get_collection"):
            collections[result.name] = result
            return _describe(result)
        if method == "list_collections":
            return [_describe(c) for c in result]
        if method == "delete_collection":
            collections.pop(args[0], None)
        return result
    collection = collections.get(target)
    if collection is None:
        collection = collections[target] = client.get_collection(target, embedding_function=None)
    if method in ("metadata", "configuration"):  # attributes, read afresh
        fresh = collections[target] = client.get_collection(target, embedding_function=None)
        return getattr(fresh, method)
    return getattr(collection, method)(*args, **kwargs)


def _reply(conn: Any, status: str, value: Any) -> None:
    try:
        conn.send((status, value))
    except (pickle.PicklingError, TypeError, AttributeError):  # an exception that does not pickle: its words do
        conn.send(("error", RuntimeError(f"{type(value).__name__}: {value}")))
    except (BrokenPipeError, OSError):
        pass  # the parent is gone: nobody to answer


class ProcessClient:
    """A chromadb `PersistentClient` on `path`, run in a child process (see the module's docstring)."""

    def __init__(self, path: str, *, start_timeout_s: float = START_TIMEOUT_S) -> None:
        # A fresh interpreter running this module (forking a process with threads is unsafe, and multiprocessing's
        # spawn would run the caller's main script again); two pipes of its own, its stdout left to Chroma's prints.
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, path, str(to_child_r), str(from_child_w)],
            pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._conn = _Channel(from_child_r, to_child_w)
        self._lock = threading.Lock()
        self._closed = False
        if not self._conn.poll(start_timeout_s):
            self._kill()
            raise ChromaProcessGone(f"Chroma's process did not start within {start_timeout_s:g} s")
        try:
            self._answer()
        except BaseException:
            self._kill()
            raise

    def _answer(self) -> Any:
        try:
            status, value = self._conn.recv()
        except (EOFError, OSError) as exc:
            raise ChromaProcessGone(f"Chroma's process is gone (exit code {self._process.poll()})") from exc
        if status == "error":
            raise value
        return value

    def call(self, target: str | None, method: str, *args: Any, **kwargs: Any) -> Any:
        """One call in the child; waits (GIL released) for its answer. One call at a time per client."""
        with self._lock:
            if self._closed:
                raise ChromaProcessGone("Chroma's process was closed")
            try:
                self._conn.send((target, method, args, kwargs))
            except (BrokenPipeError, OSError) as exc:
                raise ChromaProcessGone(f"Chroma's process is gone (exit code {self._process.poll()})") from exc
            return self._answer()

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._process.pid

    @property
    def alive(self) -> bool:
        """Whether the child is still there to answer (not closed, not exited)."""
        return not self._closed and self._process.poll() is None

    @property
    def busy(self) -> bool:
        """Whether a call is in flight now (for tests and logs)."""
        return self._lock.locked()

    # --- the client API ChromaAccount uses ----------------------------------------------------------------------
    def get_max_batch_size(self) -> int:
        return int(self.call(None, "get_max_batch_size"))

    def create_collection(self, name: str, **kwargs: Any) -> ProcessCollection:
        return ProcessCollection(self, self.call(None, "create_collection", name, **kwargs)["name"])

    def get_collection(self, name: str, **kwargs: Any) -> ProcessCollection:
        return ProcessCollection(self, self.call(None, "get_collection", name, **kwargs)["name"])

    def list_collections(self) -> list[ProcessCollection]:
        return [ProcessCollection(self, found["name"]) for found in self.call(None, "list_collections")]

    def delete_collection(self, name: str) -> None:
        self.call(None, "delete_collection", name)

    def close(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """Chroma's client closed in the child, and the child ended (killed after `timeout_s`)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._conn.send((None, "__stop__", (), {}))
                if self._conn.poll(timeout_s):
                    self._conn.recv()
            except (EOFError, OSError):
                pass  # already gone
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout_s)
            self._kill()

    def _kill(self) -> None:
        self._closed = True
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait(STOP_TIMEOUT_S)
        self._conn.close()


class ProcessCollection:
    """A chromadb `Collection` held by a `ProcessClient`'s child, named by its name."""

    def __init__(self, client: ProcessClient, name: str) -> None:
        self._client, self.name = client, name

    @property
    def metadata(self) -> Any:
        return self._client.call(self.name, "metadata")

    @property
    def configuration(self) -> Any:
        return self._client.call(self.name, "configuration")

    def add(self, **kwargs: Any) -> Any:
        return self._client.call(self.name, "add", **kwargs)

    def upsert(self, **kwargs: Any) -> Any:
        return self._client.call(self.name, "upsert", **kwargs)

    def update(self, **kwargs: Any) -> Any:
        return self._client.call(self.name, "update", **kwargs)

    def delete(self, **kwargs: Any) -> Any:
        return self._client.call(self.name, "delete", **kwargs)

    def get(self, **kwargs: Any) -> Any:
        return self._client.call(self.name, "get", **kwargs)

    def query(self, **kwargs: Any) -> Any:
        return self._client.call(self.name, "query", **kwargs)

    def count(self) -> int:
        return int(self._client.call(self.name, "count"))

    def modify(self, **kwargs: Any) -> Any:
        return self._client.call(self.name, "modify", **kwargs)


def child_main(argv: list[str]) -> None:
    """The child's entry: PATH READ_FD WRITE_FD."""
    _serve(_Channel(int(argv[1]), int(argv[2])), argv[0])


if __name__ == "__main__":  # python -m memory_sim.local.vectorize.chroma_process PATH READ_FD WRITE_FD
    # Run from the module under its own name, so what it pickles (ChromaProcessGone) unpickles in the parent
    from memory_sim.local.vectorize import chroma_process

    chroma_process.child_main(sys.argv[1:])
