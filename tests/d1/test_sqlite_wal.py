"""The sqlite engine in WAL mode: `synchronous` NORMAL by default and FULL by setting; a kill -9 loses no
acknowledged commit (the -wal the dead process left is replayed at the next open); a backup copies what is still
in the -wal into one self-contained file; deleting or replacing a database takes its -wal and -shm with it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory_sim.builder import local_d1_account, open_d1_account
from memory_sim.errors import ConfigError
from memory_sim.settings import Settings, SettingsError


def pragma(db_file: Path, name: str) -> object:
    conn = sqlite3.connect(str(db_file))
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        conn.close()


def test_a_database_file_is_in_wal_mode_with_synchronous_normal_by_default(tmp_path: Path) -> None:
    account = local_d1_account(tmp_path, "sqlite")
    db = account.create("village")
    db.exec("CREATE TABLE t (x INTEGER)")
    db.prepare("INSERT INTO t (x) VALUES (?)").bind(1).run()
    assert db._engine.durability == ("wal", 1)  # type: ignore[attr-defined]  # 1: NORMAL
    assert Path(str(account.path("village")) + "-wal").exists()  # the commit went to the log
    db.close()
    assert pragma(account.path("village"), "journal_mode") == "wal"  # kept in the file's header
    assert not Path(str(account.path("village")) + "-wal").exists()  # folded back at the last close


def test_the_full_setting_syncs_each_commit(tmp_path: Path) -> None:
    settings = Settings.load(environ={"MEMORY_SIM_D1_SQLITE_SYNCHRONOUS": "full"}, data_dir=tmp_path,
                             d1_engine="sqlite")
    assert settings.d1_sqlite_synchronous == "full"
    db = open_d1_account(settings).create("village")
    try:
        assert db._engine.durability == ("wal", 2)  # type: ignore[attr-defined]  # 2: FULL
    finally:
        db.close()


def test_an_unknown_synchronous_level_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="d1_sqlite_synchronous.*MEMORY_SIM_D1_SQLITE_SYNCHRONOUS.*'off'"):
        Settings.load(environ={"MEMORY_SIM_D1_SQLITE_SYNCHRONOUS": "off"}, data_dir=tmp_path)
    with pytest.raises(ConfigError, match="synchronous level 'off'"):
        local_d1_account(tmp_path, "sqlite", sqlite_synchronous="off")


WRITER = textwrap.dedent("""
    import sys
    from memory_sim.builder import local_d1_account
    account = local_d1_account(sys.argv[1], "sqlite", sqlite_synchronous=sys.argv[2])
    db = account.create("village")
    db.exec("CREATE TABLE t (x INTEGER PRIMARY KEY, note TEXT)")
    n = 0
    while True:
        n += 1
        if n % 3:
            db.prepare("INSERT INTO t (x, note) VALUES (?, ?)").bind(n, "row %d" % n).run()
        else:  # a batch: one transaction of two rows, acknowledged together
            db.batch([db.prepare("INSERT INTO t (x, note) VALUES (?, ?)").bind(n, "a"),
                      db.prepare("UPDATE t SET note = ? WHERE x = ?").bind("row %d" % n, n)])
        print(n, flush=True)  # acknowledged: the commit returned
""")


@pytest.mark.parametrize("synchronous", ["normal", "full"])
def test_kill_9_loses_no_acknowledged_commit(tmp_path: Path, synchronous: str) -> None:
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), synchronous], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.stdout is not None
    acked = 0
    for line in child.stdout:
        acked = int(line)
        if acked >= 400:
            break
    wal = Path(str(local_d1_account(tmp_path, "sqlite").path("village")) + "-wal")
    assert wal.exists() and wal.stat().st_size > 0  # the commits are (at least partly) in the log only
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    db = local_d1_account(tmp_path, "sqlite").get("village")  # replays the -wal the dead process left
    try:
        rows = db.prepare("SELECT x, note FROM t ORDER BY x").raw()
    finally:
        db.close()
    assert len(rows) >= acked  # every acknowledged commit, and perhaps the one in flight
    assert all(note == f"row {x}" for x, note in rows[:acked])
    assert [x for x, _ in rows] == list(range(1, len(rows) + 1))


def test_a_backup_copies_what_is_still_in_the_wal_into_one_file(tmp_path: Path) -> None:
    account = local_d1_account(tmp_path / "live", "sqlite")
    db = account.create("village")
    db.exec("CREATE TABLE t (x INTEGER PRIMARY KEY, note TEXT)")
    db.batch([db.prepare("INSERT INTO t (note) VALUES (?)").bind(f"n{i}") for i in range(300)])
    assert Path(str(account.path("village")) + "-wal").stat().st_size > 0  # not yet folded into the file
    target = tmp_path / "copy" / "d1" / "village.sqlite"
    target.parent.mkdir(parents=True)
    counts = db.backup(target)
    db.prepare("INSERT INTO t (note) VALUES ('later')").run()  # after the copy: not in it
    assert counts == {"t": 300}
    assert sorted(p.name for p in target.parent.iterdir()) == ["village.sqlite"]  # no -wal to copy beside it
    assert pragma(target, "journal_mode") == "delete"  # self-contained
    copy = sqlite3.connect(str(target))
    assert copy.execute("SELECT count(*), max(note) FROM t").fetchone() == (300, "n99")
    copy.close()
    db.close()


def test_deleting_a_database_removes_its_wal_and_shm(tmp_path: Path) -> None:
    account = local_d1_account(tmp_path, "sqlite")
    db = account.create("village")
    db.exec("CREATE TABLE t (x INTEGER)")
    db.close()
    path = account.path("village")
    for suffix in ("-wal", "-shm"):  # as a process killed with the database open leaves them
        Path(str(path) + suffix).write_bytes(b"stale")
    account.delete("village")
    assert list(path.parent.iterdir()) == []
