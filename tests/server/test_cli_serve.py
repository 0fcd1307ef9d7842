"""`memory-sim serve` as a real subprocess on loopback: it needs a token, answers /health, and stops cleanly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from memory_sim.server.loopback import free_port, wait_until_serving


def test_serve_runs_on_loopback_with_a_token(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "MEMORY_SIM_API_TOKEN": "secret"}
    command = [sys.executable, "-c", "from memory_sim.cli import main; main()", "--data", str(tmp_path), "serve",
               "--port", str(port), "--d1-engine", "sqlite", "--log-level", "warning"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        health = wait_until_serving(port, process)
        assert health.json()["result"] == {"status": "ok"}
        url = f"http://127.0.0.1:{port}/client/v4/accounts/a/d1/database"
        assert httpx.get(url).status_code == 401
        assert httpx.get(url, headers={"Authorization": "Bearer secret"}).json()["result"] == []
    finally:
        process.terminate()
        output = process.communicate(timeout=120)[0].decode()
    assert "http://127.0.0.1:%d/client/v4" % port in output
    assert "1 token for every account id" in output  # a bare token opens every account, and start-up says so


def test_serve_without_a_token_is_refused(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MEMORY_SIM_API_TOKEN"}
    done = subprocess.run([sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())",
                           "--data", str(tmp_path), "serve"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "token" in done.stderr


def test_serve_with_a_token_on_its_command_line_warns(tmp_path: Path) -> None:
    """`--token` is in `ps` for every user of the machine: serve says so and names MEMORY_SIM_API_TOKEN."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "MEMORY_SIM_API_TOKEN"}
    command = [sys.executable, "-c", "from memory_sim.cli import main; main()", "--data", str(tmp_path), "serve",
               "--port", str(port), "--d1-engine", "sqlite", "--log-level", "warning", "--token", "secret"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until_serving(port, process)
    finally:
        process.terminate()
        output = process.communicate(timeout=120)[0].decode()
    assert "--token is visible to other users" in output and "MEMORY_SIM_API_TOKEN" in output
    assert "secret" not in output  # the warning never repeats the token


def test_the_folders_own_account_keeps_its_chroma_in_a_child_process(tmp_path: Path) -> None:
    """As every account's (tests/server/test_upsert_fairness.py): Chroma's calls hold the GIL throughout, so a large
    write to `local` in serve's own process would stall every other request."""
    import psutil

    port = free_port()
    env = {**os.environ, "MEMORY_SIM_API_TOKEN": "secret"}
    command = [sys.executable, "-c", "from memory_sim.cli import main; main()", "--data", str(tmp_path), "serve",
               "--port", str(port), "--d1-engine", "sqlite", "--log-level", "warning"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until_serving(port, process)
        children = [" ".join(c.cmdline()) for c in psutil.Process(process.pid).children(recursive=True)]
        assert any("memory_sim.local.vectorize.chroma_process" in c for c in children), children
        listed = httpx.get(f"http://127.0.0.1:{port}/client/v4/accounts/local/vectorize/v2/indexes",
                           headers={"Authorization": "Bearer secret"})
        assert listed.status_code == 200 and [i["name"] for i in listed.json()["result"]] == ["memories"]
    finally:
        process.terminate()
        process.communicate(timeout=120)
