"""State-key inference (memory/beliefs/keys.py): the structure rules with no embedder or the fake one, the chat
refiner against the fake OpenAI-compatible server, and (slow) the figures on real MiniLM.

The labelled set, tests/memory/data/state_key_pairs.json: pairs of memories of one NPC (older, newer), each
memory with its text, type, `about` and gold key (null: no state), and the pair's label, 'update' (the newer
replaces the older: same key) or 'compatible' (both stay true: different keys or none). Its splits, in the order
they were written, and how each was used:
- held_out (116 pairs) was written first and committed before any inference code ran on it. Its first run
  (benchmarks/state_keys_first_held_out_run.md) listed its misses, so it is no longer blind; since then it has
  served as validation (choosing between variants, e.g. the hand-over's confidence floor in
  memory/recalling/current.py; some tuning pairs were written against the kinds of confusion it showed), never
  edited and never among the training examples.
- tuning (734 pairs) grew in eleven rounds; the cue words, the structure rules and the aspect model's training
  examples (memory/beliefs/exemplars.py, generated from this split only) come from it. The last three rounds
  (132 pairs: third-person reports, indirect phrasings, possessions, plans and places without cue words) were
  written after held_out_4, by the same person. The eleventh (t596-t734: 99 updates without change words, 40
  compatible) was written by a helper from the vocabulary and the tuning pairs only; it saw held_out's first 39
  pairs and one held_out_4 pair by accident while reading the file's layout.
- held_out_2 (92 pairs) was written after the first held-out run, and committed before any code ran on it. Only
  its aggregate figures were looked at (seven times, the last two with the final code), never its misses.
- held_out_3 (100 pairs) was written after that and run once blind (link 0.981/0.867), then its misses showed
  one adverb bug, fixed; since then only its aggregate figures were looked at (twice more, with the final code).
- held_out_4 (118 pairs: 74 updates, 66 without a change word, 44 compatible; 12 new NPCs in a coastal parish)
  was written by a later session before it changed any code, without reading the other held-out texts, and
  committed (16b3dc5) before any code ran on it; its aggregate figures were looked at twice, with the finished
  code and again after one rule was tightened for a false key the sim village showed (a rumour, "Tom claims
  William found a purse", became the NPC's own possession): the links were the same, key precision 0.894 ->
  0.899. The blind split: its misses are never written out (eval/state_keys.py's MISSES_SHOWN), so it stays
  blind for the next session too. A later session's grammar rules for naming things (found on tuning misses
  only) were followed by one more aggregate look: link recall 0.757 -> 0.743 (one link), while held_out and
  held_out_2 gained one each. Its lead saw nine of its pairs (w001-w009, opinion updates) by accident then.
  After that, key inference learned the keys an NPC holds (infer_key's `held`, chosen on tuning and held_out):
  one more aggregate look, link recall 0.743 -> 0.838.
- held_out_5 (100 pairs: 65 updates, none with a change word, 35 compatible; 12 new NPCs in a mining town) was
  written by a helper who read only the key vocabulary and two example pairs, and committed before any code ran
  on it; run once, with the held keys in place: link 0.963/0.400, key 0.730/0.584. Its lead saw its last pair
  (v100) while checking the file's format, and then its misses' aggregate reasons (not their texts): most keys
  missed were refused as "no state this memory could set has a name in it" or read as an event, the terse
  first-person-less lines of its register. A rule for them (a line with no subject of its own is the writer's,
  keys._own_words), developed on a twelfth tuning round (t735-t750, written by the lead for it), was then
  measured on every split: link recall held_out_4 0.838 -> 0.851, held_out_5 0.400 -> 0.569 (its second,
  aggregate look), the others the same. Then rules for reports ("Heard ...", "Word is ..."), held things named
  in a line about something else, and "the ford's" were found on a thirteenth tuning round (t751-t870, register
  variety, written by a helper from the vocabulary and tuning pairs); refitting the aspect model on it cost the
  validation split a link and the chatter set a false key, so the weights were kept as they were. With them:
  held_out_4 0.838, held_out_5 0.925/0.569 (third look), the others within a link.
- held_out_6 (94 pairs: 60 updates, 34 compatible; 12 new NPCs in a river delta town; varied registers on
  purpose) was written by a helper who read only the key vocabulary and two example pairs, and committed before
  any code ran on it. Run with the rules above: link 0.914/0.533, key 0.727/0.629; the variant with the refitted
  aspect model (not chosen then, on the validation split) was run on it too: 0.946/0.583. Then three more tuning
  rounds (a001-a120, b001-b120, e001-e120: a harbour town, a fantasy town's game log, a farming life-sim; written
  by helpers from the vocabulary and two example pairs) were added, and leaving each new round out of the fit in
  turn showed a refit reading the round it had not seen better than the shipped weights (236 against 216 of 345
  updates linked, false links 5 against 6; held_out 62-63 against 64 of 66), so the aspect model was refitted on
  every tuning round. held_out_6 with it (third run): 0.927/0.633.
- held_out_7 (90 pairs: 56 updates, 34 compatible; 12 new NPCs in a desert caravan town; varied registers) was
  written by a helper from the vocabulary and two example pairs while those rounds were written, committed before
  any code ran on it, and run once, with the refitted model: link 0.949/0.661, key 0.825/0.776.
- Three further tuning rounds (d001-d120 a space colony's logs, g001-g120 a castle household, f001-f120 a city
  life-sim) were then written the same way; leaving each out of a refit in turn linked as many of its updates as
  the shipped weights did (153 of 250 both), so the weights stayed and these rounds are not among the examples.
- held_out_8 (94 pairs: 60 updates, 34 compatible; 12 new NPCs in a 1920s port city; varied registers) was
  written beside those rounds in the same way, committed before any code ran on it, and run once with the final
  code: link 0.912/0.517, key 0.674/0.634.
- held_out_9 (94 pairs: 60 updates, 58 without a change word, 34 compatible; 12 new NPCs, a travelling circus;
  mixed registers) was written by a helper who read only the vocabulary and two example pairs, committed before
  any code ran on it, and run once with the code of held_out_8's run: link 0.946/0.583, key 0.744/0.732.
scripts/measure_state_keys.py writes the figures of every split to benchmarks/state_keys.md (misses of tuning and
held_out only).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_chat_server import FakeChatServer

from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.env import Env
from memory_sim.errors import EmbeddingUnavailable
from memory_sim.eval.state_keys import (
    GOAL_PRECISION,
    GOAL_RECALL,
    MISSES_SHOWN,
    load_pairs,
    measure,
    subjects_for,
)
from memory_sim.memory import rules
from memory_sim.memory.beliefs.key_chat import ChatKeyRefiner
from memory_sim.memory.beliefs.keys import CONFIDENCE_FLOOR, KeyGuess, infer_key
from memory_sim.memory.beliefs.things import (
    acted_on,
    called_off,
    destination,
    phrase_heads,
    replaced,
    saved_for,
)

DATA = load_pairs(Path(__file__).parent / "data" / "state_key_pairs.json")
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
# What the bundled MiniLM measured (benchmarks/state_keys.md), rounded down: a change that lowers one fails here.
# The final figures (MiniLM): tuning link 0.993/0.878 (its last rounds are hard), held_out 1.000/0.939,
# held_out_2 0.982/0.900, held_out_3 0.981/0.883, held_out_4 0.984/0.838, held_out_5 0.950/0.585, held_out_6
# 0.927/0.633, held_out_7 0.949/0.661, held_out_8 (blind) 0.912/0.517, held_out_9 (blind) 0.946/0.583. Tuning, with its newest rounds that are
# not among the aspect model's examples: 0.988/0.816.
FLOORS = {  # split: (link precision, link recall, key precision, key recall)
    "tuning": (0.98, 0.81, 0.89, 0.85),
    "held_out": (0.99, 0.93, 0.95, 0.96),
    "held_out_2": (0.98, 0.90, 0.92, 0.93),
    "held_out_3": (0.98, 0.88, 0.94, 0.94),
    "held_out_4": (0.98, 0.83, 0.90, 0.90),
    "held_out_5": (0.95, 0.58, 0.74, 0.72),
    "held_out_6": (0.92, 0.63, 0.73, 0.68),
    "held_out_7": (0.94, 0.66, 0.82, 0.77),
    "held_out_8": (0.91, 0.51, 0.67, 0.63),
    "held_out_9": (0.94, 0.58, 0.74, 0.73),
}


def key(text: str, type: str = "event", subjects: tuple[str, ...] = (), **options: Any) -> str | None:
    return infer_key(text, type=type, subjects=subjects, **options).key


# --- the labelled set ------------------------------------------------------------------------------------------


def test_the_labelled_set_has_the_size_and_spread_the_issue_asks() -> None:
    pairs = DATA["pairs"]
    updates = [p for p in pairs if p["label"] == "update"]
    words = re.compile(r"\b(" + "|".join(DATA["change_words"]) + r")\b", re.I)
    plain = [p for p in updates if not words.search(p["older"]["text"] + " " + p["newer"]["text"])]
    assert len(pairs) >= 200 and len(updates) >= 100 and len(pairs) - len(updates) >= 60
    assert len(plain) >= len(updates) / 2
    topics = {p["topic"] for p in updates}
    assert {"opinion", "debt", "health", "home", "place", "possession", "plan", "relationship", "feud"} <= topics
    for split in ("held_out", "tuning", "held_out_2", "held_out_3", "held_out_4", "held_out_5", "held_out_6",
                  "held_out_7", "held_out_8", "held_out_9"):
        assert sum(p["split"] == split and p["label"] == "update" for p in pairs) >= 50
        assert sum(p["split"] == split and p["label"] == "compatible" for p in pairs) >= 30


def test_every_gold_key_is_valid_and_agrees_with_its_label() -> None:
    for pair in DATA["pairs"]:
        older, newer = pair["older"]["key"], pair["newer"]["key"]
        rules.state_key(older), rules.state_key(newer)
        if pair["label"] == "update":
            assert older is not None and older == newer, pair["id"]
        else:
            assert older is None or older != newer, pair["id"]


# --- structure, no embedder ------------------------------------------------------------------------------------


def test_an_opinion_memory_about_one_npc_is_that_opinion() -> None:
    guess = infer_key("Tom is a lazy lout.", type="opinion", subjects=("tom",))
    assert guess == KeyGuess("opinion:tom", 0.9, "an opinion memory about one NPC")
    assert key("Tom and Mira are lazy louts.", "opinion", ("tom", "mira")) != "opinion:tom"


def test_kinship_never_sets_state() -> None:
    assert key("Tom is my mother's brother.", "relationship", ("tom",)) is None
    assert key("Wren and I are cousins.", "relationship", ("wren",)) is None


def test_a_debt_a_trade_or_a_tie_needs_one_npc_and_the_npc_itself_in_it() -> None:
    assert key("I owe Mira three silver.", subjects=("mira",)) == "debt:mira"
    assert key("Mira owes me two crowns.", subjects=("mira",)) == "debt:mira"
    assert not (key("Tom and Mira owe me a crown each.", subjects=("tom", "mira")) or "").startswith("debt")
    assert key("Jory got married last spring.", subjects=("jory",)) != "relationship:jory"  # Jory's news
    assert key("Jory and I got married last spring.", subjects=("jory",)) == "relationship:jory"


def test_own_state_is_keyed_by_whose_it_is() -> None:
    assert key("I'm sick with a fever.") == "health"
    assert key("Tom is sick with a fever.", subjects=("tom",)) == "health:tom"
    assert key("I caught Tom's fever and I'm sick in bed.", subjects=("tom",)) == "health"
    assert key("I live in the cottage by the mill.", "place") == "home"


def test_things_key_possessions_plans_and_places_apart() -> None:
    assert key("I own a horse.") == "possession:horse"
    assert key("I own a cart.") == "possession:cart"
    assert key("I sold my old stallion to the drover.") == "possession:horse"  # one key per kind of thing
    assert key("I plan to go to the fair.") == "plan:fair"
    assert key("I mean to fix the roof before winter.") == "plan:roof"
    assert key("The bridge over the river is flooded.", "place") == "place:bridge"
    assert key("I have a broken finger.") != "possession:finger"  # a body part is health's
    assert key("I cut my hand badly on the scythe.") != "possession:badly"  # an adverb is no thing


def test_the_npcs_own_thing_may_be_taken_up_with_the_and_no_first_person_word() -> None:
    assert key("The shears were lost in the hay.") == "possession:shears"
    assert key("The trip to the fair is cancelled.") == "plan:fair"
    assert key("The miller's cart was lost in the flood.") is None  # someone else's: no state of the NPC's
    assert key("Her trip to the fair is cancelled.") != "plan:fair"  # hers
    rumour = "Tom claims William found a purse of silver by the river."  # a false key the sim village once got
    assert not (key(rumour, subjects=("tom", "william")) or "").startswith("possession")
    assert not (key("A stranger found a purse of silver by the river.") or "").startswith("possession")


def test_a_verb_after_a_noun_or_money_put_by_is_not_the_thing() -> None:
    assert phrase_heads("My old sheepdog guards the flock.") == [("my", "sheepdog"), ("the", "flock")]
    assert phrase_heads("I plan to plant pear trees in the orchard.")[0] == ("plant", "trees")  # a plural noun
    assert phrase_heads("The loom money went on the doctor.")[0] == ("the", "loom")
    assert phrase_heads("I have a brindled cat that mouses in the barn.")[0] == ("a", "cat")  # -ed: a modifier
    assert key("The pocket knife was lost in my other coat.") == "possession:knife"  # the subject, not "my coat"
    assert key("The wind carried off my good hat; it is lost.") == "possession:hat"


def test_a_verb_of_position_a_participle_or_a_name_after_the_noun_ends_it() -> None:
    # a verb of position agrees with the noun before it: the -s form after one, the base form after many
    assert phrase_heads("My mother's clock stands in the parlour.")[0] == ("my", "clock")
    assert phrase_heads("Our copper pans hang over the hearth.")[0] == ("our", "pans")
    assert phrase_heads("The old ram lies under the hedge.")[0] == ("the", "ram")
    assert phrase_heads("I keep a market stand in the square.")[0] == ("a", "stand")  # no agreement: a noun
    assert phrase_heads("I plan to plant pear trees in the orchard.")[0] == ("plant", "trees")
    # an irregular past participle is no noun: "have the X done"
    assert phrase_heads("I'll have the roof thatched and the well dug.") == [("the", "roof"), ("the", "well")]
    assert key("I mean to have the barn rebuilt.") == "plan:barn"
    # a participle of a known verb with a phrase after it opens a clause about the noun
    assert phrase_heads("I mean to keep a stall selling honey.")[0] == ("a", "stall")
    assert phrase_heads("I sold my cart to a pedlar selling pans.")[1] == ("a", "pedlar")
    assert phrase_heads("She sewed the church wedding dress.")[0] == ("the", "dress")  # "wed" is no known verb
    # a name after the noun is the noun's, in apposition
    assert phrase_heads("My old sheepdog Bess sleeps by the fire.")[0] == ("my", "sheepdog")
    assert phrase_heads("My grey mare Nell is lame.")[0] == ("my", "mare")


def test_an_adverb_before_a_noun_or_a_hyphenated_word_is_part_of_the_phrase() -> None:
    assert phrase_heads("I plan to mend the back door.")[0] == ("the", "door")
    assert phrase_heads("I found my missing ewe in the copse.")[0] == ("my", "ewe")
    assert phrase_heads("My only cow is dry.")[0] == ("my", "cow")
    assert phrase_heads("I bought a second-hand plough.")[0] == ("a", "plough")
    assert phrase_heads("The harvest-home supper is put off.")[0] == ("the", "supper")


def test_a_noun_with_is_or_has_cut_to_s_is_the_noun_itself() -> None:
    assert phrase_heads("The market's off; the roads are flooded.")[0] == ("the", "market")
    assert phrase_heads("The cart's broken again.")[0] == ("the", "cart")
    assert phrase_heads("The wedding's been put off till spring.")[0] == ("the", "wedding")
    assert phrase_heads("The cart's broken wheel is mended.")[0] == ("the", "wheel")  # a possessive
    assert phrase_heads("My father's old saddle hangs in the barn.")[0] == ("my", "saddle")
    assert phrase_heads("The fair's off for me; nobody can watch the stall.") == [("the", "fair"), ("the", "stall")]


def test_a_mind_to_a_share_in_and_a_measure_of_hand_over_to_the_thing() -> None:
    assert phrase_heads("I've a mind to buy the bay mare at the fair.")[0] == ("a", "mare")
    assert phrase_heads("I have half a mind to sell the cow.") == [("a", "cow")]
    assert phrase_heads("I've a notion to visit my aunt in the spring.")[0] == ("a", "aunt")  # "visit my": a verb
    assert phrase_heads("I've a fancy to paint the shutters.") == [("a", "shutters")]
    assert phrase_heads("It slipped my mind.") == [("my", "mind")]  # no "to": the word itself
    assert phrase_heads("We hold a share in the fishing boat.")[0] == ("a", "boat")
    assert phrase_heads("I own a stake in the mill.")[0] == ("a", "mill")
    assert phrase_heads("I sold a bale of hay and a bolt of linen.") == [("a", "hay"), ("a", "linen")]
    assert phrase_heads("The hay bale is wet through.") == [("the", "hay")]
    # a journey's noun before it names where; without one, "to" and a verb say what it is for
    assert phrase_heads("I'm saving for a river trip to see the falls.")[0] == ("a", "river")
    assert phrase_heads("I'm planning a trip to buy a goat.") == [("a", "goat")]
    assert phrase_heads("The trip to Harrow is off.") == [("the", "harrow")]


def test_a_plan_of_going_is_keyed_by_where_it_goes() -> None:
    assert destination("I'll drive the geese to the Harrow fair.") == "fair"
    assert destination("I'm taking the pig to market on Saturday.") == "market"  # a bare place ending a phrase
    assert destination("We'll ride to Kellow after the shearing.") == "kellow"  # a name
    assert destination("I'm keeping the calves away from the Michaelmas fair.") == "fair"
    assert destination("I'm going to plant beans by the wall.") == ""  # "to" and a verb: a purpose
    assert destination("I'm going to milk the cows.") == ""
    assert destination("I'm going to sell the ring to the tinker.") == ""  # a future: no going
    assert destination("I'll bring the ale; the cart goes nowhere.") == ""
    assert destination("The cart is going, I hope, to the fair.") == ""  # not within the clause
    assert key("I plan to take the ewes to the Dunmere fair.") == "plan:fair"
    assert key("I plan to take the scythe to the smith for mending.") == "plan:scythe"  # a person: an errand


def test_a_changed_plan_is_keyed_by_the_one_it_replaces() -> None:
    assert replaced("We'll keep geese rather than hens this spring.") == "hens"
    assert replaced("I'll plant beans instead of the turnips.") == "turnips"
    assert replaced("I'll sow rye instead of wheat this year.") == "wheat"  # "this year": no object of a verb
    assert replaced("I'll patch the old coat rather than buy a new one.") == ""  # another deed
    assert replaced("I'll patch the old coat rather than pay the tailor.") == ""
    assert key("I plan to sow rye instead of wheat this year.") == "plan:wheat"


def test_what_a_stranger_did_to_a_thing_is_about_the_thing() -> None:
    assert acted_on("The tinker carried off the copper kettle.") == "kettle"
    assert acted_on("A fox killed the speckled hens.") == "hens"
    assert acted_on("The reeve took away the ladder for the tithe.") == "ladder"
    assert acted_on("The smith mends the plough on Fridays.") == "plough"  # a verb in -s
    assert acted_on("The goat wandered off.") == ""  # no object
    assert acted_on("The shears were lost in the hay.") == ""  # the subject is the thing
    assert acted_on("My old mare pulled the cart home.") == ""  # the NPC's own: about the mare
    assert acted_on("The old ram died in the night.") == ""  # "in" opens a place


def test_a_plan_put_by_for_is_keyed_by_what_it_is_put_by_for() -> None:
    assert saved_for("The silver I'd put by for the plough went on the doctor.") == "plough"
    assert saved_for("The oak I set aside for a new door was sold.") == "door"
    assert saved_for("I'm saving for a pony of my own.") == "pony"
    assert saved_for("She puts an egg by for me on Sundays.") == ""  # for a person: no thing
    assert saved_for("We have set a day for the wedding.") == ""  # "set a day for": no saving
    assert key("I mean to spend the wool money I put by for the mare on the roof.") == "plan:horse"


def test_a_plan_said_to_be_off_is_keyed_by_what_is_off() -> None:
    assert called_off("The rain spoiled the hay, so the new barn is off.") == "barn"
    assert called_off("The wool went to pay the rent; the pony will have to wait.") == "pony"
    assert called_off("The wedding's postponed until the harvest is in.") == "wedding"
    assert called_off("The river trip was cancelled.") == "river"  # a journey's noun names where
    assert called_off("The cart is off to market.") == ""  # going, not called off
    assert called_off("The goat is off her food.") == ""  # no plan said to be off
    assert called_off("The shearing is put off till Monday.") == "shearing"
    assert called_off("The cart is put away for the winter.") == ""
    assert key("I mean to mend the roof first, so the new barn is off.") == "plan:barn"


def test_a_thing_that_was_a_relatives_is_no_kinship() -> None:
    assert key("I own a copper kettle that was my mother's.") == "possession:kettle"
    assert key("Petra's father was my father's best friend.", "relationship", ("petra",)) is None


def test_npc_names_are_never_the_thing() -> None:
    assert key("I plan to visit Mira's farm on Sunday.", subjects=("mira",), names={"mira": "Mira"}) == "plan:farm"


def test_keys_are_valid_and_confidence_bounded_on_every_labelled_memory() -> None:
    for embedder in (None, HashingEmbedder(64)):
        embed = None if embedder is None else embedder.embed
        for pair in DATA["pairs"]:
            for side in ("older", "newer"):
                memory = pair[side]
                guess = infer_key(memory["text"], type=memory["type"],
                                  subjects=subjects_for(memory, pair["npc"], DATA["npcs"]), embed=embed)
                rules.state_key(guess.key)
                assert 0.0 <= guess.confidence <= 1.0 and guess.reason
                if guess.key is not None:
                    assert guess.confidence >= CONFIDENCE_FLOOR


def test_the_same_memory_gets_the_same_key_every_time() -> None:
    embed = HashingEmbedder(64).embed
    text = "Hilda lent me a sack of seed barley."
    assert infer_key(text, type="event", subjects=("hilda",), embed=embed) == \
        infer_key(text, type="event", subjects=("hilda",), embed=embed)


@pytest.mark.parametrize(("subjects", "plain", "marked"), [
    (("mira",), "Mira paid me back the three silver.", "Mira finally paid me back the three silver."),
    ((), "I live in Ashford.", "I live in Ashford now."),
    (("tom",), "Tom is an honest man.", "Turns out Tom is an honest man."),
])
def test_change_words_do_not_decide_the_key(subjects: tuple[str, ...], plain: str, marked: str) -> None:
    assert key(plain, subjects=subjects) == key(marked, subjects=subjects) is not None


def test_a_failing_embedder_leaves_the_cue_words_to_decide() -> None:
    def down(texts: Any) -> Any:
        raise EmbeddingUnavailable("embedder unreachable")

    guess = infer_key("I owe Mira three silver.", type="event", subjects=("mira",), embed=down)
    assert guess.key == "debt:mira" and "embedder unavailable (EmbeddingUnavailable)" in guess.reason


# --- the measure ------------------------------------------------------------------------------------------------


def _memory(text: str, type: str, about: list[str], key: str | None) -> dict[str, Any]:
    return {"text": text, "type": type, "about": about, "key": key}


def test_in_use_a_newer_memory_is_read_knowing_all_its_npcs_states() -> None:
    """A newer memory whose key is another pair's older memory's (the same NPC's) supersedes that one in use: the
    all-held figures count it false where the two gold keys differ, and not at all where they are equal."""
    pair_a = {"id": "a", "split": "s", "label": "update", "topic": "opinion", "npc": "mira",
              "older": _memory("Tom is a liar.", "opinion", ["tom"], "opinion:tom"),
              "newer": _memory("Tom is an honest man.", "opinion", ["tom"], "opinion:tom")}
    pair_b = {"id": "b", "split": "s", "label": "compatible", "topic": "kinship", "npc": "mira",
              "older": _memory("Tom is a lazy lout.", "opinion", ["tom"], None),
              "newer": _memory("Tom is my cousin.", "relationship", ["tom"], None)}
    data = {"npcs": {"mira": "Mira", "tom": "Tom"}, "change_words": ["now"], "pairs": [pair_a, pair_b]}
    got = measure(data, "s", None).summary()
    assert (got["link_precision"], got["link_recall"]) == (1.0, 1.0)
    assert got["counts"]["held_false_others"] == 1  # a's newer takes opinion:tom, which b's older holds
    assert (got["held_link_precision"], got["held_link_recall"]) == (0.5, 1.0)
    pair_b["older"]["key"] = "opinion:tom"  # b's older is the same state after all: not counted
    pair_b["label"] = "compatible"
    assert measure(data, "s", None).summary()["counts"]["held_false_others"] == 0


# --- the chat refiner, on the fake OpenAI-compatible server ------------------------------------------------------

GUESS = KeyGuess("opinion:mira", 0.6, "a rule")


def refine(answer: str, behaviour: str = "ok") -> tuple[KeyGuess, ChatKeyRefiner, FakeChatServer]:
    with FakeChatServer(lambda messages: answer, api_key="key", delay_s=1.0) as server:
        server.behaviour = behaviour
        refiner = ChatKeyRefiner(server.base_url, "key-model", api_key="key", timeout_s=0.5)
        try:
            got = refiner.refine("I gave Mira back her three silver.", GUESS, type="event", subjects=("mira",))
        finally:
            refiner.close()
    return got, refiner, server


def test_the_chat_model_names_a_better_key() -> None:
    got, refiner, server = refine("debt:mira")
    assert got.key == "debt:mira" and refiner.fallbacks == 0
    prompt = server.requests[0]["messages"][0]["content"]
    assert "I gave Mira back her three silver." in prompt and "opinion:mira" in prompt and "mira" in prompt


def test_the_chat_model_may_say_no_state() -> None:
    assert refine("none")[0].key is None


@pytest.mark.parametrize("answer", ["Debt of Mira!", "debt:tom", "colour:blue", "opinion", "debt:mira:extra"])
def test_an_answer_outside_the_vocabulary_keeps_the_offline_guess(answer: str) -> None:
    got, refiner, _ = refine(answer)
    assert got == GUESS and refiner.fallbacks == 1


@pytest.mark.parametrize("behaviour", ["error", "slow", "bad-json", "no-choices"])
def test_a_failing_chat_model_keeps_the_offline_guess(behaviour: str) -> None:
    got, refiner, _ = refine("debt:mira", behaviour)
    assert got == GUESS and refiner.fallbacks == 1


# --- real MiniLM ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with Env.local(tmp_path_factory.mktemp("minilm"), environ={}, embed_model=MINILM) as env:
        yield env.embedder.embed


@pytest.mark.slow
@pytest.mark.parametrize("split", list(FLOORS))
def test_the_figures_keep_what_was_measured(minilm: Any, split: str) -> None:
    figures = measure(DATA, split, minilm)
    got = figures.summary()
    print(split, json.dumps(got), *(figures.misses if split in MISSES_SHOWN else ()), sep="\n  ")
    measured = (got["link_precision"], got["link_recall"], got["key_precision"], got["key_recall"])
    assert all(m >= floor for m, floor in zip(measured, FLOORS[split], strict=True)), (measured, FLOORS[split])


# Held-out splits whose goal is not reached (strict xfails): what they measured.
NOT_REACHED = {
    "held_out_4": "link recall 0.838 (precision 0.984) against the goal 0.85",
    "held_out_5": "link recall 0.585 (precision 0.950) against the goal 0.85",
    "held_out_6": "link recall 0.633 (precision 0.927) against the goal 0.9/0.85",
    "held_out_7": "link recall 0.661 (precision 0.949) against the goal 0.85",
    "held_out_8": "(blind, varied registers) link recall 0.517 (precision 0.912) against the goal 0.9/0.85",
    "held_out_9": "(blind, mixed registers) link recall 0.583 (precision 0.946) against the goal 0.85",
}


@pytest.mark.slow
@pytest.mark.parametrize("split", [
    "held_out",  # seen: used as validation since its first run
    "held_out_2",  # link 0.982/0.900
    "held_out_3",  # link 0.981/0.883
    *(pytest.param(split, marks=pytest.mark.xfail(strict=True, reason=(
        f"not reached: {split} {figures}; benchmarks/state_keys.md"))) for split, figures in NOT_REACHED.items()),
])
def test_held_out_linking_meets_the_goal(minilm: Any, split: str) -> None:
    got = measure(DATA, split, minilm).summary()
    assert got["link_precision"] >= GOAL_PRECISION and got["link_recall"] >= GOAL_RECALL, got


# The issue's siblings, in words of their own (none of them in the labelled set): (npc, older, newer, update?).
SIBLINGS = [
    ("tom", ("relationship", "Tom and I have been feuding over the orchard wall."),
     ("event", "Tom brought me a jar of his best honey and we made our peace over the orchard wall."), True),
    ("mira", ("relationship", "I owe Mira six silver for the lambs."),
     ("relationship", "I paid Mira the six silver for the lambs."), True),
    ("", ("event", "I'm sick with a fever and can't get out of bed."),
     ("event", "I've recovered from the fever and I'm working in the field again."), True),
    ("", ("place", "I live in a cottage in Dunmere."),
     ("place", "I moved to Ashford and live above the bakery."), True),
    ("", ("event", "I lost my silver ring at the market."), ("event", "I found my silver ring in the straw."), True),
    ("oswin", ("relationship", "Oswin and I are engaged to be married."),
     ("relationship", "I broke off my engagement to Oswin."), True),
    ("hilda", ("relationship", "I buy all my wool from Hilda."),
     ("relationship", "I swore never to trade with Hilda again after she cheated me."), True),
    ("tom", ("relationship", "Tom is my cousin."), ("event", "Tom and I go fishing together every Sunday."), False),
]


@pytest.mark.slow
@pytest.mark.parametrize(("npc", "older", "newer", "update"), SIBLINGS)
def test_the_issues_siblings(minilm: Any, npc: str, older: tuple[str, str], newer: tuple[str, str],
                             update: bool) -> None:
    subjects = (npc,) if npc else ()
    keys = [infer_key(text, type=type, subjects=subjects, embed=minilm, names={npc: npc.title()}).key
            for type, text in (older, newer)]
    linked = keys[0] is not None and keys[0] == keys[1]
    assert linked == update, keys
