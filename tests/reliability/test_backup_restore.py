"""`memory-sim backup DEST` / `restore SRC` and memory_sim/backup.py, on the real backends: a consistent copy of a
whole data folder taken from the live Env (D1 through its engine's own copy, the index settled and copied, the
cache through sqlite3's backup API), verified by reopening it; a restore that verifies, swaps the copy in and keeps
the old folder, and refuses while another process has the folder open."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from damage_helpers import damage, make_folder, memory, open_folder

from memory_sim.backup import MANIFEST, Manifest, backup, restore, verify_copy
from memory_sim.check import check
from memory_sim.cli import main
from memory_sim.embedding.cache import EmbeddingCache
from memory_sim.errors import BackupError, DataInUseError
from memory_sim.memory.ledger import store
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

ROOT = Path(__file__).resolve().parents[2]


def snapshot_of(data: Path, engine: str = "duckdb") -> tuple[list[str], list[str], list[tuple[str, float]]]:
    """What a user would compare: the memories in D1, the vectors in the index, and a recall's answer."""
    with open_folder(data, engine) as env:  # type: ignore[attr-defined]
        system = MemorySystem(env, clock=SimClock())
        memories = sorted(m.id for m in store.all_memories(env.DB))
        vectors = sorted(env.VECTORIZE.list_vectors(1000).ids)
        found = [(r.id, round(r.score, 5)) for r in system.recall("margaret", "the oven door", top_k=4, mode="vector")]
        assert check(env).clean
    return memories, vectors, found


def add_cache(data: Path, count: int = 25) -> None:
    with EmbeddingCache(data / "embeddings.sqlite") as cache:
        cache.put_many("m", "cls", [f"text {i}" for i in range(count)], np.ones((count, 8), dtype=np.float32))


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_backup_of_a_live_env_reopens_with_the_same_memories_vectors_and_answers(tmp_path: Path, engine: str) -> None:
    data, dest = tmp_path / "data", tmp_path / "backups" / "monday"
    make_folder(data, engine=engine)
    add_cache(data)
    with open_folder(data, engine) as env:  # type: ignore[attr-defined]
        system = MemorySystem(env, clock=SimClock())
        system.remember_many([memory(i) for i in range(12, 16)])
        manifest = backup(env, dest)  # the Env stays open and in use
        system.remember_many([memory(i) for i in range(16, 20)])  # later writes are not in the backup
    assert manifest.memories == 16 and manifest.vectors == {"memories": 8} and manifest.cache_entries == 25
    assert manifest.databases[f"{engine}:memory"]["short_term_memories"] == 16
    assert Manifest.read(dest).to_json() == manifest.to_json()
    memories, vectors, found = snapshot_of(dest, engine)
    assert len(memories) == 16 and len(vectors) == 8 and found
    live_memories, _, _ = snapshot_of(data, engine)
    assert set(memories) < set(live_memories) and len(live_memories) == 20
    with EmbeddingCache(dest / "embeddings.sqlite") as cache:
        assert cache.count() == 25


def test_a_backup_answers_as_the_folder_did(tmp_path: Path) -> None:
    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data, 20)
    with open_folder(data) as env:  # type: ignore[attr-defined]
        backup(env, dest)
    assert snapshot_of(dest) == snapshot_of(data)


def test_backup_refuses_a_destination_that_holds_something(tmp_path: Path) -> None:
    data, dest = tmp_path / "data", tmp_path / "dest"
    make_folder(data)
    dest.mkdir()
    (dest / "precious.txt").write_text("keep me")
    with open_folder(data) as env, pytest.raises(BackupError, match="not an empty folder"):  # type: ignore[attr-defined]
        backup(env, dest)
    assert [p.name for p in dest.iterdir()] == ["precious.txt"]
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_verification_finds_a_copy_that_differs(tmp_path: Path) -> None:
    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data)
    with open_folder(data) as env:  # type: ignore[attr-defined]
        manifest = backup(env, dest)
    verify_copy(dest, manifest)
    manifest.databases["duckdb:memory"]["short_term_memories"] += 1  # as if a row had been lost in the copy
    with pytest.raises(BackupError, match="D1 memory differs in short_term_memories"):
        verify_copy(dest, manifest)
    manifest.vectors["memories"] += 1
    with pytest.raises(BackupError, match="index memories has 6 vectors"):
        verify_copy(dest, manifest)


def test_restore_brings_back_a_folder_whose_d1_is_damaged_and_keeps_the_old_one(tmp_path: Path) -> None:
    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data)
    with open_folder(data) as env:  # type: ignore[attr-defined]
        backup(env, dest)
    before = snapshot_of(data)
    damaged = damage(data / "d1" / "memory.duckdb", "garbage")
    report = restore(dest, data)
    assert snapshot_of(data) == before
    assert report.previous is not None and report.previous.name.startswith("data.before-restore-")
    assert (report.previous / "d1" / "memory.duckdb").read_bytes() == damaged  # kept, never deleted
    assert not (data / MANIFEST).exists() and (dest / MANIFEST).exists()  # the backup itself is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy", "data", report.previous.name]


def test_restore_refuses_a_backup_that_does_not_verify_and_changes_nothing(tmp_path: Path) -> None:
    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data)
    with open_folder(data) as env:  # type: ignore[attr-defined]
        backup(env, dest)
    damage(dest / "d1" / "memory.duckdb", "truncate")
    files_before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    with pytest.raises(BackupError, match="memory.duckdb differ from their SHA-256"):
        restore(dest, data)
    assert {p: p.read_bytes() for p in data.rglob("*") if p.is_file()} == files_before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy", "data"]
    with pytest.raises(BackupError, match="not a memory-sim backup"):
        restore(data, tmp_path / "elsewhere")


HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, {helpers!r})
    from damage_helpers import open_folder
    env = open_folder(Path({data!r}))
    print("open", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    env.close()
    """
)


def test_restore_refuses_while_another_process_has_the_folder_open(tmp_path: Path) -> None:
    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data)
    with open_folder(data) as env:  # type: ignore[attr-defined]
        backup(env, dest)
    script = HOLDER.format(helpers=str(Path(__file__).parent), data=str(data))
    holder = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              cwd=ROOT)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(DataInUseError, match="in use"):
            restore(dest, data)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["copy", "data"]
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
    restore(dest, data)  # once the owner has gone


def test_cli_backup_and_restore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, dest = tmp_path / "data", tmp_path / "copy"
    ids = make_folder(data)
    assert main(["--data", str(data), "backup", str(dest), "--json"]) == 0
    manifest = json.loads(capsys.readouterr().out)
    assert manifest["databases"]["duckdb:memory"]["short_term_memories"] == len(ids)
    assert main(["--data", str(data), "backup", str(dest)]) == 2
    assert "already exists" in capsys.readouterr().err
    damage(data / "d1" / "memory.duckdb", "zero")
    assert main(["--data", str(data), "check"]) == 2
    assert "memory-sim restore" in capsys.readouterr().err
    assert main(["--data", str(data), "restore", str(dest)]) == 0
    assert "restored" in capsys.readouterr().out
    assert main(["--data", str(data), "check"]) == 0


def test_backup_soon_runs_between_the_jobs_of_a_running_service(tmp_path: Path) -> None:
    from memory_sim.backup import backup_soon
    from memory_sim.scheduling import WorldClock, start_service

    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data)
    with open_folder(data) as env:  # type: ignore[attr-defined]
        system = MemorySystem(env, clock=SimClock())
        system.clock = WorldClock(30 * 86400.0, scale=3600.0)  # an hour of world time per second: jobs are due
        scheduler = start_service(system, scale=3600.0)
        try:
            manifest = backup_soon(scheduler, system, dest).result(timeout=120)
        finally:
            scheduler.shutdown(wait=True)
    assert manifest.memories == 12
    assert Manifest.read(dest).to_json() == manifest.to_json()
    memories, vectors, _ = snapshot_of(dest)
    assert len(memories) == 12 and len(vectors) == manifest.vectors["memories"]


# --- what a restore verifies: every file's SHA-256, every table read ------------------------------------------


def flip_bytes(path: Path, runs: int = 8, width: int = 16) -> None:
    """Inverts `runs` runs of `width` bytes spread over the file's second half (its header left whole, so that
    the file still opens): what bit rot or a bad copy does."""
    data = bytearray(path.read_bytes())
    step = len(data) // 2 // runs
    for run in range(runs):
        start = len(data) // 2 + run * step
        data[start : start + width] = bytes(b ^ 0xFF for b in data[start : start + width])
    path.write_bytes(bytes(data))


def files_of(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_restore_refuses_a_backup_with_flipped_bytes_and_swaps_nothing(tmp_path: Path, engine: str) -> None:
    from memory_sim.builder import local_d1_account

    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data, 40, engine=engine)
    with open_folder(data, engine) as env:  # type: ignore[attr-defined]
        manifest = backup(env, dest)
    d1_file = local_d1_account(dest, engine).path("memory")
    assert manifest.files[d1_file.relative_to(dest).as_posix()]  # every file's SHA-256 is in the manifest
    flip_bytes(d1_file)
    before = files_of(data)
    with pytest.raises(BackupError) as refused:
        restore(dest, data)
    message = str(refused.value)
    assert "SHA-256" in message and d1_file.name in message and "\n" not in message
    assert files_of(data) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy", "data"]


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_restore_refuses_a_backup_whose_rows_were_rewritten_with_the_counts_unchanged(tmp_path: Path,
                                                                                     engine: str) -> None:
    from memory_sim.builder import local_d1_account

    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data, engine=engine)
    with open_folder(data, engine) as env:  # type: ignore[attr-defined]
        backup(env, dest)
    db = local_d1_account(dest, engine).get("memory")
    try:
        db.prepare("UPDATE short_term_memories SET content = 'Tom burnt the bakery down'").run()
    finally:
        db.close()
    before = files_of(data)
    with pytest.raises(BackupError, match="SHA-256"):
        restore(dest, data)
    assert files_of(data) == before


def counts_but_damaged(d1_file: Path, engine: str = "duckdb") -> bool:
    """Damages one DuckDB block after another (64 bytes past its checksum) until the file opens and counts its
    rows as before, yet a table's rows no longer read; True when such a block was found (the file left so)."""
    from memory_sim.builder import local_d1_account

    whole = d1_file.read_bytes()
    for start in range(12288 + 64, len(whole), 262144):  # DuckDB: 3 header blocks of 4 KiB, then 256 KiB blocks
        raw = bytearray(whole)
        raw[start : start + 64] = bytes(b ^ 0xFF for b in raw[start : start + 64])
        d1_file.write_bytes(bytes(raw))
        try:
            db = local_d1_account(d1_file.parent.parent, engine).get("memory")
        except Exception:  # noqa: BLE001 - this block breaks the open: counting would catch it, try the next
            continue
        try:
            db.row_counts()
            db.prepare("SELECT * FROM short_term_memories").raw()
        except Exception:  # noqa: BLE001 - counted before? then reading is what finds it
            try:
                db.row_counts()
                return True
            except Exception:  # noqa: BLE001
                continue
        finally:
            db.close()
    return False


def test_restore_reads_every_table_before_the_swap(tmp_path: Path) -> None:
    """A D1 file damaged before its checksum was taken (a manifest rewritten to match) whose rows still count as
    they did fails the read of every row, and nothing is swapped."""
    import hashlib

    from memory_sim.builder import local_d1_account

    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data, 40)
    with open_folder(data) as env:  # type: ignore[attr-defined]
        manifest = backup(env, dest)
    d1_file = local_d1_account(dest, "duckdb").path("memory")
    assert counts_but_damaged(d1_file)
    manifest.files[d1_file.relative_to(dest).as_posix()] = hashlib.sha256(d1_file.read_bytes()).hexdigest()
    (dest / MANIFEST).write_text(json.dumps(manifest.to_json()), "utf-8")
    before = files_of(data)
    with pytest.raises(BackupError, match="D1 memory cannot be read"):
        restore(dest, data)
    assert files_of(data) == before


@pytest.mark.parametrize("inside", ["vectorize/bk", ".", "d1"])
def test_backup_into_the_data_folder_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       inside: str) -> None:
    data = tmp_path / "data"
    make_folder(data)
    dest = data / inside
    before = sorted(data.rglob("*"))
    with open_folder(data) as env, pytest.raises(BackupError, match="inside the data folder"):  # type: ignore[attr-defined]
        backup(env, dest)
    assert main(["--data", str(data), "backup", str(data / "bk2")]) == 2
    err = capsys.readouterr().err
    assert "inside the data folder" in err and err.count("\n") == 1 and len(err) < 400
    assert sorted(data.rglob("*")) == before  # nothing copied into it


def test_a_backup_from_before_checksums_restores_only_unverified(tmp_path: Path) -> None:
    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data)
    with open_folder(data) as env:  # type: ignore[attr-defined]
        backup(env, dest)
    fields = json.loads((dest / MANIFEST).read_text("utf-8"))
    fields.pop("files")
    (dest / MANIFEST).write_text(json.dumps({**fields, "format": 1}), "utf-8")  # as the version before wrote it
    before = snapshot_of(data)
    with pytest.raises(BackupError, match="lists no SHA-256.*--unverified"):  # it would restore rewritten rows too
        restore(dest, data)
    report = restore(dest, data, unverified=True)
    assert report.manifest.files == {} and not report.verified and report.to_json()["verified"] is False
    assert snapshot_of(data) == before
