"""Files on disk: persistence, the one-process lock, the account and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.errors import D1Error, DataInUseError
from memory_sim.local.d1.account import D1Account
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase


def test_duckdb_file_keeps_data_and_rowid_tables(tmp_path: Path) -> None:
    path = tmp_path / "town.duckdb"
    db = DuckDBDatabase(path)
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)\nINSERT INTO t (v) VALUES ('a')")
    db.close()
    again = DuckDBDatabase(path)
    assert again.prepare("INSERT INTO t (v) VALUES ('b')").run().meta.last_row_id == 2
    assert again.prepare("PRAGMA table_info(t)").raw()[0][1:3] == ["id", "INTEGER"]
    again.close()


def test_a_second_process_gets_data_in_use(tmp_path: Path) -> None:
    path = tmp_path / "town.duckdb"
    db = DuckDBDatabase(path)
    code = (
        "import sys\nfrom memory_sim.local.d1.duckdb_engine import DuckDBDatabase\nfrom memory_sim.errors import DataInUseError\n"
        f"try:\n    DuckDBDatabase({str(path)!r})\nexcept DataInUseError as e:\n    print(e); sys.exit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    db.close()
    assert done.returncode == 3, done.stderr
    assert "in use by another process" in done.stdout and "memory-sim serve" in done.stdout
    assert issubclass(DataInUseError, Exception)


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_account(tmp_path: Path, engine: str) -> None:
    account = D1Account(tmp_path, engine=engine)  # type: ignore[arg-type]
    account.create("town").close()
    assert account.list() == ["town"] and (tmp_path / "d1").is_dir()
    with pytest.raises(D1Error):
        account.create("town")
    account.get("town").close()
    account.delete("town")
    assert account.list() == []
    with pytest.raises(D1Error):
        account.get("town")


def test_cli_execute_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = str(tmp_path)
    assert main(["--data", data, "d1", "create", "town"]) == 0
    sql = "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a'); SELECT * FROM t"
    capsys.readouterr()
    assert main(["--data", data, "d1", "execute", "town", "--command", sql, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out[2]["results"] == [{"id": 1, "v": "a"}] and out[1]["meta"]["last_row_id"] == 1
    assert set(out[0]) == {"success", "meta", "results"}
    sql_file = tmp_path / "q.sql"
    sql_file.write_text("SELECT count(*) AS n FROM t;\n")
    assert main(["--data", data, "d1", "execute", "town", "--file", str(sql_file)]) == 0
    assert "n\n1" in capsys.readouterr().out
    assert main(["--data", data, "d1", "list"]) == 0 and capsys.readouterr().out.split() == ["town"]
    assert main(["--data", data, "d1", "execute", "town", "--command", "SELECT * FROM nowhere"]) == 2
    assert "D1_ERROR" in capsys.readouterr().err
    assert main(["--data", data, "d1", "delete", "town"]) == 0


def test_cli_sqlite_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = str(tmp_path)
    assert main(["--data", data, "d1", "--engine", "sqlite", "create", "town"]) == 0
    assert (tmp_path / "d1" / "town.sqlite").exists()
    assert main(["--data", data, "d1", "--engine", "sqlite", "execute", "town", "--command", "SELECT 7/2 AS q", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.split("\n", 1)[1])[0]["results"] == [{"q": 3}]


def test_a_no_op_ddl_statement_leaves_the_duckdb_ledger_as_it_was(tmp_path: Path) -> None:
    """Every open of a memory folder runs `CREATE TABLE IF NOT EXISTS ...`: nothing changes, the DDL ledger (which
    each open replays) included."""
    import duckdb

    path = tmp_path / "db.duckdb"
    for _ in range(3):
        db = DuckDBDatabase(path)
        db.prepare("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)").run()
        db.prepare("CREATE INDEX IF NOT EXISTS t_v ON t (v)").run()
        db.prepare("DROP TABLE IF EXISTS absent").run()
        db.prepare("INSERT INTO t (v) VALUES ('kept')").run()
        db.close()
    ledger = duckdb.connect(str(path), read_only=True)
    rows = ledger.execute("SELECT seq, sql FROM __sq_ddl ORDER BY seq").fetchall()
    ledger.close()
    assert rows == [(1, "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)"),
                    (2, "CREATE INDEX IF NOT EXISTS t_v ON t (v)")]
    db = DuckDBDatabase(path)  # the ledger still rebuilds the schema: the table, its index, its rows
    assert db.prepare("SELECT count(*) AS n FROM t").first("n") == 3
    assert db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all().results == [{"name": "t_v"}]
    db.close()


def test_opening_a_memory_folder_again_and_again_adds_nothing_to_the_ddl_ledger(tmp_path: Path) -> None:
    import duckdb

    from memory_sim.env import Env
    from memory_sim.memory.system import MemorySystem

    counts = []
    for _ in range(3):  # what every verb does: open the folder, check the schema is there
        with Env.local(tmp_path, embed_model="fake/hashing", serve_owner=False, d1_engine="duckdb") as env:
            MemorySystem(env, clock=lambda: 0.0)
        ledger = duckdb.connect(str(tmp_path / "d1" / "memory.duckdb"), read_only=True)
        counts.append(ledger.execute("SELECT count(*) FROM __sq_ddl").fetchone()[0])  # type: ignore[index]
        ledger.close()
    assert counts[0] > 0 and counts == [counts[0]] * 3, counts
