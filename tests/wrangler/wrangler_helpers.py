"""Helpers of the wrangler suite: the pinned release installed once from the npm registry with this machine's
Node.js into a cache folder (reused by later runs), and `memory-sim serve` started as a real process.

The cache is `$MEMORY_SIM_WRANGLER_DIR`, else `$XDG_CACHE_HOME/memory_sim/wrangler-<version>` (default
`~/.cache/...`). Without node and npm the suite is skipped with one line saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_sim.server.loopback import free_port

WRANGLER_VERSION = "4.50.0"  # the newest release that runs on Node.js 20
TOKEN = "wrangler-suite-token"
ACCOUNT = "wrangler-suite"
DOCS_ACCOUNT = "wrangler-docs"  # where the README's example runs, beside the suite's own account
COMMAND_TIMEOUT_S = 90


def cache_dir() -> Path:
    chosen = os.environ.get("MEMORY_SIM_WRANGLER_DIR")
    if chosen:
        return Path(chosen)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "memory_sim" / f"wrangler-{WRANGLER_VERSION}"


def _installed(folder: Path) -> bool:
    package = folder / "node_modules" / "wrangler" / "package.json"
    try:
        return bool(json.loads(package.read_text())["version"] == WRANGLER_VERSION)
    except (OSError, ValueError, KeyError):
        return False


def install_wrangler(folder: Path) -> Path:
    """wrangler's entry script, installed into `folder` unless it already is (one installer at a time)."""
    from filelock import FileLock

    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock", timeout=900):
        if not _installed(folder):
            partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            (partial / "package.json").write_text('{"private": true}\n')
            npm = [shutil.which("npm") or "npm", "install", "--prefix", str(partial), "--no-audit", "--no-fund",
                   "--ignore-scripts", "--loglevel=error", f"wrangler@{WRANGLER_VERSION}"]
            done = subprocess.run(npm, capture_output=True, text=True, timeout=900)
            if done.returncode != 0:
                shutil.rmtree(partial, ignore_errors=True)
                pytest.fail(f"npm could not install wrangler@{WRANGLER_VERSION}: {done.stderr.strip()[-2000:]}")
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(partial, folder)
    return folder / "node_modules" / "wrangler" / "bin" / "wrangler.js"


@dataclass
class Served:
    """One `memory-sim serve` process on loopback and wrangler pointed at it."""

    engine: str
    port: int
    process: subprocess.Popen[str]
    wrangler_js: Path
    work: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/client/v4"

    def env(self, pointed: bool = True) -> dict[str, str]:
        """wrangler's environment, with the three variables that point it at this server unless not `pointed`."""
        three = {"CLOUDFLARE_API_BASE_URL": self.base_url, "CLOUDFLARE_API_TOKEN": TOKEN,
                 "CLOUDFLARE_ACCOUNT_ID": ACCOUNT}
        return {
            **(three if pointed else {}),
            "PATH": os.environ.get("PATH", ""), "HOME": str(self.work), "XDG_CONFIG_HOME": str(self.work / "config"),
            "WRANGLER_SEND_METRICS": "false", "WRANGLER_SEND_ERROR_REPORTS": "false",
            "WRANGLER_HIDE_BANNER": "true",  # the banner is where wrangler asks the registry for a newer release
            "WRANGLER_LOG_PATH": str(self.work / "logs"), "CI": "true", "NO_COLOR": "1", "FORCE_COLOR": "0",
        }

    def wrangler(self, *args: str, ok: bool = True) -> str:
        """wrangler's stdout and stderr; asserts its exit status (0, or not 0 when `ok` is False)."""
        done = subprocess.run(["node", str(self.wrangler_js), *args], cwd=self.work, env=self.env(),
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
        output = done.stdout + done.stderr
        assert (done.returncode == 0) == ok, f"wrangler {' '.join(args)} exited {done.returncode}:\n{output}"
        return output

    def query(self, database_id: str, sql: str) -> list[dict[str, Any]]:
        """The rows left behind, read straight from the server."""
        answer = httpx.post(f"{self.base_url}/accounts/{ACCOUNT}/d1/database/{database_id}/query",
                            json={"sql": sql}, headers={"Authorization": f"Bearer {TOKEN}"})
        assert answer.status_code == 200, answer.text
        return list(answer.json()["result"][-1]["results"])

    def api(self, method: str, path: str, **request: Any) -> Any:
        answer = httpx.request(method, f"{self.base_url}/accounts/{ACCOUNT}{path}",
                               headers={"Authorization": f"Bearer {TOKEN}"}, **request)
        assert answer.status_code == 200, answer.text
        return answer.json()["result"]


def start_server(engine: str, data: Path, wrangler_js: Path, work: Path) -> Served:
    port = free_port()
    command = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())",
               "--data", str(data), "--d1-engine", engine, "serve", "--port", str(port),
               "--token", f"{TOKEN}:{ACCOUNT}+{DOCS_ACCOUNT}", "--log-level", "warning"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"memory-sim serve ({engine}) exited {process.returncode}: {process.stdout.read()}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                work.mkdir(parents=True, exist_ok=True)
                return Served(engine, port, process, wrangler_js, work)
        except httpx.TransportError:
            pass
        time.sleep(0.2)  # polling a real process that is still loading its backends
    process.kill()
    pytest.fail(f"memory-sim serve ({engine}) did not answer /health within 120 s")
