"""A local Cloudflare API server for test suites (this project's and its parity runs): one per session, on a
free loopback port, with helpers that hand out Cloudflare-backed bindings pointed at it. Everything is opened
through the Env builder (the server's backends, the Cloudflare adapters), as any other entry point does.

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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory_sim.server.loopback import LoopbackServer
from memory_sim.settings import Settings

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
        from memory_sim.builder.server import build_server_app

        self.app = build_server_app(data_dir, TEST_TOKEN, d1_engine=d1_engine, **app_options)
        super().__init__(self.app)
        self._ids = itertools.count()

    def fresh_account_id(self) -> str:
        return f"acct-{next(self._ids)}-{uuid.uuid4().hex[:8]}"

    def settings(self, account_id: str | None = None) -> Settings:
        """The settings of a Cloudflare Env on this server's account `account_id` (a fresh one by default)."""
        return Settings.load(environ={}, backend="cloudflare", account_id=account_id or self.fresh_account_id(),
                             api_token=TEST_TOKEN, base_url=self.base_url)

    def client(self, account_id: str | None = None, **options: Any) -> Any:
        """A `CloudflareClient` of the account; `options` are the client's (timeouts, retries, transport)."""
        from memory_sim.builder import cloudflare_client

        return cloudflare_client(self.settings(account_id), **options)

    def adopt(self, account: Any, account_id: str | None = None) -> Any:
        """A `CloudflareVectorizeAccount` whose server side is `account` (a local VectorizeAccount)."""
        from memory_sim.builder import open_vectorize_account

        settings = self.settings(account_id)
        self.app.state.accounts.get(settings.account_id).adopt_vectorize(account)
        return open_vectorize_account(settings)

    def new_database(self, name: str = "db", account_id: str | None = None) -> Any:
        from memory_sim.builder import open_d1_account

        return open_d1_account(self.settings(account_id)).create(name)
