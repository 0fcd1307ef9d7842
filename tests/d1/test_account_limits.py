"""D1's account limits answer locally as production does: a database over the account's limit is refused with
API code 7406 "System limit reached: databases per account (N)" (the CLI, the local account and the REST route),
and `d1 execute --file` refuses a file over 5 GB before reading any of it. The limit is injected (or the module
constant patched), never reached by creating a million databases."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memory_sim.bindings import d1_account_limits, limits
from memory_sim.builder.server import build_server_app
from memory_sim.cli import main
from memory_sim.errors import D1SystemLimit
from memory_sim.local.d1.account import D1Account
from memory_sim.server.loopback import LoopbackServer
from memory_sim.testing import TEST_TOKEN


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_the_database_over_the_limit_is_refused_and_nothing_is_written(tmp_path: Path, engine: str) -> None:
    account = D1Account(tmp_path, engine, max_databases=2)  # type: ignore[arg-type]
    for name in ("ada", "tom"):
        account.create(name).close()
    with pytest.raises(D1SystemLimit) as refused:
        account.create("cal")
    assert refused.value.code == 7406 and str(refused.value) == "System limit reached: databases per account (2)"
    assert account.list() == ["ada", "tom"] and not account.path("cal").exists()
    account.delete("ada")  # a slot freed is a slot to use
    account.create("cal").close()
    assert account.list() == ["cal", "tom"]


def test_the_default_is_d1s_one_million(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert limits.D1_MAX_DATABASES_PER_ACCOUNT == 1_000_000 and limits.D1_MAX_IMPORT_BYTES == 5_000_000_000
    monkeypatch.setattr(limits, "D1_MAX_DATABASES_PER_ACCOUNT", 1)
    account = D1Account(tmp_path, "sqlite")
    account.create("ada").close()
    with pytest.raises(D1SystemLimit, match=r"databases per account \(1\)$"):
        account.create("tom")


def test_the_command_line_says_it_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(limits, "D1_MAX_DATABASES_PER_ACCOUNT", 1)
    data = ["--data", str(tmp_path / "data")]
    assert main([*data, "d1", "create", "ada"]) == 0
    capsys.readouterr()
    assert main([*data, "d1", "create", "tom"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "System limit reached: databases per account (1)" in err


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[httpx.Client]:
    monkeypatch.setattr(limits, "D1_MAX_DATABASES_PER_ACCOUNT", 1)
    app = build_server_app(tmp_path / "served", TEST_TOKEN, d1_engine="sqlite")
    with LoopbackServer(app) as running, httpx.Client(base_url=running.base_url, timeout=60,
                                                      headers={"Authorization": f"Bearer {TEST_TOKEN}"}) as client:
        yield client


def test_the_rest_route_answers_code_7406(served: httpx.Client) -> None:
    assert served.post("/accounts/acc/d1/database", json={"name": "ada"}).status_code == 200
    refused = served.post("/accounts/acc/d1/database", json={"name": "tom"})
    assert refused.status_code == 400
    assert refused.json()["errors"] == [{"code": 7406, "message": "System limit reached: databases per account (1)"}]
    names = [d["name"] for d in served.get("/accounts/acc/d1/database").json()["result"]]
    assert names == ["ada"]


def test_an_import_over_5_gb_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    data = ["--data", str(tmp_path / "data")]
    assert main([*data, "d1", "create", "ada"]) == 0
    big = tmp_path / "big.sql"
    with open(big, "wb") as sparse:  # 5 GB and one byte, of which nothing is on the disk
        sparse.truncate(limits.D1_MAX_IMPORT_BYTES + 1)
    read: list[Path] = []
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: read.append(self) or "")
    capsys.readouterr()
    assert main([*data, "d1", "execute", "ada", "--file", str(big)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "the import file is 5,000,000,001 bytes" in err and "at most 5,000,000,000" in err
    assert big not in read


def test_the_import_limit_is_a_bound_not_a_guess() -> None:
    d1_account_limits.check_import_size(10, limit=10)
    with pytest.raises(D1SystemLimit) as refused:
        d1_account_limits.check_import_size(11, limit=10)
    assert refused.value.code == d1_account_limits.CODE_IMPORT_TOO_LARGE
    d1_account_limits.check_database_count(9, limit=10)
    with pytest.raises(D1SystemLimit):
        d1_account_limits.check_database_count(10, limit=10)
