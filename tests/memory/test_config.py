"""Values checked once, when built: MemoryConfig (every tunable has bounds; a bad one is `InvalidInput` naming it)
and Npc (whoever builds one)."""

from __future__ import annotations

import math

import pytest

from memory_sim.errors import InvalidInput
from memory_sim.memory.models import MemoryConfig


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"index_threshold": 1.5}, "index_threshold"),
        ({"recall_headroom": -1}, "recall_headroom"),
        ({"index_cap": 0}, "index_cap"),
        ({"decay_rate": math.nan}, "decay_rate"),
        ({"retry_base_s": 0.0}, "retry_base_s"),
        ({"candidate_factor": True}, "candidate_factor"),
        ({"summary_sentences": "2"}, "summary_sentences"),
        ({"index_treshold": 0.5}, "index_treshold"),  # a typo is refused, not ignored
    ],
)
def test_a_bad_tunable_is_refused_in_one_line(values: dict[str, object], named: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        MemoryConfig(**values)  # type: ignore[arg-type]
    message = str(refused.value)
    assert named in message and "\n" not in message


def test_defaults_follow_the_design_and_copies_are_checked() -> None:
    config = MemoryConfig(retry_base_s=60)  # whole numbers are fine where seconds are asked for
    assert (config.index_threshold, config.initial_decay, config.forget_threshold) == (0.7, 0.05, 0.9)
    assert config.replace(index_cap=5).index_cap == 5 and config.index_cap == 20_000_000
    with pytest.raises(InvalidInput):
        config.replace(cap_headroom=2.0)
    with pytest.raises((AttributeError, TypeError, ValueError)):
        config.index_cap = 3  # type: ignore[misc]


def test_an_npc_value_is_checked_when_built_wherever_it_is_built() -> None:
    from memory_sim.memory.npcs import Npc

    assert Npc("tom", " Tom ", aliases=["Old Tom"]).name == "Tom"
    for bad in ({"id": "tom,ada", "name": "Tom"}, {"id": "tom", "name": ""}, {"id": "", "name": "Tom"},
                {"id": "tom", "name": "Tom", "aliases": "Old Tom"},
                {"id": "tom", "name": "Tom", "traits": ["kind, loud"]}):
        with pytest.raises(InvalidInput):
            Npc(**bad)  # type: ignore[arg-type]
