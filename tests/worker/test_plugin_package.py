"""The npm package memory-sim-miniflare as shipped: inside the Python package (`memory-sim worker-plugin --path`,
and in a built wheel), self-contained (it imports nothing, so a linked install finds miniflare from the Worker's
project), and reading the three variables wrangler's management verbs read, `options` first."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NPM = ROOT / "npm" / "memory-sim-miniflare"
CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]


def test_the_cli_prints_the_shipped_package() -> None:
    done = subprocess.run([*CLI, "worker-plugin", "--path"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    assert json.loads((folder / "package.json").read_text())["name"] == "memory-sim-miniflare"
    assert (folder / "index.mjs").read_bytes() == (NPM / "index.mjs").read_bytes()


def test_the_plugin_imports_nothing() -> None:
    """Loaded from wherever npm put it (a link into this checkout has no node_modules above it)."""
    source = (NPM / "index.mjs").read_text()
    # the Worker serving env.MEMORY runs in workerd, not in Node: it imports workerd's own cloudflare:workers only
    start = source.index("export const AGENT_MEMORY_WORKER = `")
    end = source.index("`;", start)
    worker, plugin = source[start:end], source[:start] + source[end:]
    assert "import " not in plugin.replace("// ", "") and "require(" not in plugin
    assert [line for line in worker.splitlines() if "import " in line] == [
        'import { RpcTarget, WorkerEntrypoint } from "cloudflare:workers";']
    assert "dependencies" not in json.loads((NPM / "package.json").read_text())


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed here")
def test_settings_come_from_the_environment_and_options_override() -> None:
    script = """
const m = await import(process.argv[1]);
const env = {CLOUDFLARE_API_BASE_URL: "http://127.0.0.1:8787/client/v4", CLOUDFLARE_API_TOKEN: "t",
             CLOUDFLARE_ACCOUNT_ID: "local"};
const out = {
  fromEnv: m.settingsOf({}, env),
  overridden: m.settingsOf({upstream: "127.0.0.1:9999", token: "u", account: "village"}, env),
  plugin: Object.keys(m.plugins),
  bindings: await m.plugin.getBindings([{name: "V", type: "vectorize", options: {index_name: "npc"}}], 0),
  memory: await m.plugin.getBindings([{name: "MEMORY", type: "agent_memory", options: {namespace: "app"}}], 0),
};
process.env.CLOUDFLARE_API_BASE_URL = env.CLOUDFLARE_API_BASE_URL;
process.env.CLOUDFLARE_API_TOKEN = "t";
process.env.CLOUDFLARE_ACCOUNT_ID = "local";
out.memoryService = await m.plugin.getServices({options: [{name: "MEMORY", type: "agent_memory", options: {namespace: "app"}}], workerIndex: 0});
try { m.settingsOf({}, {}); } catch (e) { out.missing = e.message; }
try { m.describe({name: "Q", type: "queue", options: {}}); } catch (e) { out.unserved = e.message; }
console.log(JSON.stringify(out));
"""
    done = subprocess.run(["node", "--input-type=module", "-e", script, (NPM / "index.mjs").as_uri()],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["fromEnv"] == {"origin": "http://127.0.0.1:8787", "token": "t", "account": "local"}
    assert seen["overridden"] == {"origin": "http://127.0.0.1:9999", "token": "u", "account": "village"}
    assert seen["plugin"] == ["memory-sim"]
    wrapped = seen["bindings"][0]["wrapped"]
    assert wrapped["moduleName"] == "cloudflare-internal:vectorize-api"
    assert {"name": "indexId", "text": "npc"} in wrapped["innerBindings"]
    assert seen["missing"].startswith("memory-sim-miniflare: set CLOUDFLARE_API_BASE_URL")
    assert "is not served (vectorize, ai, d1 or agent_memory)" in seen["unserved"]
    memory = seen["memory"][0]
    assert memory == {"name": "MEMORY", "service": {"name": "memory-sim:0:agent_memory:MEMORY",
                                                     "entrypoint": "AgentMemoryNamespace"}}
    served = seen["memoryService"][0]["worker"]
    assert {"name": "base", "text": "http://127.0.0.1:8787/client/v4/accounts/local/agent-memory/namespaces/app"} \
        in served["bindings"]


@pytest.mark.slow
def test_the_wheel_ships_the_package(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "node_modules", ".venv", "*.egg-info",
                                                                 "build", "site", "__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                           str(tmp_path / "wheels"), str(source)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    wheel, = (tmp_path / "wheels").glob("memory_sim-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {"memory_sim/worker_plugin/index.mjs", "memory_sim/worker_plugin/package.json"} <= set(names)
