"""Restore never copies what it has not checked (memory_sim/restore_check.py): a link anywhere in a backup, a file
grown past the manifest's size, a folder others can write or another user owns are refused before anything is
copied, and the data folder is left as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from damage_helpers import make_folder, open_folder

from memory_sim.backup import backup, restore
from memory_sim.cli import main
from memory_sim.errors import BackupError


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    data, dest = tmp_path / "data", tmp_path / "copy"
    make_folder(data)
    with open_folder(data) as env:  # type: ignore[attr-defined]
        backup(env, dest)
    return data, dest


def refused_before_any_copy(tmp_path: Path, data: Path, dest: Path, match: str) -> None:
    before = files_of(data)
    with pytest.raises(BackupError, match=match):
        restore(dest, data)
    assert files_of(data) == before
    assert not [p for p in tmp_path.iterdir() if ".restoring-" in p.name]  # no staging copy was even begun


def test_a_link_to_a_big_folder_is_refused_before_any_copy(tmp_path: Path, folders: tuple[Path, Path]) -> None:
    data, dest = folders
    big = tmp_path / "elsewhere"
    big.mkdir()
    (big / "blob.bin").write_bytes(b"\0" * 20_000_000)
    (dest / "vectorize" / "more").symlink_to(big, target_is_directory=True)
    refused_before_any_copy(tmp_path, data, dest, r"vectorize/more is a symbolic link")


def test_a_loop_link_and_a_linked_file_are_refused(tmp_path: Path, folders: tuple[Path, Path]) -> None:
    data, dest = folders
    (dest / "d1" / "loop").symlink_to(dest, target_is_directory=True)
    refused_before_any_copy(tmp_path, data, dest, r"d1/loop is a symbolic link")
    (dest / "d1" / "loop").unlink()
    database = dest / "d1" / "memory.duckdb"
    moved = tmp_path / "memory.duckdb"
    database.rename(moved)
    database.symlink_to(moved)  # the same bytes, through a link: still refused
    refused_before_any_copy(tmp_path, data, dest, r"d1/memory.duckdb is a symbolic link")


def test_a_file_grown_past_its_size_is_not_copied(tmp_path: Path, folders: tuple[Path, Path]) -> None:
    data, dest = folders
    with (dest / "d1" / "memory.duckdb").open("ab") as grown:
        grown.write(b"\0" * 5_000_000)
    refused_before_any_copy(tmp_path, data, dest, r"memory.duckdb differ from their SHA-256 \(not of the size")


def test_a_folder_others_can_write_is_refused(tmp_path: Path, folders: tuple[Path, Path]) -> None:
    data, dest = folders
    os.chmod(dest / "vectorize", 0o777)
    refused_before_any_copy(tmp_path, data, dest, r"others can write vectorize \(mode 0777\)")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_a_file_another_user_owns_is_refused(tmp_path: Path, folders: tuple[Path, Path]) -> None:
    data, dest = folders
    os.chown(dest / "d1" / "memory.duckdb", 54321, 54321)
    refused_before_any_copy(tmp_path, data, dest, r"d1/memory.duckdb belongs to uid 54321")


def test_the_cli_says_when_a_restore_is_unverified(tmp_path: Path, folders: tuple[Path, Path],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import json

    data, dest = folders
    manifest = dest / "memory-sim-backup.json"
    fields = json.loads(manifest.read_text("utf-8"))
    manifest.write_text(json.dumps({**fields, "files": {}, "sizes": {}, "format": 1}), "utf-8")
    assert main(["--data", str(data), "restore", str(dest)]) == 2
    assert "--unverified" in capsys.readouterr().err
    assert main(["--data", str(data), "restore", str(dest), "--unverified"]) == 0
    assert "UNVERIFIED" in capsys.readouterr().out
