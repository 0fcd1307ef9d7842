"""Every Vectorize and D1 verb of wrangler 4.50.0, unchanged, against `memory-sim serve` on loopback (conftest.py
installs it and starts the servers), checking what wrangler prints and what the server holds afterwards. The D1
verbs run on both engines; the Vectorize verbs on one server.

Each wrangler command is a Node.js process that mostly waits, so the three sessions (Vectorize, D1 on DuckDB, D1
on sqlite) run side by side, started together by the `sessions` fixture; each test waits for its own."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from wrangler_helpers import DOCS_ACCOUNT, TOKEN, WRANGLER_VERSION, Served

VECTORS = [
    {"id": "margaret-1", "values": [1.0, 0.0, 0.0], "metadata": {"npc": "margaret", "day": 3}},
    {"id": "tom-1", "values": [0.0, 1.0, 0.0], "metadata": {"npc": "tom", "day": 4}},
]
UPSERTED = [
    {"id": "tom-1", "values": [0.0, 0.6, 0.8], "metadata": {"npc": "tom", "day": 5}},
    {"id": "cora-1", "values": [0.0, 0.0, 1.0], "metadata": {"npc": "cora", "day": 6}},
]
SEED = """\
CREATE TABLE npcs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, mood REAL, portrait BLOB);
CREATE TABLE memories (id TEXT PRIMARY KEY, npc_id INTEGER NOT NULL REFERENCES npcs(id), content TEXT, day INTEGER);
CREATE INDEX memories_by_day ON memories(npc_id, day);
INSERT INTO npcs (name, mood, portrait) VALUES ('Margaret', 0.5, X'00FF'), ('Tom', -1.25, NULL), ('O''Brien', 2, NULL);
INSERT INTO memories VALUES ('m1', 1, 'The blacksmith mended my oven door; for nothing.', 3), ('m2', 2, NULL, 4);
"""


pytestmark = pytest.mark.timeout(900)  # the first test waits for the sessions all started together


def json_of(output: str) -> Any:
    """The JSON wrangler printed after its progress lines."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(("{", "[")))
    return json.loads("\n".join(lines[start:]))


def ndjson(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


@pytest.fixture(scope="module")
def sessions(servers: dict[str, Served]) -> Iterator[dict[str, Future[None]]]:
    with ThreadPoolExecutor(5) as pool:
        yield {"vectorize": pool.submit(vectorize_session, servers["duckdb"]),
               "duckdb": pool.submit(d1_session, servers["duckdb"]),
               "sqlite": pool.submit(d1_session, servers["sqlite"]),
               "readme": pool.submit(readme_session, servers["sqlite"]),
               "migrations": pool.submit(migrations_session, servers["sqlite"])}


def test_vectorize_verbs(sessions: dict[str, Future[None]]) -> None:
    sessions["vectorize"].result()


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_d1_verbs(sessions: dict[str, Future[None]], engine: str) -> None:
    sessions[engine].result()


def test_d1_migrations_insights_and_delete(sessions: dict[str, Future[None]]) -> None:
    sessions["migrations"].result()


def test_readme_example_runs_as_written(sessions: dict[str, Future[None]]) -> None:
    sessions["readme"].result()


def readme_session(served: Served) -> None:
    """README's "Use wrangler against the local server" block, run by bash with the server's real port, the
    suite's token and wrangler from the cache in place of `npx` (which would fetch it)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    section = readme[readme.index("### Use wrangler against the local server"):]
    block = section[section.index("```bash\n") + 8:section.index("```", section.index("```bash\n") + 8)]
    for variable in ("CLOUDFLARE_API_BASE_URL=", "CLOUDFLARE_API_TOKEN=", "CLOUDFLARE_ACCOUNT_ID="):
        assert variable in block
    script = (block.replace("http://127.0.0.1:8787/client/v4", served.base_url).replace("my-token", TOKEN)
              .replace("my-account", DOCS_ACCOUNT)
              .replace(f"npx wrangler@{WRANGLER_VERSION}", f"node {served.wrangler_js}"))
    work = served.work / "readme"
    work.mkdir()
    done = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=served.env(pointed=False), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (work / "village.sql").read_text().startswith("CREATE TABLE npcs")
    listed = httpx.get(f"{served.base_url}/accounts/{DOCS_ACCOUNT}/vectorize/v2/indexes",
                       headers={"Authorization": f"Bearer {TOKEN}"}).json()["result"]
    assert [index["name"] for index in listed] == ["memories"]


def vectorize_session(duck: Served) -> None:
    w = duck.wrangler
    assert "Successfully created a new Vectorize index: 'npc-memories'" in \
        w("vectorize", "create", "npc-memories", "--dimensions", "3", "--metric", "cosine")
    listed = json_of(w("vectorize", "list", "--json"))
    assert [(i["name"], i["config"]) for i in listed] == [("npc-memories", {"dimensions": 3, "metric": "cosine"})]
    assert "Successfully enqueued metadata index creation" in \
        w("vectorize", "create-metadata-index", "npc-memories", "--propertyName", "npc", "--type", "string")
    assert json_of(w("vectorize", "list-metadata-index", "npc-memories", "--json")) == \
        [{"propertyName": "npc", "indexType": "string"}]
    assert json_of(w("vectorize", "insert", "npc-memories", "--file", ndjson(duck.work / "v.ndjson", VECTORS),
                     "--json")) == {"index": "npc-memories", "count": 2}
    assert "Successfully enqueued 2 vectors into index 'npc-memories' for upsertion" in \
        w("vectorize", "upsert", "npc-memories", "--file", ndjson(duck.work / "u.ndjson", UPSERTED))
    assert json_of(w("vectorize", "info", "npc-memories", "--json"))["vectorCount"] == 3
    found = json_of(w("vectorize", "query", "npc-memories", "--vector", "0", "0.6", "0.8", "--top-k", "2",
                      "--return-metadata", "all"))
    assert [m["id"] for m in found["matches"]] == ["tom-1", "cora-1"]
    assert found["matches"][0]["metadata"] == {"npc": "tom", "day": 5}
    filtered = json_of(w("vectorize", "query", "npc-memories", "--vector", "1", "0", "0", "--filter",
                         '{"npc": "cora"}'))
    assert [m["id"] for m in filtered["matches"]] == ["cora-1"]
    got = json_of(w("vectorize", "get-vectors", "npc-memories", "--ids", "tom-1", "margaret-1"))
    assert {v["id"]: v["values"] for v in got} == {"tom-1": pytest.approx([0, 0.6, 0.8]), "margaret-1": [1, 0, 0]}
    ids = json_of(w("vectorize", "list-vectors", "npc-memories", "--json"))
    assert sorted(v["id"] for v in ids["vectors"]) == ["cora-1", "margaret-1", "tom-1"]
    assert "Successfully enqueued 1 vectors into index 'npc-memories' for deletion" in \
        w("vectorize", "delete-vectors", "npc-memories", "--ids", "margaret-1")
    left = duck.api("POST", "/vectorize/v2/indexes/npc-memories/get_by_ids",
                    json={"ids": ["margaret-1", "tom-1", "cora-1"]})
    assert sorted(v["id"] for v in left) == ["cora-1", "tom-1"]  # what the server holds afterwards
    missing = w("vectorize", "info", "no-such-index", ok=False)
    assert "not_found" in missing or "not found" in missing.lower()
    w("vectorize", "delete-metadata-index", "npc-memories", "--propertyName", "npc")
    assert duck.api("GET", "/vectorize/v2/indexes/npc-memories/metadata_index/list")["metadataIndexes"] == []
    assert "Deleted index npc-memories" in w("vectorize", "delete", "npc-memories", "--force")
    assert duck.api("GET", "/vectorize/v2/indexes") == []


def d1_session(served: Served) -> None:
    w = served.wrangler
    assert "Successfully created DB 'village'" in w("d1", "create", "village")
    listed = json_of(w("d1", "list", "--json"))
    database = next(d["uuid"] for d in listed if d["name"] == "village")
    assert json_of(w("d1", "info", "village", "--json"))["uuid"] == database
    seed = served.work / "seed.sql"
    seed.write_text(SEED)
    ran = w("d1", "execute", "village", "--remote", "--file", str(seed))
    assert "Executed 5 queries" in ran and "Database is currently at bookmark" in ran
    selected = json_of(w("d1", "execute", "village", "--remote", "--json", "--command",
                         "SELECT name, mood FROM npcs ORDER BY id"))
    assert selected[0]["results"] == [{"name": "Margaret", "mood": 0.5}, {"name": "Tom", "mood": -1.25},
                                      {"name": "O'Brien", "mood": 2}]
    failed = w("d1", "execute", "village", "--remote", "--command", "SELECT * FROM nowhere", ok=False)
    assert "nowhere" in failed and "7500" in failed  # the error in Cloudflare's envelope, as wrangler shows it

    dump = served.work / "dump.sql"
    assert "Downloaded to" in w("d1", "export", "village", "--remote", "--output", str(dump))
    assert dump.read_text().startswith("CREATE TABLE npcs")
    w("d1", "create", "village-copy")
    assert "Executed" in w("d1", "execute", "village-copy", "--remote", "--file", str(dump))
    copy = served.api("GET", "/d1/database", params={"name": "village-copy"})[0]["uuid"]
    for sql in ("SELECT type, name, sql FROM sqlite_master ORDER BY name", "SELECT * FROM memories ORDER BY id",
                "SELECT id, name, mood, hex(portrait) AS p FROM npcs ORDER BY id"):
        assert served.query(copy, sql) == served.query(database, sql), sql

    bookmark = json_of(w("d1", "time-travel", "info", "village", "--json"))["bookmark"]
    moment = datetime.now(UTC)
    time.sleep(1.1)  # the timestamp below must lie between the two states
    w("d1", "execute", "village", "--remote", "--command", "DELETE FROM memories; UPDATE npcs SET mood = 0")
    assert served.query(database, "SELECT count(*) AS n FROM memories") == [{"n": 0}]
    restored = w("d1", "time-travel", "restore", "village", "--timestamp", moment.isoformat(timespec="milliseconds"))
    assert "restored back to bookmark" in restored
    assert served.query(database, "SELECT count(*) AS n FROM memories") == [{"n": 2}]
    before = restored.split("To undo this operation, you can restore to the previous bookmark: ")[1].split()[0]
    undone = json_of(w("d1", "time-travel", "restore", "village", "--bookmark", before, "--json"))
    assert undone["previous_bookmark"] and undone["bookmark"]
    assert served.query(database, "SELECT count(*) AS n FROM memories") == [{"n": 0}]  # the restore undone
    w("d1", "time-travel", "restore", "village", "--bookmark", bookmark)
    assert served.query(database, "SELECT mood FROM npcs ORDER BY id") == [{"mood": 0.5}, {"mood": -1.25}, {"mood": 2}]

    bad = served.work / "bad.sql"
    bad.write_text("INSERT INTO npcs (name) VALUES ('lost');\nINSERT INTO nowhere VALUES (1);\n")
    assert "nowhere" in w("d1", "execute", "village", "--remote", "--file", str(bad), ok=False)
    assert served.query(database, "SELECT count(*) AS n FROM npcs WHERE name = 'lost'") == [{"n": 0}]
    assert "not a kept state" in w("d1", "time-travel", "restore", "village", "--bookmark", "nope", ok=False)


def migrations_session(served: Served) -> None:
    """`d1 migrations list|apply --remote` from a project's wrangler.json, `d1 insights`, `d1 delete`."""
    project = served.work / "project"
    (project / "migrations").mkdir(parents=True)
    made = served.wrangler("d1", "create", "ledger")
    database = made.split('"database_id": "')[1].split('"')[0]
    (project / "wrangler.json").write_text(json.dumps({"name": "village", "d1_databases": [
        {"binding": "DB", "database_name": "ledger", "database_id": database, "migrations_dir": "migrations"}]}))
    (project / "migrations" / "0001_npcs.sql").write_text("CREATE TABLE npcs (id INTEGER PRIMARY KEY, name TEXT);\n")
    (project / "migrations" / "0002_seed.sql").write_text("INSERT INTO npcs (name) VALUES ('Margaret');\n")
    w = served.wrangler
    listed = w("d1", "migrations", "list", "ledger", "--remote", "--cwd", str(project))
    assert "0001_npcs.sql" in listed and "0002_seed.sql" in listed
    assert "0002_seed.sql" in w("d1", "migrations", "apply", "ledger", "--remote", "--cwd", str(project))
    assert served.query(database, "SELECT name FROM npcs") == [{"name": "Margaret"}]
    assert "No migrations to apply" in w("d1", "migrations", "list", "ledger", "--remote", "--cwd", str(project))
    assert json_of(w("d1", "insights", "ledger", "--json")) == []  # no analytics kept here: an empty answer
    assert "Deleted 'ledger' successfully" in w("d1", "delete", "ledger", "-y")
    assert served.api("GET", "/d1/database", params={"name": "ledger"}) == []
