"""A token opens only its own accounts: the `TOKEN:ACCOUNT[+ACCOUNT...]` grammar of `--token` /
MEMORY_SIM_API_TOKEN, Cloudflare's 403 envelope on another account over every route and both ways a request is
served (the token gate, the query route answered before FastAPI's routing), and reads that leave nothing on disk."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from server_helpers import api_routes, route_request

from memory_sim.builder.server import build_server_app
from memory_sim.cli import main
from memory_sim.errors import ConfigError
from memory_sim.server.auth import parse_tokens
from memory_sim.server.fast_query import QueryAnswerer, QueryRoute
from memory_sim.server.loopback import LoopbackServer, free_port
from memory_sim.testing import TEST_TOKEN


# --- the grammar -----------------------------------------------------------------------------------------------
def test_entries_name_the_accounts_each_token_opens() -> None:
    table = parse_tokens("tok1:acctA+acctB, tok2:acctC")
    assert table.owners == {"tok1": {"acctA", "acctB"}, "tok2": {"acctC"}}
    assert parse_tokens(["tok1:a", "tok1:b,tok2:b"]).owners == {"tok1": {"a", "b"}, "tok2": {"b"}}  # repeated --token
    assert parse_tokens("s3cr+t/=:a").owners == {"s3cr+t/=": {"a"}}  # '+' splits accounts only, after the ':'
    assert "2 token(s)" in table.describe() and "3 account id(s)" in table.describe()


def test_a_lone_bare_token_opens_every_account_and_says_so() -> None:
    table = parse_tokens(" secret ")
    assert table.owners == {"secret": None} and "every account" in table.describe()
    assert table.refusal("Bearer secret", "any-account") is None


@pytest.mark.parametrize(("value", "says"), [
    ("tok1,tok2", "entry 1 of 2 names no account"),
    ("tok1:a,tok2", "entry 2 of 2 names no account"),
    ("tok1:", "invalid account id ''"),
    ("tok1:a++b", "invalid account id ''"),
    ("tok1:bad id", "invalid account id 'bad id'"),
    ("tok1:a:b", "invalid account id 'a:b'"),
    (":a", "a token is printable ASCII"),
    ("t\u00e9k:a", "a token is printable ASCII"),
    ("to k:a", "a token is printable ASCII"),
])
def test_malformed_values_are_one_clear_line_that_never_echoes_a_token(value: str, says: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_tokens(value)
    message = str(refused.value)
    assert says in message and "\n" not in message and "TOKEN:ACCOUNT[+ACCOUNT...]" in message
    assert "tok1" not in message and "tok2" not in message


def test_serve_refuses_a_malformed_value_and_documents_the_grammar(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    command = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())", "--data",
               str(tmp_path), "serve", "--port", str(free_port()), "--token", "tok1:acctA", "--token", "tok2"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)  # a server that starts fails here
    assert done.returncode == 2 and done.stderr.startswith("error: token entry 2 of 2 names no account"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "tok2" not in done.stderr
    assert not (tmp_path / "accounts").exists()
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "TOKEN:ACCOUNT[+ACCOUNT...]" in " ".join(capsys.readouterr().out.split())


# --- who may open what -----------------------------------------------------------------------------------------
def test_a_header_that_is_not_ascii_is_an_invalid_token_not_a_crash(tmp_path: Path) -> None:
    with LoopbackServer(build_server_app(tmp_path, "tok:a", d1_engine="sqlite")) as running:
        reply = httpx.get(f"{running.base_url}/accounts/a/d1/database", headers={"Authorization": b"Bearer t\xe9k"})
        assert reply.status_code == 403 and reply.json()["errors"][0]["code"] == 9109


@pytest.mark.parametrize(("path", "token", "status"), [
    ("/accounts/%42/d1/database", "tok-a", 403),  # %42 is B: the gate reads the path the router matches
    ("/accounts/%42/d1/database", "tok-b", 200),
    ("/accounts/A/../B/d1/database", "tok-a", 404),  # no route has a '/' in an account id
    ("/accounts/B/vectorize/v2/indexes/i%2Fx/query", "tok-a", 403),
])
def test_paths_written_oddly_still_name_the_account_the_router_serves(tmp_path: Path, path: str, token: str, status: int) -> None:
    import http.client

    with LoopbackServer(build_server_app(tmp_path, "tok-a:A,tok-b:B", d1_engine="sqlite")) as running:
        connection = http.client.HTTPConnection(running.host, running.port, timeout=600)  # sends the path as written
        connection.request("POST" if path.endswith("query") else "GET", "/client/v4" + path, body=b"{}",
                           headers={"Authorization": f"Bearer {token}"})
        reply = connection.getresponse()
        assert reply.status == status, reply.read()
        connection.close()


class CountingAnswerer(QueryAnswerer):
    """Counts the queries the fast query route answers (the FastAPI route does not call the answerer)."""

    calls = 0

    def __call__(self, *args: Any) -> tuple[int, bytes]:
        self.calls += 1
        return super().__call__(*args)


def _ownerships(tokens: int, accounts: int) -> st.SearchStrategy[list[list[bool]]]:
    row = st.lists(st.booleans(), min_size=accounts, max_size=accounts).filter(any)
    return st.lists(row, min_size=tokens, max_size=tokens)


OWNERSHIPS = st.integers(1, 3).flatmap(lambda n: st.integers(1, 3).flatmap(lambda m: _ownerships(n, m)))


# no shrinking: each example starts a server, and a failing pair names itself in the assertion message
@settings(max_examples=8, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])
@given(owns=OWNERSHIPS)
def test_every_route_opens_only_the_accounts_a_token_owns(owns: list[list[bool]]) -> None:
    """N tokens x M accounts, every route of the OpenAPI description, the query route answered before FastAPI's
    routing included: an owned pair passes the gate; any other gets 403 code 10000 and changes nothing."""
    accounts = [f"acct-{j}" for j in range(len(owns[0]))]
    tokens = {f"tok-{i}": {a for a, mine in zip(accounts, row) if mine} for i, row in enumerate(owns)}
    spec = ",".join(f"{token}:{'+'.join(sorted(mine))}" for token, mine in tokens.items())
    with tempfile.TemporaryDirectory() as folder:
        app = build_server_app(folder, spec, d1_engine="sqlite", fast_query=False)
        answerer = CountingAnswerer(app.state.accounts, spec)
        app.add_middleware(QueryRoute, answer=answerer)  # the fast path, counting what it answers
        with LoopbackServer(app) as running, httpx.Client(base_url=running.base_url) as client:
            databases = {account: _fill(client, account, tokens) for account in accounts}
            before = _files(Path(folder))
            fast_queries = _check_pairs(client, app, tokens, databases, owned=False)
            assert _files(Path(folder)) == before  # a refused request changed nothing, not even a file's size
            fast_queries += _check_pairs(client, app, tokens, databases, owned=True)
        assert answerer.calls == fast_queries > 0  # the fast query route was checked as well


def _fill(client: httpx.Client, account: str, tokens: dict[str, set[str]]) -> str:
    """An index `idx` and a database in `account`, made with a token that owns it (none: nothing to make)."""
    owner = next((token for token, mine in tokens.items() if account in mine), None)
    if owner is None:
        return "00000000-0000-0000-0000-000000000000"
    auth = {"Authorization": f"Bearer {owner}"}
    made = client.post(f"/accounts/{account}/vectorize/v2/indexes", headers=auth,
                       json={"name": "idx", "config": {"dimensions": 2, "metric": "cosine"}})
    assert made.status_code == 201, made.text
    created = client.post(f"/accounts/{account}/d1/database", headers=auth, json={"name": "db"})
    return str(created.json()["result"]["uuid"])


def _check_pairs(client: httpx.Client, app: Any, tokens: dict[str, set[str]], databases: dict[str, str], *, owned: bool) -> int:
    fast = 0
    for token, mine in tokens.items():
        for account, database in databases.items():
            if (account in mine) != owned:
                continue
            for method, template in api_routes(app):
                request = route_request(method, template, account, database)
                headers = {**request.pop("headers", {}), "Authorization": f"Bearer {token}"}
                variants = [{}, {"Connection": "close"}] if template.endswith("{name}/query") else [{}]
                for extra in variants:  # keep-alive and closing requests alike
                    reply = client.request(**request, headers={**headers, **extra})
                    fast += template.endswith("{name}/query")
                    _assert_gate(reply, owned, f"{token} {method} {request['url']}")
    return fast


def _assert_gate(reply: httpx.Response, owned: bool, what: str) -> None:
    body = reply.json()
    if owned:
        assert reply.status_code not in (401, 403), (what, reply.text)
        return
    assert reply.status_code == 403 and body["success"] is False and body["result"] is None, (what, reply.text)
    assert body["errors"] == [{"code": 10000, "message": "Authentication error"}], (what, reply.text)


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*")) if p.is_file()}


# --- reads create nothing --------------------------------------------------------------------------------------
def test_no_request_on_an_unknown_account_leaves_anything_on_disk(tmp_path: Path) -> None:
    """Every route on an account that has nothing yet, with a bare token (which opens every account id): only a
    valid index or database creation may create the account's folder."""
    app = build_server_app(tmp_path, TEST_TOKEN, d1_engine="sqlite")
    auth = {"Authorization": f"Bearer {TEST_TOKEN}"}
    creations = {("POST", "/client/v4/accounts/{account_id}/vectorize/v2/indexes"),
                 ("POST", "/client/v4/accounts/{account_id}/d1/database")}
    with LoopbackServer(app) as running, httpx.Client(base_url=running.base_url, headers=auth) as client:
        for number, (method, template) in enumerate(api_routes(app)):
            account = f"nobody-{number}"
            request = route_request(method, template, account, "00000000-0000-0000-0000-000000000000")
            if (method, template) in creations:
                request["json"] = {"name": "Not A Valid Name!", "config": {"dimensions": 2, "metric": "cosine"}}
            reply = client.request(**request)
            assert reply.status_code in (200, 400, 404), (method, template, reply.text)  # 200: empty lists
            assert not (tmp_path / "accounts").exists(), (method, template, sorted(tmp_path.rglob("*")))
        for method, template in sorted(creations):  # a valid creation is where an account's folder comes from
            assert client.request(**route_request(method, template, "maker", "")).status_code in (200, 201)
    assert (tmp_path / "accounts" / "maker" / "vectorize").is_dir() and (tmp_path / "accounts" / "maker" / "d1").is_dir()
