"""The game's word on state: `state_value` (restatements of one state tell as one view) and `infer_key=False` (a
memory that sets no state: none is inferred), through the API and `memory-sim remember --value / --no-key`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.errors import InvalidInput
from memory_sim.memory.models import ShortTermMemory, WorldTime

DATA = ["--model", "fake/hashing"]


def test_bad_values_are_refused_with_what_was_wrong() -> None:
    with pytest.raises(InvalidInput, match="state_value takes lower-case"):
        ShortTermMemory("ada", "I trust Cole.", 0.5, WorldTime(1), state_key="opinion:cole", state_value="Warm")
    with pytest.raises(InvalidInput, match="state_value must be None or a non-empty string"):
        ShortTermMemory("ada", "I trust Cole.", 0.5, WorldTime(1), state_value="")
    with pytest.raises(InvalidInput, match="infer_key must be True or False"):
        ShortTermMemory("ada", "I trust Cole.", 0.5, WorldTime(1), infer_key="no")  # type: ignore[arg-type]


def test_the_command_line_keeps_values_and_no_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = ["--data", str(tmp_path / "v"), *DATA]
    said = [(1, "I don't trust Cole.", "cold"), (3, "Cole is a sneak.", "cold"), (6, "Cole saved my lamb; I trust him.",
                                                                                    "warm")]
    for day, text, value in said:
        assert main([*data, "remember", "ada", text, "--type", "opinion", "--about", "cole", "--key", "opinion:cole",
                     "--value", value, "--day", str(day)]) == 0
    assert main([*data, "remember", "ada", "Cole and I talked about Cole's cows.", "--type", "relationship",
                 "--about", "cole", "--no-key", "--day", "7", "--json"]) == 0
    assert main([*data, "remember", "cole", "Ada waved at me.", "--about", "ada", "--day", "7"]) == 0
    capsys.readouterr()
    assert main([*data, "relationship", "ada", "cole", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert [(v["sinceDay"], v["value"], v["times"]) for v in answer["views"]["ada"]] == [(6, "warm", 1), (1, "cold", 2)]
    assert answer["opinions"]["ada"].startswith('ada\'s view of cole, since day 6: "Cole saved my lamb; I trust him."'
                                                " Before that (1 earlier view")
    assert main([*data, "state", "ada", "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert "Cole and I talked" not in json.dumps(state)  # the chat set no state
    assert main([*data, "state", "ada", "opinion:cole", "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert [(m["day"], m["stateValue"], m["keySource"]) for m in history] == [(6, "warm", "game"), (3, "cold", "game"),
                                                                               (1, "cold", "game")]


def test_the_demo_says_when_the_affinity_is_short_of_turning_the_view() -> None:
    from memory_sim.cli.verdict import verdict

    line = verdict("Margaret", "the baker", "Tom", -0.12, 0.3, [], "Margaret's view of Tom, since day 4: \"...\"",
                   [(4, "kindness", "Tom did me a kindness.")], "warm")
    assert "Affinity -0.12 (down 0.42 over the run), not enough to turn Margaret's warm view;" in line
    assert "not enough" not in verdict("M", "r", "Tom", 0.3, 0.1, [], "M's view.", (), "warm")
    assert "not enough to turn M's cold view" in verdict("M", "r", "Tom", 0.1, 0.1, [], "M's view.", (), "cold")
