"""A change said in other words stays under the state it changes: key inference knows the keys the NPC holds.

Before this, each memory's key was inferred alone, so an update whose words lean to another aspect or name
another thing got a key of its own and nothing was superseded ("I lifted the cart wheel on my own without a
twinge" after "My back has been bad all winter" was `possession:wheel`, not the health it reports; "The sweep
came on Tuesday and the chimney draws clean" was `plan:sweep`, not `plan:chimney`). These run on the bundled
MiniLM with the shipped aspect weights (examples taken from the tuning pairs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_sim.bench.d1_count import CountingD1
from memory_sim.env import Env
from memory_sim.memory.beliefs.keys import Embed, infer_key
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
BAD_BACK, NO_TWINGE = "My back has been bad all winter.", "I lifted the cart wheel on my own without a twinge."
CHIMNEY_PLAN, CHIMNEY_SWEPT = ("I'll have the chimney swept before the frosts.",
                               "The sweep came on Tuesday and the chimney draws clean.")
FIREWOOD, NOT_A_FARTHING = ("I get my firewood from Oswin every autumn.",
                            "I'll not pay Oswin a farthing for wood ever again after the rotten logs.")


@pytest.fixture(scope="module")
def embed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embed]:
    with Env.local(tmp_path_factory.mktemp("held"), environ={}, embed_model=MINILM) as env:
        yield env.embedder.embed


def _key(text: str, embed: Embed, held: tuple[str, ...] = (), about: tuple[str, ...] = (), **kw: Any) -> str | None:
    return infer_key(text, type=kw.get("type", "event"), subjects=about, embed=embed, held=held,
                     names={"oswin": "Oswin", "cole": "Cole"}).key


@pytest.mark.parametrize(("older", "newer", "alone", "held"), [
    (BAD_BACK, NO_TWINGE, "possession:wheel", "health"),  # an aspect the meaning leans to second
    (CHIMNEY_PLAN, CHIMNEY_SWEPT, "plan:sweep", "plan:chimney"),  # a held thing the text names
])
def test_an_update_takes_the_key_the_npc_holds(embed: Embed, older: str, newer: str, alone: str, held: str) -> None:
    assert _key(older, embed) == held
    assert _key(newer, embed) == alone
    assert _key(newer, embed, held=(held,)) == held


def test_a_state_between_two_npcs_is_kept_by_the_key_held_for_it(embed: Embed) -> None:
    """A supplier given up after rotten logs: alone, refusing to pay reads as a debt between them."""
    kind = "relationship"
    assert _key(FIREWOOD, embed, about=("oswin",), type=kind) == "trade:oswin"
    assert _key(NOT_A_FARTHING, embed, about=("oswin",), type=kind) == "debt:oswin"
    assert _key(NOT_A_FARTHING, embed, about=("oswin",), type=kind, held=("trade:oswin",)) == "trade:oswin"


@pytest.mark.parametrize(("text", "held", "about"), [
    ("Cole and I fished at the weir on Sunday.", ("debt:cole",), ("cole",)),  # an event: no state at all
    (NO_TWINGE, ("possession:horse",), ()),  # not named
    ("Kinship: Cole is my mother's brother.", ("opinion:cole",), ("cole",)),  # structure decides first
    (NO_TWINGE, ("plan:cart",), ()),  # another plan
])
def test_a_held_key_is_not_taken_where_the_memory_sets_another_state_or_none(embed: Embed, text: str,
                                                                             held: tuple[str, ...],
                                                                             about: tuple[str, ...]) -> None:
    assert _key(text, embed, held=held, about=about) == _key(text, embed, about=about)
    assert _key(text, embed, held=held, about=about) not in held


def test_without_the_model_held_keys_change_nothing() -> None:
    alone = infer_key(NO_TWINGE, type="event", subjects=())
    assert infer_key(NO_TWINGE, type="event", subjects=(), held=("health",)) == alone


def test_remember_links_the_update_and_reads_each_npcs_keys_once(tmp_path: Path) -> None:
    with Env.local(tmp_path, environ={}, embed_model=MINILM) as env:
        counted = CountingD1(env.DB)
        env.DB = counted  # type: ignore[misc]
        system = MemorySystem(env, clock=SimClock())
        system.register_npc("nell", "Nell", role="the weaver")
        system.register_npc("maud", "Maud", role="the widow")
        plan = ShortTermMemory("nell", BAD_BACK, 0.5, WorldTime(1))
        chimney = ShortTermMemory("maud", CHIMNEY_PLAN, 0.5, WorldTime(1))
        system.remember_many([plan, chimney])
        before = counted.statements
        bought = ShortTermMemory("nell", NO_TWINGE, 0.5, WorldTime(3))
        swept = ShortTermMemory("maud", CHIMNEY_SWEPT, 0.5, WorldTime(3))
        system.remember_many([bought, swept])
        system.remember(ShortTermMemory("nell", "Wove a blue shawl for the fair.", 0.5, WorldTime(4)))
        assert counted.statements - before == 2  # the two inserts: each NPC's keys were read with the first batch
        assert [m.id for m in system.history("nell", "health")] == [bought.id, plan.id]
        assert [m.id for m in system.history("maud", "plan:chimney")] == [swept.id, chimney.id]


# --- terse lines: the writer implied -----------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "about", "expected"), [
    ("Laid up with a cough since the wet week.", (), "health"),
    ("Owe Tom four shillings for the seed.", ("tom",), "debt:tom"),
    ("Took the empty cottage by the ford; moved the last chest in today.", (), "home"),
    ("Hired on at the dairy, milking at dawn.", (), "work"),
])
def test_a_terse_line_with_no_subject_is_the_npcs_own(embed: Embed, text: str, about: tuple[str, ...],
                                                       expected: str) -> None:
    """Before, a line with no first-person word was read as no state of the NPC's (news of strangers)."""
    assert _key(text, embed, about=about) == expected


@pytest.mark.parametrize(("text", "about"), [
    ("Tom is laid up with a cough.", ("tom",)),  # a name opens it: Tom's own state
    ("The miller lost his horse at the fair.", ()),  # a subject of its own, and someone else's thing
    ("Heard Tom sold his mare to a drover.", ("tom",)),  # his: someone else's
    ("Someone left the gate open by the ford.", ()),
])
def test_a_line_with_a_subject_of_its_own_is_not_the_npcs(embed: Embed, text: str, about: tuple[str, ...]) -> None:
    got = _key(text, embed, about=about)
    # None, a place's condition, or the named NPC's own state ("health:tom"): never a state of the memory's NPC
    npcs_own = got is not None and not got.startswith("place:") and (":" not in got or got.split(":")[1] not in about)
    assert not npcs_own, got


# --- reports and held things named --------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "about", "expected"), [
    ("Heard Hilda's ankle is broken.", ("hilda",), "health:hilda"),
    ("Word is Cole moved in above the forge.", ("cole",), "home:cole"),
    ("They say the road to Dunmere is washed out.", (), "place:road"),
])
def test_a_report_is_read_as_the_news_it_carries(embed: Embed, text: str, about: tuple[str, ...],
                                                 expected: str) -> None:
    """Before, the frame ("Heard", "Word is", "They say") opened the line, so no NPC's state was read in it."""
    got = infer_key(text, type="event", subjects=about, embed=embed, names={"hilda": "Hilda", "cole": "Cole"})
    assert got.key == expected


@pytest.mark.parametrize("text", ["Hearing is hard for old Tom these days.", "Heardley is a fine town."])
def test_a_word_that_only_begins_like_a_frame_is_kept(text: str) -> None:
    from memory_sim.memory.beliefs.keys import unreported

    assert unreported(text) == text


def test_a_held_thing_named_in_a_line_about_something_else_keeps_its_state(embed: Embed) -> None:
    goat = "A fox got into the pen and the goat is gone."
    assert _key(goat, embed) is None  # alone: a fox's doing, no state of the NPC's
    assert _key(goat, embed, held=("possession:goat",)) == "possession:goat"


@pytest.mark.parametrize(("text", "held"), [
    ("The road past the bridge is dry.", "place:bridge"),  # the line's place is the road
    ("Bridge on the town road holding fine.", "place:road"),
])
def test_a_place_named_after_the_lines_own_place_is_another_place(embed: Embed, text: str, held: str) -> None:
    assert _key(text, embed, held=(held,), type="place") not in (held, None)


def test_a_place_with_its_verb_run_on_is_still_named(embed: Embed) -> None:
    assert _key("The ford's down to a trickle.", embed, type="place") == "place:ford"


def test_a_failing_embedder_leaves_the_cue_words_to_decide_where_a_held_thing_is_named() -> None:
    """The held-thing check reads the model's scores: an embedder that fails there degrades as everywhere else."""
    from memory_sim.errors import EmbeddingUnavailable

    def failing(texts: object) -> Any:
        raise EmbeddingUnavailable("the model is down")

    goat = "A fox got into the pen and the goat is gone."
    got = infer_key(goat, type="event", subjects=(), embed=failing, held=("possession:goat",))
    alone = infer_key(goat, type="event", subjects=())
    assert got.key == alone.key and "embedder unavailable" in got.reason
