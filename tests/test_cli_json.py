"""`--json` wherever a script reads the answer: every verb that prints a result takes it, before or after the verb."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_sim.cli import build_parser, main
from memory_sim.settings import HASHING_MODEL

# Verbs that serve until stopped and print no result: nothing for a script to read.
SERVICES = {"serve": "serves the REST API until stopped", "inspect": "serves the inspector until stopped"}


def verbs(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every leaf verb of the command line ("vectorize query", "stats", ...) with its parser."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        yield " ".join(path), parser
        return
    for name, sub in groups[0].choices.items():
        yield from verbs(sub, (*path, name))


def test_the_walk_sees_every_verb() -> None:
    found = dict(verbs(build_parser()))
    assert {"stats", "remember", "vectorize query", "d1 delete", "experiment report", "serve"} <= set(found)
    assert len(found) > 40


@pytest.mark.parametrize("verb", sorted(name for name, _ in verbs(build_parser())))
def test_every_verb_that_prints_a_result_takes_json_after_and_before_it(verb: str) -> None:
    parser = dict(verbs(build_parser()))[verb]
    takes = any("--json" in action.option_strings for action in parser._actions)
    assert takes is (verb not in SERVICES)
    if verb in SERVICES:
        return
    required = [a for a in parser._actions if not a.option_strings and a.required and a.dest != "help"]
    stand_ins = ["1" for _ in required]  # argparse checks no value's meaning before the types run: parse only
    try:
        after = build_parser().parse_args([*verb.split(), *stand_ins, "--json"])
        before = build_parser().parse_args(["--json", *verb.split(), *stand_ins])
    except Exception:  # a type that refuses "1" (a file that must exist, a vector): the flag's presence is enough
        return
    assert after.json is True and before.json_first is True


def test_stats_json_before_and_after_the_verb_say_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = str(tmp_path / "village")
    assert main(["--data", folder, "--model", HASHING_MODEL, "remember", "bram", "Rain at last.", "--json"]) == 0
    answers = []
    for argv in (["stats", "--json"], ["--json", "stats"]):
        capsys.readouterr()
        assert main(["--data", folder, *argv]) == 0
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0] == answers[1] and answers[0]["memories"] == 1


@pytest.mark.parametrize("argv", [["d1", "delete", "memory"], ["prune"], ["consolidate"], ["retry"],
                                  ["export", "--d1-sql", "{tmp}/memory.sql"]])
def test_a_verb_that_printed_a_line_prints_one_json_document(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(tmp_path / "village")
    assert main(["--data", folder, "--model", HASHING_MODEL, "remember", "bram", "Rain at last."]) == 0
    capsys.readouterr()
    assert main(["--json", "--data", folder, *(a.replace("{tmp}", str(tmp_path)) for a in argv)]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), dict)
