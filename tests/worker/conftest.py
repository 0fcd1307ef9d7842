"""The test Worker's npm project, installed by the suite: tests/worker/package.json (wrangler pinned, and
memory-sim-miniflare from this checkout, which npm links) installed from the npm registry into a cache folder that
later runs reuse. Without node and npm, or with the registry unreachable on a first install, the suite is skipped
with one line saying so.

The cache is `$MEMORY_SIM_WORKER_DIR`, else `$XDG_CACHE_HOME/memory_sim/worker-wrangler-<version>-<checkout>`
(default `~/.cache/...`): one per checkout, since each links its own plugin folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
PLUGIN = HERE.parent.parent / "npm" / "memory-sim-miniflare"
OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH", "ECONNRESET")


def wrangler_version() -> str:
    return str(json.loads((HERE / "package.json").read_text())["dependencies"]["wrangler"])


def project_dir() -> Path:
    chosen = os.environ.get("MEMORY_SIM_WORKER_DIR")
    if chosen:
        return Path(chosen)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    checkout = hashlib.sha256(str(PLUGIN.resolve()).encode()).hexdigest()[:10]
    return base / "memory_sim" / f"worker-wrangler-{wrangler_version()}-{checkout}"


def installed(folder: Path) -> bool:
    """The pinned wrangler is there, and the plugin is this checkout's folder (npm links a `file:` dependency)."""
    try:
        version = json.loads((folder / "node_modules" / "wrangler" / "package.json").read_text())["version"]
        linked = (folder / "node_modules" / "memory-sim-miniflare").resolve() == PLUGIN.resolve()
    except (OSError, ValueError, KeyError):
        return False
    return bool(version == wrangler_version() and linked)


def install(folder: Path) -> Path:
    """tests/worker/package.json installed into `folder` unless it already is (no registry needed then)."""
    from filelock import FileLock

    manifest = json.loads((HERE / "package.json").read_text())
    manifest["dependencies"]["memory-sim-miniflare"] = f"file:{PLUGIN.resolve()}"
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock", timeout=900):
        if installed(folder):
            return folder
        (folder / "package.json").write_text(json.dumps(manifest, indent=1) + "\n")
        npm = [shutil.which("npm") or "npm", "install", "--no-audit", "--no-fund", "--ignore-scripts",
               "--prefer-offline", "--loglevel=error"]
        done = subprocess.run(npm, cwd=folder, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            if any(code in done.stderr for code in OFFLINE):
                pytest.skip(f"the npm registry is unreachable: the Worker suite installs wrangler from it "
                            f"({done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'no output'})")
            pytest.fail(f"npm install of the test Worker's project failed: {done.stderr.strip()[-2000:]}")
    return folder


@pytest.fixture(scope="session")
def worker_project() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js (node and npm) is not installed here: the Worker suite needs it")
    return install(project_dir())
