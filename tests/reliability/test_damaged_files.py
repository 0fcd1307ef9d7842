"""Damaged files in a data folder, on the real backends: the embedding cache (only a cache) is moved aside with a
warning and started afresh; damaged index files give one line naming the file and `check --repair`, which moves
the index aside and rebuilds it from D1; a damaged D1 file (the ledger) gives one line naming it and the way back
(`memory-sim restore`), never a raw sqlite3 or DuckDB traceback. Nothing damaged is ever deleted."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from damage_helpers import DAMAGES, DIMENSIONS, damage, make_folder, memory, open_folder, set_aside

from memory_sim.check import check, repair
from memory_sim.cli import main
from memory_sim.damage import run_with_index_rebuilt
from memory_sim.embedding.cache import EmbeddingCache
from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.env import Env
from memory_sim.errors import D1Damaged, D1Error, DamagedDataError, IndexDamaged, VectorizeUnavailable
from memory_sim.local.d1.account import D1Account
from memory_sim.memory.ledger import store
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock


def one_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


# --- the embedding cache: moved aside, started afresh -------------------------------------------------------


def filled_cache(path: Path, count: int = 40) -> None:
    with EmbeddingCache(path) as cache:
        cache.put_many("m", "cls", [f"text {i}" for i in range(count)], np.ones((count, 8), dtype=np.float32))


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_cache_is_moved_aside_with_a_warning_and_started_afresh(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "embeddings.sqlite"
    filled_cache(path)
    damaged = damage(path, how)
    with caplog.at_level(logging.WARNING), EmbeddingCache(path) as cache:
        assert cache.count() == 0
        cache.put_many("m", "cls", ["fresh"], np.ones((1, 8), dtype=np.float32))
        assert cache.get_many("m", "cls", ["fresh", "text 1"])[1] is None and cache.count() == 1
    [aside] = set_aside(tmp_path, "embeddings.sqlite")
    assert aside.read_bytes() == damaged  # kept as it was, for a look; never deleted
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert str(path) in warning.getMessage() and str(aside) in warning.getMessage()


def test_a_cache_that_is_only_locked_is_not_moved(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite"
    filled_cache(path)
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            EmbeddingCache(path)
    finally:
        holder.close()
    assert set_aside(tmp_path, "embeddings.sqlite") == []
    with EmbeddingCache(path) as cache:
        assert cache.count() == 40


@pytest.mark.parametrize("how", ["garbage", "zero"])
def test_commands_work_on_a_folder_with_a_damaged_cache(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path)
    # Unimportant memories are stored in D1 only: no model is loaded, but the Env opens the cache as ever.
    assert main(["--data", data, "remember", "margaret", "The bread was late today", "--importance", "0.2"]) == 0
    filled_cache(tmp_path / "embeddings.sqlite")
    damage(tmp_path / "embeddings.sqlite", how)
    with caplog.at_level(logging.WARNING):
        assert main(["--data", data, "check", "--repair"]) == 0
        assert main(["--data", data, "stats", "--json"]) == 0
    assert '"memories": 1' in capsys.readouterr().out
    assert len(set_aside(tmp_path, "embeddings.sqlite")) == 1
    assert sum("embedding cache" in r.getMessage() for r in caplog.records) == 1  # moved once, then healthy


# --- the index: one line, then rebuilt from D1 by check --repair -----------------------------------------------


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_index_files_give_one_line_naming_the_file_and_the_repair(tmp_path: Path, how: str) -> None:
    make_folder(tmp_path)
    chroma = tmp_path / "vectorize" / "chroma.sqlite3"
    damage(chroma, how)
    with pytest.raises(IndexDamaged) as raised:
        open_folder(tmp_path)
    error = raised.value
    assert isinstance(error, VectorizeUnavailable) and isinstance(error, DamagedDataError)
    text = one_line(str(error))
    assert str(chroma) in text and "memory-sim check --repair" in text and "from D1" in text
    assert error.path == tmp_path / "vectorize"


@pytest.mark.parametrize("how", DAMAGES)
def test_remember_on_a_damaged_index_is_refused_in_one_line_and_stores_nothing(
    tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = make_folder(tmp_path)
    damage(tmp_path / "vectorize" / "chroma.sqlite3", how)
    assert main(["--data", str(tmp_path), "remember", "margaret", "A new memory", "--importance", "0.9"]) == 2
    err = one_line(capsys.readouterr().err)
    assert err.startswith("error: ") and "chroma.sqlite3" in err and "memory-sim check --repair" in err
    db = D1Account(tmp_path).get("memory")
    try:
        assert sorted(r["id"] for r in db.prepare("SELECT id FROM short_term_memories").all().results) == ids
    finally:
        db.close()


@pytest.mark.parametrize("how", DAMAGES)
def test_repair_moves_the_damaged_index_aside_and_rebuilds_it_from_d1(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    ids = make_folder(tmp_path)
    damaged = damage(tmp_path / "vectorize" / "chroma.sqlite3", how)

    def check_and_repair(env):  # type: ignore[no-untyped-def]
        report = check(env)
        return report, repair(env, report), check(env)

    with caplog.at_level(logging.WARNING):
        before, fixed, after = run_with_index_rebuilt(lambda: open_folder(tmp_path), check_and_repair)
    assert before.vectors == 0 and len(before.missing) == before.due == len(ids) // 2
    assert fixed.upserted == len(ids) // 2 and after.clean and after.vectors == len(ids) // 2
    [aside] = set_aside(tmp_path, "vectorize")
    assert (aside / "chroma.sqlite3").read_bytes() == damaged  # kept whole, beside the rebuilt index
    assert any(str(aside) in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    with open_folder(tmp_path) as env:  # type: ignore[attr-defined]
        assert check(env).clean
        assert {v for v in env.VECTORIZE.list_vectors(1000).ids} == {m.id for m in store.memories_in_state(env.DB, ["indexed"])}


def test_damage_found_while_repairing_is_also_set_aside(tmp_path: Path) -> None:
    """Damage the index only shows when it is written to: the work runs again on a fresh index."""
    make_folder(tmp_path)
    calls: list[int] = []

    def work(env):  # type: ignore[no-untyped-def]
        calls.append(env.VECTORIZE.describe().vector_count)
        if len(calls) == 1:
            raise IndexDamaged("VECTOR_UPSERT", tmp_path / "vectorize", "found while writing")
        report = check(env)
        repair(env, report)
        return check(env)

    assert run_with_index_rebuilt(lambda: open_folder(tmp_path), work).clean
    assert calls == [6, 0] and len(set_aside(tmp_path, "vectorize")) == 1


def test_index_damaged_while_running_degrades_remember_and_nothing_acknowledged_is_lost(tmp_path: Path) -> None:
    """Damage that appears under a running process: remember still writes D1 and leaves the memory pending, with
    the damaged file and the fix in the outbox; after the repair, the retry job indexes it."""
    ids = make_folder(tmp_path)
    late = memory(101)
    with open_folder(tmp_path) as env:  # type: ignore[attr-defined]
        system = MemorySystem(env, clock=SimClock())
        damage(tmp_path / "vectorize" / "chroma.sqlite3", "garbage")
        assert system.remember(late) is False  # acknowledged: in D1, pending
        [outbox] = env.DB.prepare("SELECT memory_id, last_error FROM embedding_outbox").all().results
        assert outbox["memory_id"] == late.id
        assert "chroma.sqlite3 is damaged" in outbox["last_error"] and "check --repair" in outbox["last_error"]

    def repair_and_retry(env):  # type: ignore[no-untyped-def]
        repair(env, check(env))
        MemorySystem(env, clock=SimClock()).retry_pending(10**9)
        return check(env)

    assert run_with_index_rebuilt(lambda: open_folder(tmp_path), repair_and_retry).clean
    with open_folder(tmp_path) as env:  # type: ignore[attr-defined]
        assert sorted(m.id for m in store.all_memories(env.DB)) == sorted([*ids, late.id])
        assert late.id in env.VECTORIZE.list_vectors(1000).ids


@pytest.mark.slow
def test_cli_check_repair_rebuilds_a_damaged_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command a user runs: the folder's model is gone with its index, so the default model re-embeds D1."""
    ids = make_folder(tmp_path)
    damage(tmp_path / "vectorize" / "chroma.sqlite3", "truncate")
    data = str(tmp_path)
    assert main(["--data", data, "check"]) == 2
    assert "check --repair" in one_line(capsys.readouterr().err)
    assert main(["--data", data, "check", "--repair"]) == 0
    assert "now no drift" in capsys.readouterr().out
    assert main(["--data", data, "check", "--json"]) == 0
    assert f'"vectors": {len(ids) // 2}' in capsys.readouterr().out
    assert len(set_aside(tmp_path, "vectorize")) == 1


@pytest.mark.slow
@pytest.mark.parametrize("model", [[], ["--model", "fake/hashing"]], ids=["in place", "staged"])
def test_cli_reembed_rebuilds_a_damaged_index(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              model: list[str]) -> None:
    ids = make_folder(tmp_path)
    damage(tmp_path / "vectorize" / "chroma.sqlite3", "garbage")
    assert main(["--data", str(tmp_path), "reembed", *model]) == 0
    assert f'"reembedded": {len(ids) // 2}' in capsys.readouterr().out
    assert len(set_aside(tmp_path, "vectorize")) == 1


# --- D1, the ledger: one line naming the file and the way back ----------------------------------------------


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_d1_file_is_one_line_naming_it_and_restore(tmp_path: Path, engine: str, how: str) -> None:
    make_folder(tmp_path, engine=engine)
    path = D1Account(tmp_path, engine).path("memory")  # type: ignore[arg-type]
    damaged = damage(path, how)
    with pytest.raises(D1Damaged) as raised:
        open_folder(tmp_path, engine)
    error = raised.value
    assert isinstance(error, D1Error) and isinstance(error, DamagedDataError) and error.path == path
    text = one_line(str(error))
    assert text.startswith("D1_ERROR: the D1 database file") and str(path) in text
    assert "ledger" in text and "memory-sim restore" in text
    assert path.read_bytes() == damaged  # the ledger is never moved or rewritten: a person decides


@pytest.mark.parametrize("how", DAMAGES)
def test_cli_on_a_damaged_d1_prints_one_line_and_exits_2(
    tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    make_folder(tmp_path)
    damage(tmp_path / "d1" / "memory.duckdb", how)
    for verb in (["check", "--repair"], ["stats"], ["recall", "margaret", "Tom"]):
        assert main(["--data", str(tmp_path), *verb]) == 2
        err = one_line(capsys.readouterr().err)
        assert err.startswith("error: D1_ERROR: the D1 database file") and "memory-sim restore" in err
        assert "Traceback" not in err and "_duckdb" not in err


def test_a_new_sqlite_d1_file_is_written_out_so_an_empty_one_means_damage(tmp_path: Path) -> None:
    account = D1Account(tmp_path, "sqlite")
    account.create("fresh").close()
    assert account.path("fresh").stat().st_size > 0
    db = account.get("fresh")
    assert db.prepare("SELECT 1 AS one").first("one") == 1
    db.close()


def test_an_env_on_an_intact_folder_still_opens(tmp_path: Path) -> None:
    ids = make_folder(tmp_path)
    with Env.local(tmp_path, embedder=HashingEmbedder(DIMENSIONS)) as env:
        assert check(env).clean and len(store.all_memories(env.DB)) == len(ids)


# --- a real village folder (the bundled MiniLM), through the commands a user runs ------------------------------


@pytest.mark.slow
def test_a_village_folder_comes_back_from_each_kind_of_damage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    data, monday = tmp_path / "village", tmp_path / "monday"
    assert main(["demo", "--data", str(data), "--days", "2", "--npcs", "3"]) == 0
    question = ["--data", str(data), "recall", "margaret", "What does Margaret think of Tom?", "--json"]

    def answer() -> list[tuple[str, float]]:
        capsys.readouterr()
        assert main(question) == 0
        return [(r["id"], round(r["score"], 4)) for r in json.loads(capsys.readouterr().out)]

    first = answer()
    assert first and main(["--data", str(data), "backup", str(monday)]) == 0

    damage(data / "embeddings.sqlite", "garbage")  # the cache: a warning, and the same answer
    with caplog.at_level(logging.WARNING):
        assert answer() == first
    assert len(set_aside(data, "embeddings.sqlite")) == 1

    damage(data / "vectorize" / "chroma.sqlite3", "truncate")  # the index: one line, then rebuilt from D1
    capsys.readouterr()
    assert main(question) == 2 and "check --repair" in one_line(capsys.readouterr().err)
    assert main(["--data", str(data), "check", "--repair"]) == 0
    assert answer() == first

    damage(data / "d1" / "memory.duckdb", "garbage")  # the ledger: one line, then the backup restored
    capsys.readouterr()
    assert main(question) == 2 and "memory-sim restore" in one_line(capsys.readouterr().err)
    assert main(["--data", str(data), "restore", str(monday)]) == 0
    assert answer() == first
