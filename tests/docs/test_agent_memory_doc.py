"""docs/agent-memory.md's REST and Worker examples (its python blocks run in test_code_blocks.py): the curl
script runs against a real `memory-sim serve` on loopback, every answer a successful v4 envelope; the Worker
example is the test Worker's own function, which the Worker suite runs (tests/worker)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from memory_sim.server.loopback import free_port

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "agent-memory.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = PAGE.index(f"## {title}")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start : end if end > 0 else None]


def fenced(text: str, kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", text, re.M | re.S)


def test_the_worker_example_is_the_test_workers_code() -> None:
    [example] = fenced(section("Quick start: a Worker"), "text")
    assert example in (ROOT / "tests" / "worker" / "src" / "index.js").read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed here")
def test_the_rest_example_runs_against_memory_sim_serve(tmp_path: Path) -> None:
    serve, script = fenced(section("Quick start: REST"), "bash")
    assert "serve --token my-token" in serve
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_SIM_", "CLOUDFLARE_"))},
           "MEMORY_SIM_MODEL": "fake/hashing", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())",
               "--data", str(tmp_path / "data"), "serve", "--port", str(port), "--token", "my-token"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stderr.read().decode() if server.stderr else "exited"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "memory-sim serve did not start within 120 s"
            time.sleep(0.25)
        done = subprocess.run(["bash", "-e", "-c", script.replace("127.0.0.1:8787", f"127.0.0.1:{port}")],
                              capture_output=True, text=True, timeout=120)
    finally:
        server.terminate()
        server.wait(30)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.replace("}{", "}\n{").splitlines() if line.strip()]
    assert len(answers) == script.count("curl ") and all(a["success"] for a in answers), answers
    recalled = answers[2]["result"]
    assert recalled["count"] == 1 and recalled["answer"] == "The user prefers concise answers."
    assert [m["type"] for m in answers[3]["result"]] == ["instruction"]
    assert "## Instructions\n- The user prefers concise answers." in answers[4]["result"]["summary"]
