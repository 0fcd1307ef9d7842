"""D1 import (init, upload, ingest, poll) and export (a dump at a signed URL) through the official SDK, as wrangler
drives them: the URLs point back at the same loopback server, errors come in the envelope, a failing file changes
nothing, and an export re-imports into an identical database on both engines."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import cloudflare
import httpx
import pytest

from memory_sim.testing import TEST_TOKEN, ServerForTests, scratch_folder

SCHEMA_AND_ROWS = """\
CREATE TABLE npcs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, mood REAL, portrait BLOB);
CREATE TABLE memories (
    id TEXT PRIMARY KEY,
    npc_id INTEGER NOT NULL REFERENCES npcs(id),
    content TEXT DEFAULT 'a  b',  -- two spaces kept
    importance REAL,
    day INTEGER
);
CREATE INDEX memories_by_day ON memories(npc_id, day);
INSERT INTO npcs (name, mood, portrait)
    VALUES ('Margaret', 0.5, X'00FF10'), ('Tom', -1.25, NULL), ('Ōma ''Nan''', 1e100, X'');
INSERT INTO memories VALUES ('m1', 1, 'The blacksmith; mended my oven
door for nothing.', 0.85, 3), ('m2', 2, NULL, NULL, 4), ('m3', 1, '€ and 😀', 0.1, 9);
DELETE FROM npcs WHERE name = 'Tom' AND 0;
INSERT INTO npcs (name) VALUES ('gone');
DELETE FROM npcs WHERE name = 'gone';
"""


@pytest.fixture(scope="module", params=["sqlite", "duckdb"])
def engine_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerForTests]:
    with scratch_folder(tmp_path_factory.mktemp(f"files-{request.param}")) as folder, \
            ServerForTests(folder, d1_engine=request.param, time_travel={"interval_s": 0}) as running:
        yield running


@pytest.fixture
def client(engine_server: ServerForTests) -> Iterator[cloudflare.Cloudflare]:
    sdk = cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=engine_server.base_url, max_retries=0)
    yield sdk
    sdk.close()


def import_file(sdk: cloudflare.Cloudflare, account: str, database: str, sql: str) -> Any:
    """The whole import as wrangler runs it: init with the MD5, PUT to the upload URL (no token), ingest."""
    etag = hashlib.md5(sql.encode()).hexdigest()
    init = sdk.d1.database.import_(database, account_id=account, action="init", etag=etag)
    put = httpx.put(init.upload_url, content=sql.encode())
    assert put.status_code == 200 and put.headers["etag"] == f'"{etag}"', put.text
    return sdk.d1.database.import_(database, account_id=account, action="ingest", etag=etag, filename=init.filename)


def rows(sdk: cloudflare.Cloudflare, account: str, database: str, sql: str) -> list[dict[str, Any]]:
    return list(sdk.d1.database.query(database, account_id=account, sql=sql))[0].results


def snapshot(sdk: cloudflare.Cloudflare, account: str, database: str) -> dict[str, Any]:
    """Everything that makes two databases the same: schema text, rows with their types, the next AUTOINCREMENT id."""
    schema = rows(sdk, account, database, "SELECT type, name, tbl_name, sql FROM sqlite_master "
                                          "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
    typed = {
        "npcs": rows(sdk, account, database, "SELECT id, name, mood, hex(portrait) AS p, typeof(mood) AS tm, "
                                             "typeof(portrait) AS tp FROM npcs ORDER BY id"),
        "memories": rows(sdk, account, database, "SELECT *, typeof(content) AS tc, typeof(importance) AS ti "
                                                 "FROM memories ORDER BY id"),
    }
    sdk.d1.database.query(database, account_id=account, sql="INSERT INTO npcs (name) VALUES ('next')")
    next_id = rows(sdk, account, database, "SELECT id FROM npcs WHERE name = 'next'")
    return {"schema": schema, "rows": typed, "next_id": next_id}


def test_import_runs_the_file_and_poll_answers_it_again(client: cloudflare.Cloudflare,
                                                        engine_server: ServerForTests) -> None:
    account = engine_server.fresh_account_id()
    database = client.d1.database.create(account_id=account, name="village").uuid
    done = import_file(client, account, database, SCHEMA_AND_ROWS)
    assert done.success and done.status == "complete" and done.type == "import"
    assert done.result.num_queries == 8 and done.result.meta.rows_written >= 6 and done.result.final_bookmark
    assert done.at_bookmark and done.at_bookmark != done.result.final_bookmark
    assert [r["name"] for r in rows(client, account, database, "SELECT name FROM npcs ORDER BY id")] == \
        ["Margaret", "Tom", "Ōma 'Nan'"]
    polled = client.d1.database.import_(database, account_id=account, action="poll",
                                        current_bookmark=done.at_bookmark)
    assert polled.status == "complete" and polled.result.final_bookmark == done.result.final_bookmark
    etag = hashlib.md5(SCHEMA_AND_ROWS.encode()).hexdigest()
    with pytest.raises(cloudflare.BadRequestError, match="has not been uploaded"):  # ingested once: upload again
        client.d1.database.import_(database, account_id=account, action="ingest", etag=etag,
                                   filename=f"{database}-{etag}.sql")


def test_a_failing_file_changes_nothing(client: cloudflare.Cloudflare, engine_server: ServerForTests) -> None:
    account = engine_server.fresh_account_id()
    database = client.d1.database.create(account_id=account, name="village").uuid
    import_file(client, account, database, "CREATE TABLE t (v TEXT);\nINSERT INTO t VALUES ('kept');\n")
    lost = "INSERT INTO t VALUES ('lost');\nCREATE TABLE u (x INTEGER);\nINSERT INTO nowhere VALUES (1);\n"
    failed = import_file(client, account, database, lost)
    assert failed.success is False and failed.status == "error"
    assert "nowhere" in failed.error and "(statement 3)" in failed.error
    assert rows(client, account, database, "SELECT v FROM t") == [{"v": "kept"}]
    assert rows(client, account, database, "SELECT name FROM sqlite_master WHERE name = 'u'") == []


def test_export_reimports_into_an_identical_database(client: cloudflare.Cloudflare, engine_server: ServerForTests,
                                                     request: pytest.FixtureRequest) -> None:
    account = engine_server.fresh_account_id()
    source = client.d1.database.create(account_id=account, name="source").uuid
    assert import_file(client, account, source, SCHEMA_AND_ROWS).status == "complete"
    exported = client.d1.database.export(source, account_id=account, output_format="polling")
    assert exported.success and exported.status == "complete" and exported.at_bookmark
    url = urlsplit(exported.result.signed_url)
    assert (url.hostname, url.port) == ("127.0.0.1", engine_server.port)  # the same loopback server
    dump = httpx.get(exported.result.signed_url)  # no token: the URL is the signature
    assert dump.status_code == 200 and dump.text.startswith("CREATE TABLE npcs")
    copy = client.d1.database.create(account_id=account, name="copy").uuid
    assert import_file(client, account, copy, dump.text).status == "complete"
    copied, original = snapshot(client, account, copy), snapshot(client, account, source)
    if request.node.callspec.params["engine_server"] == "duckdb":  # keeps AUTOINCREMENT counters out of SQL's
        assert copied.pop("next_id") == [{"id": 4}] and original.pop("next_id") == [{"id": 5}]  # reach (docs)
    assert copied == original


def test_export_options(client: cloudflare.Cloudflare, engine_server: ServerForTests) -> None:
    account = engine_server.fresh_account_id()
    database = client.d1.database.create(account_id=account, name="village").uuid
    import_file(client, account, database, SCHEMA_AND_ROWS)

    def export(**options: Any) -> str:
        done = client.d1.database.export(database, account_id=account, output_format="polling",
                                         dump_options=options)
        return httpx.get(done.result.signed_url).text

    schema_only = export(no_data=True)
    assert "CREATE TABLE npcs" in schema_only and "CREATE INDEX memories_by_day" in schema_only
    assert "INSERT" not in schema_only
    data_only = export(no_schema=True, tables=["memories"])
    assert "CREATE" not in data_only and data_only.count('INSERT INTO "memories"') == 3 and "npcs" not in data_only
    with pytest.raises(cloudflare.BadRequestError) as both:
        export(no_schema=True, no_data=True)
    assert both.value.body["success"] is False and "both" in both.value.body["errors"][0]["message"]
    with pytest.raises(cloudflare.BadRequestError) as missing:
        export(tables=["nowhere"])
    assert missing.value.body["errors"][0] == {"code": 7500, "message": "D1_ERROR: no such table: nowhere"}


def test_import_and_export_errors_come_in_the_envelope(engine_server: ServerForTests) -> None:
    account = engine_server.fresh_account_id()
    auth = {"Authorization": f"Bearer {TEST_TOKEN}"}
    with httpx.Client(base_url=engine_server.base_url, headers=auth) as http:
        database = http.post(f"/accounts/{account}/d1/database", json={"name": "db"}).json()["result"]["uuid"]
        base = f"/accounts/{account}/d1/database/{database}"
        etag = hashlib.md5(b"SELECT 1;").hexdigest()
        cases = {
            ("POST", f"/accounts/{account}/d1/database/00000000-0000-0000-0000-000000000000/import"): (404, 7404),
            ("POST", f"/accounts/{account}/d1/database/00000000-0000-0000-0000-000000000000/export"): (404, 7404),
            ("GET", f"{base}/import"): (405, 10405),
            ("GET", f"{base}/export"): (405, 10405),
        }
        for (method, path), (status, code) in cases.items():
            answer = http.request(method, path, json={"action": "init", "etag": etag})
            assert answer.status_code == status and answer.json()["errors"][0]["code"] == code, (path, answer.text)
        bodies = [{"action": "init", "etag": "not-an-md5"}, {"action": "launch"}, {},
                  {"action": "ingest", "etag": etag, "filename": "never-uploaded.sql"},
                  {"action": "poll", "current_bookmark": "nope"}]
        for body in bodies:
            answer = http.post(f"{base}/import", json=body)
            envelope = answer.json()
            assert answer.status_code == 400 and envelope["success"] is False and envelope["result"] is None, body
            assert envelope["errors"][0]["code"] == 1002 and envelope["errors"][0]["message"], body
        assert http.post(f"{base}/export", json={"output_format": "zip"}).json()["errors"][0]["code"] == 1002
        init = http.post(f"{base}/import", json={"action": "init", "etag": etag}).json()["result"]
        assert httpx.put(init["upload_url"], content=b"SELECT 2;").headers["etag"] != f'"{etag}"'
        mismatch = http.post(f"{base}/import", json={"action": "ingest", "etag": etag, "filename": init["filename"]})
        assert mismatch.status_code == 400 and "MD5" in mismatch.json()["errors"][0]["message"]
    for method in ("PUT", "GET"):
        unknown = httpx.request(method, f"http://127.0.0.1:{engine_server.port}/transfers/made-up", content=b"x")
        assert unknown.status_code == 404 and unknown.json()["errors"][0]["code"] == 7404


def test_upload_and_download_urls_point_here_and_do_one_thing(client: cloudflare.Cloudflare,
                                                               engine_server: ServerForTests) -> None:
    account = engine_server.fresh_account_id()
    database = client.d1.database.create(account_id=account, name="db").uuid
    signed = client.d1.database.export(database, account_id=account, output_format="polling").result.signed_url
    assert httpx.put(signed, content=b"DROP TABLE x;").status_code == 404
    assert httpx.get(signed).status_code == 200
    upload = client.d1.database.import_(database, account_id=account, action="init", etag="0" * 32).upload_url
    assert (urlsplit(upload).hostname, urlsplit(upload).port) == ("127.0.0.1", engine_server.port)
    assert httpx.get(upload).status_code == 404  # an upload URL cannot be read
