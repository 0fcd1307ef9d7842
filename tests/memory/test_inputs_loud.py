"""Inputs that used to be accepted silently are refused in one line (issue section 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.errors import InvalidInput
from memory_sim.memory.models import ShortTermMemory, WorldTime

FAKE = ["--model", "fake/hashing"]


def test_about_as_one_string_is_refused_not_split_into_letters() -> None:
    with pytest.raises(InvalidInput, match="not one string"):
        ShortTermMemory("tom", "met Bram at the well", 0.5, WorldTime(1, 9), about="bram")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="list of NPC ids"):
        ShortTermMemory("tom", "met Bram at the well", 0.5, WorldTime(1, 9), about=5)  # type: ignore[arg-type]
    assert ShortTermMemory("tom", "met Bram", 0.5, WorldTime(1, 9), about=["bram"]).about == ("bram",)


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    assert main(["remember", "margaret", "Tom fixed my fence", "--importance", "0.9", "--data", str(data), *FAKE]) == 0
    return data


def test_recall_of_an_unknown_or_capitalised_npc_is_an_error(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["recall", "Margaret", "fence", "--data", str(folder), *FAKE]) == 2
    assert "did you mean 'margaret'" in capsys.readouterr().err
    assert main(["recall", "nobody", "fence", "--data", str(folder), *FAKE]) == 2
    assert "no memories of NPC 'nobody'" in capsys.readouterr().err
    assert main(["recall", "margaret", "fence", "--data", str(folder), *FAKE]) == 0
    assert "fence" in capsys.readouterr().out


def test_recall_day_without_weighted_is_an_error(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["recall", "margaret", "fence", "--day", "3", "--data", str(folder), *FAKE]) == 2
    assert "--day only counts with --weighted" in capsys.readouterr().err


def test_a_mistyped_data_folder_is_refused_and_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    typo = tmp_path / "dtaa"
    for verb in (["stats"], ["recall", "margaret", "fence"], ["consolidate"]):
        assert main([*verb, "--data", str(typo), *FAKE]) == 2
        assert "no data folder" in capsys.readouterr().err
    assert not typo.exists()
