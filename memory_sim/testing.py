"""A local Cloudflare API server for test suites (this project's and its parity runs): one per session, on a
free loopback port, with helpers that hand out Cloudflare-backed bindings pointed at it.

    with ServerForTests(tmp_path) as server:
        account = server.adopt(OracleAccount(clock=fake_clock))   # CloudflareVectorizeAccount over REST
        db = server.new_database()                                 # CloudflareD1Database over REST

`adopt` installs an in-process account under a fresh account id, so a test's injected clock or limits still
hold behind the HTTP boundary (the server runs in a thread of the test process).
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from memory_sim.server.loopback import LoopbackServer

TEST_TOKEN = "memory-sim-test-token"
TMPFS = Path("/dev/shm")


@contextmanager
def scratch_folder(fallback: str | Path) -> Iterator[Path]:
    """A throwaway folder in memory (tmpfs) when the system has one, else `fallback`. A test server's D1 files
    there skip the disk's fsync on every commit: ~12 ms per write transaction on a busy disk, which dominated
    the REST parity runs. Removed afterwards."""
    if not (TMPFS.is_dir() and os.access(TMPFS, os.W_OK)):
        yield Path(fallback)
        return
    folder = Path(tempfile.mkdtemp(prefix="memory-sim-test-", dir=TMPFS))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class ServerForTests(LoopbackServer):
    def __init__(self, data_dir: str | Path, *, d1_engine: str = "sqlite", **app_options: Any) -> None:
        from memory_sim.server.app import create_app

        self.app = create_app(data_dir, TEST_TOKEN, d1_engine=d1_engine, **app_options)
        super().__init__(self.app)
        self._ids = itertools.count()

    def fresh_account_id(self) -> str:
        return f"acct-{next(self._ids)}-{uuid.uuid4().hex[:8]}"

    def client(self, account_id: str | None = None, **options: Any) -> Any:
        from memory_sim.cloudflare.client import CloudflareClient

        return CloudflareClient(account_id or self.fresh_account_id(), TEST_TOKEN, self.base_url, **options)

    def adopt(self, account: Any, account_id: str | None = None) -> Any:
        """A `CloudflareVectorizeAccount` whose server side is `account` (a local VectorizeAccount)."""
        from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount

        client = self.client(account_id)
        self.app.state.accounts.get(client.account_id).adopt_vectorize(account)
        return CloudflareVectorizeAccount(client)

    def new_database(self, name: str = "db", account_id: str | None = None) -> Any:
        from memory_sim.cloudflare.d1 import CloudflareD1Account

        return CloudflareD1Account(self.client(account_id)).create(name)
