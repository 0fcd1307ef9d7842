"""The inspector asks for the same authority as the API: its token (or the cookie it is traded for), a loopback
Host, and no cross-site origin; and it never keeps the folder from other processes between requests. Real HTTP on
loopback, a real `memory-sim remember` in another process."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import httpx
import pytest
from inspector_helpers import CLI, QUESTION, Inspector, inspector

from memory_sim.inspector.access import cookie_name

PAGES = ("/ui/", "/ui/npcs/margaret", "/ui/recall", "/ui/relationships", "/ui/health")
DATA = ("/ui/api/village", "/ui/api/npcs/margaret", "/ui/api/health", "/ui/api/relationships")


def bare(ui: Inspector, path: str, **headers: str) -> httpx.Response:
    """A request with only the headers given: no token unless they carry one."""
    return httpx.get(f"{ui.base}{path}", headers=headers, timeout=60)


@pytest.mark.parametrize("path", DATA + PAGES)
def test_no_token_is_a_401_on_every_page_and_route(ui: Inspector, path: str) -> None:
    response = bare(ui, path)
    assert response.status_code == 401, response.text
    assert "Margaret" not in response.text and "token" in response.text
    if "/api/" in path:
        assert "\n" not in response.json()["error"]
    assert bare(ui, path, Authorization="Bearer not-the-token").status_code == 401


def test_the_printed_url_trades_the_token_for_a_strict_httponly_cookie(ui: Inspector) -> None:
    port = int(ui.base.rsplit(":", 1)[1])
    traded = bare(ui, f"/ui/npcs/margaret?token={ui.token}")
    assert traded.status_code == 303 and traded.headers["location"] == "/ui/npcs/margaret"  # the token leaves the URL
    cookie = traded.headers["set-cookie"]
    assert cookie.startswith(f"{cookie_name(port)}=") and ui.token not in cookie
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict") and "Path=/ui" in cookie
    with httpx.Client(base_url=ui.base, timeout=60, follow_redirects=True) as browser:
        page = browser.get(f"/ui/recall?npc=margaret&token={ui.token}")
        assert page.status_code == 200 and page.url.params.get("npc") == "margaret" and "token" not in page.url.params
        assert browser.get("/ui/api/village").json()["npcs"]  # the cookie opens the rest
    assert bare(ui, "/ui/?token=wrong").status_code == 401


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1.nip.io:{port}",
                                  "127.0.0.1:1", "192.168.1.5:{port}"])
def test_a_foreign_host_is_refused_even_with_the_token(ui: Inspector, host: str) -> None:
    port = ui.base.rsplit(":", 1)[1]
    response = bare(ui, "/ui/api/village", Host=host.format(port=port), Authorization=f"Bearer {ui.token}")
    assert response.status_code == 403 and "Host" in response.json()["error"]


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]"])
def test_the_loopback_names_with_the_port_are_allowed(ui: Inspector, name: str) -> None:
    port = ui.base.rsplit(":", 1)[1]
    assert bare(ui, "/ui/api/village", Host=f"{name}:{port}", Authorization=f"Bearer {ui.token}").status_code == 200


@pytest.mark.parametrize("headers", [{"Origin": "http://evil.example"}, {"Origin": "null"},
                                     {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}])
def test_a_cross_site_request_is_refused_even_with_the_token(ui: Inspector, headers: dict[str, str]) -> None:
    response = bare(ui, "/ui/api/village", Authorization=f"Bearer {ui.token}", **headers)
    assert response.status_code == 403, response.text
    assert bare(ui, f"/ui/?token={ui.token}", **headers).status_code == 403  # nor is a token traded for one


def test_same_origin_requests_and_typed_addresses_pass(ui: Inspector) -> None:
    for headers in ({"Sec-Fetch-Site": "same-origin", "Origin": ui.base}, {"Sec-Fetch-Site": "none"}):
        assert bare(ui, "/ui/api/village", Authorization=f"Bearer {ui.token}", **headers).status_code == 200


def test_a_remember_from_another_process_succeeds_while_the_inspector_is_polled(
    village_folder: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(village_folder, folder)
    stop, answers = threading.Event(), []
    with inspector(folder) as looking:

        def poll() -> None:  # a page that refreshes itself, far more often than every 2 s
            while not stop.is_set():
                for path in ("/ui/api/village", "/ui/api/npcs/margaret", "/ui/health"):
                    answers.append(looking.get(path).status_code)
                answers.append(looking.get("/ui/api/recall", npc="margaret", q=QUESTION).status_code)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        try:
            for n in range(3):
                done = subprocess.run([*CLI, "--data", str(folder), "remember", "margaret", f"Polled memory {n}.",
                                       "--importance", "0.9"], capture_output=True, text=True, timeout=120)
                assert done.returncode == 0, done.stderr
        finally:
            stop.set()
            poller.join(timeout=120)
        texts = [m["text"] for m in looking.json("/ui/api/npcs/margaret")["memories"]]
    assert {f"Polled memory {n}." for n in range(3)} <= set(texts)
    assert len(answers) >= 3 and set(answers) == {200}, answers  # the inspector answered all along


def test_an_opener_waits_for_the_inspectors_one_request_but_not_for_a_real_owner(
    village_folder: Path, tmp_path: Path
) -> None:
    from memory_sim.env import Env
    from memory_sim.errors import DataInUseError
    from memory_sim.inspector import Folder
    from memory_sim.memory.ledger import store
    from memory_sim.settings import Settings

    folder = tmp_path / "copy"
    shutil.copytree(village_folder, folder)
    looking = Folder(Settings.load(environ={}, data_dir=folder))
    holding, answered = threading.Event(), threading.Event()

    def one_request() -> None:
        with looking.env():  # the inspector answering one (slow) request
            holding.set()
            answered.wait(timeout=0.5)

    request = threading.Thread(target=one_request)
    request.start()
    assert holding.wait(timeout=60)
    with Env.local(folder, environ={}, serve_owner=False) as env:  # found the folder held: waited, then opened it
        assert not looking.held and store.count_memories(env.DB) > 0
        with pytest.raises(DataInUseError, match="in use|already open"), looking.env():  # nor it for a real owner
            pass
    request.join(timeout=60)
