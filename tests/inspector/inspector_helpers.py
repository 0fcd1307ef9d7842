"""A seeded village folder on the real local backends (Chroma, DuckDB) with the hashing embedder, and the
inspector serving it on a real loopback port."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from memory_sim.env import Env
from memory_sim.inspector import Access, Folder, create_app
from memory_sim.memory.system import MemorySystem
from memory_sim.server.loopback import LoopbackServer
from memory_sim.settings import Settings
from memory_sim.sim.clock import SimClock
from memory_sim.sim.driver import run_village
from memory_sim.sim.world import Village

CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]
QUESTION = "What does Margaret think of Tom?"
DAYS = 6


def seed_village(folder: Path, npcs: int = 8, days: int = DAYS) -> None:
    """The demo's village (seed 7) for `days` days, its index recording the hashing embedder."""
    clock = SimClock()
    with Env.local(folder, embed_model="fake/hashing", serve_owner=False) as env:
        run_village(MemorySystem(env, clock=clock), Village(npcs, 7), clock, days)


def open_folder(folder: Path) -> Env:
    return Env.local(folder, environ={}, serve_owner=False)


def settings_of(folder: Path) -> Settings:
    return Settings.load(environ={}, data_dir=folder)


@contextmanager
def inspector(folder: Path) -> Iterator[Inspector]:
    served, access = Folder(settings_of(folder)), Access()
    try:
        with LoopbackServer(create_app(served, access)) as server:
            yield Inspector(f"http://127.0.0.1:{server.port}", served, access)
    finally:
        served.close()


class Inspector:
    """The inspector on a loopback port; `get` and `json` send its token, as a script would."""

    def __init__(self, base: str, folder: Folder, access: Access) -> None:
        self.base, self.folder, self.access = base, folder, access

    @property
    def token(self) -> str:
        return self.access.token

    def get(self, path: str, **params: Any) -> httpx.Response:
        return httpx.get(f"{self.base}{path}", params=params, timeout=60,
                         headers={"Authorization": f"Bearer {self.token}"})

    def json(self, path: str, status: int = 200, **params: Any) -> Any:
        response = self.get(path, **params)
        assert response.status_code == status, response.text
        return response.json()
