"""wrangler, unchanged, against `memory-sim serve`: wrangler installed once per session (cached between runs, see
wrangler_helpers.py), and one server per D1 engine for the module. Without node and npm the suite is skipped with
one line saying so."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from wrangler_helpers import Served, cache_dir, install_wrangler, start_server


@pytest.fixture(scope="session")
def wrangler_js() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js (node and npm) is not installed here: the wrangler suite needs it")
    return install_wrangler(cache_dir())


@pytest.fixture(scope="module")
def servers(wrangler_js: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Served]]:
    """A server per D1 engine, started side by side, stopped (SIGTERM) at the end of the module."""
    root = tmp_path_factory.mktemp("wrangler")
    with ThreadPoolExecutor(2) as pool:
        started = {engine: pool.submit(start_server, engine, root / engine / "data", wrangler_js,
                                       root / engine / "work") for engine in ("duckdb", "sqlite")}
    running = {engine: future.result() for engine, future in started.items() if future.exception() is None}
    try:
        for future in started.values():
            future.result()  # a server that did not start fails the module, after the other is stopped below
        yield running
    finally:
        for served in running.values():
            served.process.terminate()
        for served in running.values():
            try:
                served.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                served.process.kill()
