"""The command line says what it does: an NPC id that names no one is refused with the likeliest NPC meant (by
role, name or alias with or without "the", by case, one typo away), exit 2; `remember` and `stats` print text for
people and JSON only with `--json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.settings import HASHING_MODEL

FAKE = ["--model", HASHING_MODEL]


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    data = tmp_path / "inn"
    assert main(["--data", str(data), *FAKE, "npc", "ada", "--name", "Ada", "--role", "the innkeeper",
                 "--alias", "Old Ada"]) == 0
    remember = ["remember", "ada", "The cellar flooded again.", "--importance", "0.9"]
    assert main(["--data", str(data), *FAKE, *remember]) == 0
    return data


@pytest.mark.parametrize(("given", "hint"), [
    ("innkeeper", "; did you mean 'ada' (the innkeeper)?"),
    ("The Innkeeper", "; did you mean 'ada' (the innkeeper)?"),
    ("old ada", "; did you mean 'ada' (the innkeeper)?"),
    ("adaa", "; did you mean 'ada'?"),
    ("ghost", " (1 memories of other NPCs)"),
])
@pytest.mark.parametrize("verb", [["recall", "{npc}", "cellar"], ["memories", "{npc}"]])
def test_an_unknown_npc_exits_2_with_the_npc_meant(
    folder: Path, capsys: pytest.CaptureFixture[str], given: str, hint: str, verb: list[str]
) -> None:
    capsys.readouterr()
    argv = [part.format(npc=given) for part in verb]
    assert main(["--data", str(folder), *FAKE, *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == f"error: no memories of NPC {given!r}{hint}"


def test_a_known_npc_is_listed_and_recalled(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["--data", str(folder), *FAKE, "memories", "ada"]) == 0
    assert "The cellar flooded again." in capsys.readouterr().out
    assert main(["--data", str(folder), *FAKE, "recall", "ada", "cellar"]) == 0
    assert "The cellar flooded again." in capsys.readouterr().out


def test_remember_and_stats_print_json_only_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = ["--data", str(tmp_path / "d"), *FAKE]
    capsys.readouterr()
    assert main([*data, "remember", "bram", "Rain at last.", "--importance", "0.9"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("remembered bram-") and said.rstrip().endswith("in D1 and the index")
    assert main([*data, "stats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "{" not in lines[0] and any(line.split() == ["memories", "1"] for line in lines)
    assert main([*data, "remember", "bram", "Mud again.", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["indexed"] is False  # importance 0.5: D1 only
    assert main([*data, "stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["memories"] == 2
