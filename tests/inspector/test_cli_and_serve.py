"""`memory-sim inspect` and `/ui` of `memory-sim serve`, as real subprocesses on loopback."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

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


def printed_url(process: subprocess.Popen[bytes]) -> tuple[str, str]:
    """The inspector's URL the process prints at start, and the token in it."""
    assert process.stdout is not None
    while line := process.stdout.readline().decode():
        found = re.search(r"(http://\S+/ui/\?token=([\w-]+))", line)
        if found:
            return found[1], found[2]
    raise AssertionError(f"no inspector URL printed (exit {process.wait(timeout=30)})")


def test_inspect_serves_the_pages_of_a_folder_on_loopback(village_folder: Path, tmp_path: Path) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(village_folder, folder)
    port = free_port()
    process = subprocess.Popen([*CLI, "--data", str(folder), "inspect", "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url, token = printed_url(process)
        assert url.startswith(f"http://127.0.0.1:{port}/ui/?token=")
        assert wait_for(f"http://127.0.0.1:{port}/ui/", process).status_code == 401  # without it, nothing
        with httpx.Client(timeout=60, follow_redirects=True) as browser:
            page = browser.get(url)  # the printed URL, as a browser opens it: the token becomes a cookie
            assert page.status_code == 200 and "Margaret" in page.text and page.url.query == b""
            assert browser.get(f"http://127.0.0.1:{port}/ui/api/npcs/tom").json()["name"] == "Tom"
            assert browser.get(f"http://127.0.0.1:{port}/?token={token}").url.path == "/ui/"
        assert httpx.get(f"http://127.0.0.1:{port}/ui/api/npcs/tom").status_code == 401
    finally:
        stop(process)


def test_inspect_of_a_missing_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "--data", str(tmp_path / "typo"), "inspect"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no data folder" in done.stderr
    assert not (tmp_path / "typo").exists()


def test_serve_has_the_inspector_at_ui_behind_its_token_or_an_api_token_for_local(
    village_folder: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(village_folder, folder)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = subprocess.Popen([*CLI, "--data", str(folder), "serve", "--port", str(port), "--log-level", "warning"],
                               env={**os.environ, "MEMORY_SIM_API_TOKEN": "secret:local,other:elsewhere"},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url, token = printed_url(process)
        assert url.startswith(f"{base}/ui/?token=") and token not in ("secret", "other")
        assert wait_for(f"{base}/ui/api/village", process).status_code == 401  # no token: the data stays
        assert httpx.get(f"{base}/ui/health").status_code == 401
        assert httpx.get(f"{base}/ui/api/village", headers={"Host": f"evil.example:{port}",
                                                            "Authorization": f"Bearer {token}"}).status_code == 403
        assert httpx.get(f"{base}/ui/api/village", headers={"Authorization": "Bearer other"}).status_code == 401
        for key in (token, "secret"):  # its own token, or an API token that opens the account `local`
            village = httpx.get(f"{base}/ui/api/village", headers={"Authorization": f"Bearer {key}"}).json()
            assert len(village["npcs"]) == 8 and village["throughOwner"] is None  # the server's own Env
        with httpx.Client(timeout=60, follow_redirects=True) as browser:
            assert browser.get(url).status_code == 200
            recalled = browser.get(f"{base}/ui/api/recall",
                                   params={"npc": "margaret", "q": "What does Margaret think of Tom?"}).json()
            assert recalled["results"] and "parts" in recalled["results"][0]
            assert browser.get(f"{base}/ui/health").status_code == 200
        assert httpx.get(f"{base}/client/v4/accounts/local/d1/database").status_code == 401
    finally:
        stop(process)


def test_inspect_bounds_slow_clients_as_serve_does(village_folder: Path, tmp_path: Path, monkeypatch: Any) -> None:
    """A half-sent request head or a stalled body does not hold the inspector's connections either
    (tests/server/test_slow_clients.py tests the bounds themselves)."""
    import uvicorn

    from memory_sim.cli import main

    folder = tmp_path / "copy"
    shutil.copytree(village_folder, folder)
    ran: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: ran.update(options))
    assert main(["--data", str(folder), "inspect", "--port", str(free_port())]) == 0
    assert ran["http"].__name__ == "BoundedHead" and ran["timeout_keep_alive"] == 5
    assert ran["timeout_graceful_shutdown"] == 10
