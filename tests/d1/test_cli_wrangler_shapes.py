"""`memory-sim d1` prints what wrangler prints, on the data folder and (`--remote`) on a Cloudflare account: the local
Cloudflare API server on loopback stands in for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from memory_sim.cli import main
from memory_sim.folder_lock import database_id_for
from memory_sim.testing import TEST_TOKEN


@pytest.fixture
def remote(cloudflare_server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The settings' Cloudflare account: a fresh account of the local server (the backend itself stays local)."""
    account_id = cloudflare_server.fresh_account_id()
    for name, value in (("CLOUDFLARE_ACCOUNT_ID", account_id), ("CLOUDFLARE_API_TOKEN", TEST_TOKEN),
                        ("CLOUDFLARE_BASE_URL", cloudflare_server.base_url)):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MEMORY_SIM_BACKEND", raising=False)
    yield cloudflare_server.app.state.accounts.get(account_id)


def _run(capsys: pytest.CaptureFixture[str], data: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--data", str(data), "d1", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("where", ["--local", "--remote"])
def test_a_failed_statement_prints_the_error_as_json_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               remote: Any, where: str) -> None:
    flag = [] if where == "--local" else ["--backend", "cloudflare"]
    assert _run(capsys, tmp_path, *flag, "create", "town")[0] == 0
    code, out, err = _run(capsys, tmp_path, "execute", "town", where, "--command", "SELECT * FROM nowhere", "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["code"] == 7500 and error["name"] == "APIError" and error["kind"] == "error"
    assert error["text"].startswith("D1_ERROR: ") and "nowhere" in error["text"]  # the engine's words
    assert error["notes"] == [{"text": f"{error['text']} [code: 7500]"}]
    assert err == f"error: {error['text']}\n"  # the one line on stderr as well
    code, out, _ = _run(capsys, tmp_path, "execute", "absent", where, "--command", "SELECT 1", "--json")
    assert code == 2 and set(json.loads(out)["error"]) == {"text"}  # no statement ran: wrangler's plain error


def test_remote_runs_on_the_cloudflare_account_and_local_on_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                       remote: Any) -> None:
    assert _run(capsys, tmp_path, "--backend", "cloudflare", "create", "town")[0] == 0
    assert not (tmp_path / "d1").exists()  # created in the account, not in the folder
    sql = "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('far'); SELECT v FROM t"
    code, out, _ = _run(capsys, tmp_path, "execute", "town", "--remote", "--command", sql, "--json")
    assert code == 0 and json.loads(out)[2]["results"] == [{"v": "far"}]
    assert [d["name"] for d in remote.catalogue().values()] == ["town"]
    code, _, err = _run(capsys, tmp_path, "execute", "town", "--local", "--command", "SELECT 1")
    assert code == 2 and "no database named 'town'" in err  # --local is the folder, which has none
    assert _run(capsys, tmp_path, "create", "town")[0] == 0
    code, out, _ = _run(capsys, tmp_path, "execute", "town", "--local", "--command", "SELECT count(*) AS n FROM sqlite_master", "--json")
    assert code == 0 and json.loads(out)[0]["results"] == [{"n": 0}]  # the folder's own, empty database
    code, _, err = _run(capsys, tmp_path, "execute", "town", "--local", "--remote", "--command", "SELECT 1")
    assert code == 2 and "not allowed with argument" in err


@pytest.mark.parametrize("backend", ["local", "cloudflare"])
def test_list_and_create_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], remote: Any, backend: str) -> None:
    code, out, _ = _run(capsys, tmp_path, "--backend", backend, "create", "town", "--json")
    made = json.loads(out)
    assert code == 0 and made["name"] == "town" and made["version"] == "production" and "uuid" in made
    if backend == "local":  # the stable id and file time that `memory-sim serve` lists for the folder's database
        assert made["uuid"] == database_id_for("town") and made["created_at"].endswith("Z")
    else:
        assert made["uuid"] in remote.catalogue()
    _run(capsys, tmp_path, "--backend", backend, "create", "village")
    code, out, _ = _run(capsys, tmp_path, "--backend", backend, "list", "--json")
    listed = json.loads(out)
    assert code == 0 and [d["name"] for d in listed] == ["town", "village"] and listed[0] == made
    assert _run(capsys, tmp_path, "--backend", backend, "list")[1].split() == ["town", "village"]
