"""Query cues: what a question and a memory say, read from words (pure), and how they move a hybrid ranking."""

from __future__ import annotations

import re
from datetime import date

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_sim.memory.recalling import hybrid_arrays
from memory_sim.memory.recalling.cues import (
    CueWeights,
    MemoryCues,
    QueryCues,
    after_factor,
    asks_trait,
    asks_when,
    before_factor,
    memory_cues,
    named_dates,
    query_cues,
    query_subject,
    states_a_trait,
)
from memory_sim.memory.recalling.hybrid_arrays import TimelineArrays
from memory_sim.memory.recalling.recall_cache import CueArrays


def test_memory_cues_read_the_speaker_a_time_and_a_trait() -> None:
    assert memory_cues("Melanie: I took my kids to a park yesterday.") == MemoryCues("melanie", True, False)
    assert memory_cues("Caroline: I'm keen on counseling, I love helping people.") == MemoryCues(
        "caroline", False, True)
    assert memory_cues("Tom repaired the plough on Friday") == MemoryCues("", True, False)
    assert memory_cues("a quiet day at the forge").timed is False


@pytest.mark.parametrize(("question", "subject"), [
    ("What did Melanie paint?", "melanie"),
    ("What is Melanie's hand-painted bowl a reminder of?", "melanie"),  # a possessive names her too
    ("What advice did Evan give Sam about finding a passion?", "evan"),  # the first named is the subject
    ("What do Jon and Gina both have in common?", ""),  # a joint subject: no single focus
    ("What did the posters say?", ""),
])
def test_the_subject_is_the_first_named_unless_joined(question: str, subject: str) -> None:
    assert query_subject(question, {"melanie", "caroline", "evan", "sam", "jon", "gina"}) == subject


def test_question_kinds() -> None:
    assert asks_when("When did Caroline go to the support group?") and asks_when("How long ago was it?")
    assert not asks_when("What did Caroline research?")
    assert asks_trait("Would Melanie enjoy Vivaldi?") and asks_trait("What fields is she likely to pursue?")
    assert not asks_trait("What did Melanie paint?")
    assert not asks_trait("Does Agnes like Rose?")  # an opinion of someone, not a hypothetical about her tastes


def test_named_dates_are_days_or_months_with_a_year() -> None:
    assert named_dates("What did Melanie show on October 13, 2023?") == (date(2023, 10, 13), date(2023, 10, 13))
    assert named_dates("What did Gina find on 1 February, 2023?") == (date(2023, 2, 1), date(2023, 2, 1))
    assert named_dates("What did Maria start in December 2023?") == (date(2023, 12, 1), date(2023, 12, 31))
    assert named_dates("What happened in May?") is None  # no year: not resolved
    assert named_dates("on February 30, 2023") is None
    cues = query_cues("What did Maria do in December 2023?", {"maria"}, date(2023, 11, 30))
    assert cues == QueryCues("maria", False, False, (1, 31))
    assert query_cues("What did Maria do in December 2023?", {"maria"}, None).days is None


def test_cue_factors_multiply_only_the_matching_candidates() -> None:
    cues = {0: MemoryCues("ann", True, False), 1: MemoryCues("bob", False, True), 2: MemoryCues("", False, False)}
    arrays = CueArrays.of(cues, {0: 3, 1: 10, 2: 4}, 4)  # slot 3 is a hole
    weights = CueWeights(subject=1.0, when=0.5, date=2.0, trait=3.0, date_before_days=1, date_after_days=0)
    before, after = arrays.factors(QueryCues("ann", True, True, (4, 4)), weights)
    slots = np.array([0, 1, 2, 3])
    assert before(slots).tolist() == [1.5 * 3.0, 4.0, 3.0, 1.0]  # when; trait; day 4 in 3..4; day 3 in too
    assert after(slots).tolist() == [2.0, 1.0, 1.0, 1.0]
    _, unknown = arrays.factors(QueryCues("zed"), weights)
    assert unknown(slots).tolist() == [1.0, 1.0, 1.0, 1.0]
    days = {0: 3, 1: 10, 2: 4}
    for question in (QueryCues("ann", True, True, (4, 4)), QueryCues("bob", False, True, None), QueryCues()):
        before, after = arrays.factors(question, weights)
        live = np.array(sorted(cues))
        assert before(live).tolist() == [before_factor(question, cues[s], days[s], weights) for s in live]
        assert after(live).tolist() == [after_factor(question, cues[s], weights) for s in live]


def test_cues_reorder_the_array_ranking_and_none_keep_it() -> None:
    timeline = TimelineArrays.of([[0, 1, 2]], 3)
    ids = ["a", "b", "c"]
    keyword = (np.array([0, 2]), np.array([1.0, 0.9]))
    vector = (np.array([], np.int64), np.array([], float))
    plain = hybrid_arrays.hybrid_rank(vector, keyword, timeline, 3, ids)
    assert [s for s, _ in plain][:1] == [0]
    lifted = hybrid_arrays.hybrid_rank(vector, keyword, timeline, 3, ids,
                                       after=lambda slots: np.where(slots == 2, 2.0, 1.0))
    assert [s for s, _ in lifted][:1] == [2]
    same = hybrid_arrays.hybrid_rank(vector, keyword, timeline, 3, ids, before=lambda s: np.ones(s.shape[0]),
                                     after=lambda s: np.ones(s.shape[0]))
    assert same == plain


ONE_PATTERN = re.compile(  # the trait rule as one regular expression: slow, but plainly what it says
    r"\b(i|i'm|i am|i've|my)\b.{0,40}\b(love|loves|like|likes|enjoy|enjoys|fan of|favou?rite|passion|passionate"
    r"|into|keen|dream|hope|want|value|believe|prefer|always|never|hate|afraid|goal)\b",
    re.IGNORECASE,
)
PIECES = ["I", "i'm", "I am", "I've", "my", "My", "love", "lovely", "fan of", "favorite", "into", "goal", "x" * 30,
          "painting", "\n", " ", ",", "Caroline:", "ilove", "hoped", "always", "mine"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14), st.lists(st.sampled_from([" ", "", ", ", "  "]), max_size=14))
def test_the_trait_search_says_what_the_one_pattern_says(pieces: list[str], gaps: list[str]) -> None:
    text = "".join(p + (gaps[i] if i < len(gaps) else " ") for i, p in enumerate(pieces))
    assert states_a_trait(text) == bool(ONE_PATTERN.search(text)), text


TIME_PIECES = ["last", "week", "week's", "this", "Friday", "in", "May", "2023", "2023's", "x2023", "ago", "a", "few",
               "days", "the other", "day", "just", "went", "yesterday", "_week", "Yesterday", "since", "morning", "I",
               "love", "my", "My", "fan of", "\n", "Caroline:"]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(TIME_PIECES), max_size=12), st.lists(st.sampled_from([" ", "", ", ", ". "]),
                                                                     max_size=12))
def test_memory_cues_equal_the_patterns_they_shortcut(pieces: list[str], gaps: list[str]) -> None:
    from memory_sim.memory.recalling.cues import _TIMED

    text = "".join(p + (gaps[i] if i < len(gaps) else " ") for i, p in enumerate(pieces))
    found = memory_cues(text)
    assert found.timed == bool(_TIMED.search(text)), text
    assert found.trait == bool(ONE_PATTERN.search(text)), text
