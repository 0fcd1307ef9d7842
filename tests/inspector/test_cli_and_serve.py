"""`memory-sim inspect` and `/ui` of `memory-sim serve`, as real subprocesses on loopback."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import httpx
from inspector_helpers import CLI

from memory_sim.server.loopback import free_port


def wait_for(url: str, process: subprocess.Popen[bytes], timeout_s: float = 90) -> httpx.Response:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return httpx.get(url, timeout=30)
        except httpx.TransportError:
            assert process.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)  # waiting for a real process to bind its port


def stop(process: subprocess.Popen[bytes]) -> str:
    process.terminate()
    return process.communicate(timeout=30)[0].decode()


def test_inspect_serves_the_pages_of_a_folder_on_loopback(village_folder: Path, tmp_path: Path) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(village_folder, folder)
    port = free_port()
    process = subprocess.Popen([*CLI, "--data", str(folder), "inspect", "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        page = wait_for(f"http://127.0.0.1:{port}/ui/", process)
        assert page.status_code == 200 and "Margaret" in page.text
        assert httpx.get(f"http://127.0.0.1:{port}/ui/api/npcs/tom").json()["name"] == "Tom"
        assert httpx.get(f"http://127.0.0.1:{port}/", follow_redirects=True).url.path == "/ui/"
    finally:
        output = stop(process)
    assert f"http://127.0.0.1:{port}/ui/" in output


def test_inspect_of_a_missing_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "--data", str(tmp_path / "typo"), "inspect"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no data folder" in done.stderr
    assert not (tmp_path / "typo").exists()


def test_serve_has_the_inspector_at_ui_without_opening_the_api_to_no_token(
    village_folder: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(village_folder, folder)
    port = free_port()
    process = subprocess.Popen([*CLI, "--data", str(folder), "serve", "--port", str(port), "--log-level", "warning"],
                               env={**os.environ, "MEMORY_SIM_API_TOKEN": "secret"},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        village = wait_for(f"http://127.0.0.1:{port}/ui/api/village", process).json()
        assert len(village["npcs"]) == 8 and village["throughOwner"] is None  # the server's own Env
        recalled = httpx.get(f"http://127.0.0.1:{port}/ui/api/recall",
                             params={"npc": "margaret", "q": "What does Margaret think of Tom?"}, timeout=60).json()
        assert recalled["results"] and "parts" in recalled["results"][0]
        assert httpx.get(f"http://127.0.0.1:{port}/ui/health").status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port}/client/v4/accounts/local/d1/database").status_code == 401
    finally:
        output = stop(process)
    assert "the inspector at /ui/" in output
