"""The time resolver (memory/recalling/when.py): a question and the asker's moment give sim days and hours, an
event to place the answer against, or "the last/first time", and the question without its time words."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

import memory_sim.eval
from memory_sim.memory.models import WorldTime
from memory_sim.memory.recalling.when import PARTS, DaySpan, EventAnchor, resolve_time

NOW = WorldTime(15, 18)  # asked on day 15 at 18:00
MONDAY = date(2026, 4, 6)  # the calendar date of sim day 0, a Monday: day 15 is Tuesday 21 April 2026


def span_of(question: str, now: WorldTime = NOW, day_zero: date | None = MONDAY) -> tuple[int, int] | None:
    span = resolve_time(question, now, day_zero).span
    return None if span is None else (span.first, span.last)


@pytest.mark.parametrize(("question", "days"), [
    ("What did she do yesterday?", (14, 14)),
    ("Yesterday, who came to the mill?", (14, 14)),
    ("What happened today?", (15, 15)),
    ("What did I hear earlier today?", (15, 15)),
    ("What did I see this morning?", (15, 15)),
    ("Who was quarrelling last night?", (14, 14)),
    ("What did I do the day before yesterday?", (13, 13)),
    ("What did I buy three days ago?", (12, 12)),
    ("What did I buy 3 days ago?", (12, 12)),
    ("Where was I two days back?", (13, 13)),
    ("What did Ewan do a couple of days ago?", (13, 13)),
    ("What did I sell a few days ago?", (11, 13)),
    ("What did the stranger do a week ago?", (8, 8)),
    ("What did I repair last week?", (8, 14)),
    ("What did I repair over the past week?", (8, 15)),
    ("Who came by in the past few days?", (11, 15)),
    ("What did I sell in the last 3 days?", (12, 15)),
    ("What happened on day 12?", (12, 12)),
    ("Day 3: who visited?", (3, 3)),
    ("What happened between day 3 and day 5?", (3, 5)),
    ("What happened from day 9 to 11?", (9, 11)),
    ("What did I do before day 4?", (0, 3)),
    ("What has happened since day 12?", (12, 15)),
    ("What happened after day 12?", (13, 15)),
])
def test_days_a_question_names(question: str, days: tuple[int, int]) -> None:
    assert span_of(question) == days


@pytest.mark.parametrize(("question", "day", "part"), [
    ("What did I find on the morning of day 9?", 9, "morning"),
    ("What happened on the evening of day 11?", 11, "evening"),
    ("What did I do in the afternoon of day 2?", 2, "afternoon"),
    ("What did I do on day 14 in the afternoon?", 14, "afternoon"),
    ("What did I do on day 14, in the morning?", 14, "morning"),
    ("What damage did the storm do yesterday evening?", 14, "evening"),
    ("What did I eat yesterday morning?", 14, "morning"),
    ("Who knocked last night?", 14, "night"),
    ("What did I see this afternoon?", 15, "afternoon"),
])
def test_parts_of_a_day(question: str, day: int, part: str) -> None:
    assert resolve_time(question, NOW).span == DaySpan(day, day, PARTS[part])


@pytest.mark.parametrize(("question", "days"), [
    ("What did I buy on April 8?", (2, 2)),
    ("What did I buy on April 8th?", (2, 2)),
    ("What did I buy on 8 April?", (2, 2)),
    ("What did I buy on the 8th of April?", (2, 2)),
    ("What did I buy on April 8, 2026?", (2, 2)),
    ("What did I buy on 8 April 2026?", (2, 2)),
    ("What happened in April 2026?", (0, 15)),
    ("What happened in April?", (0, 15)),
    ("What did I do on Monday?", (14, 14)),
    ("What did I do last Monday?", (14, 14)),
    ("What did I do on Tuesday?", (8, 8)),  # today is Tuesday: the one before
    ("What did I do on Thursday evening?", (10, 10)),
    ("What did I do this week?", (14, 15)),
])
def test_calendar_dates_and_weekdays(question: str, days: tuple[int, int]) -> None:
    assert span_of(question) == days


@pytest.mark.parametrize("question", [
    "What did I buy on April 8?", "What did I do on Monday?", "What happened in April 2026?",
])
def test_without_a_calendar_dates_are_not_resolved(question: str) -> None:
    assert span_of(question, day_zero=None) is None


def test_dates_before_the_calendar_began_are_not_resolved() -> None:
    assert span_of("What did I buy on March 8, 2026?") is None


def test_a_day_before_the_world_began_is_not_resolved() -> None:
    assert span_of("What did I do yesterday?", now=WorldTime(0, 9)) is None
    assert span_of("What happened three days ago?", now=WorldTime(1, 9)) is None


@pytest.mark.parametrize(("question", "relation", "event"), [
    ("What did I do after he came back from a trip?", "after", "he came back from a trip"),
    ("What did I find after I came back from Crane's Ford?", "after", "I came back from Crane's Ford"),
    ("What happened just before I left for the market?", "before", "I left for the market"),
    ("Where was I right before the stranger threatened me?", "before", "the stranger threatened me"),
    ("What has gone wrong since the stranger left?", "since", "the stranger left"),
    ("What have I done ever since the fire at the forge?", "since", "the fire at the forge"),
    ("After the feast, who helped me clean up?", "after", "the feast"),
])
def test_events_named_with_before_after_since(question: str, relation: str, event: str) -> None:
    focus = resolve_time(question, NOW)
    assert focus.anchor == EventAnchor(relation, event)  # type: ignore[arg-type]
    assert focus.topic == question  # the event's words stay: a memory may say the event and the answer at once
    assert focus.span is None


@pytest.mark.parametrize("question", [
    "What did I do after that?", "What happened since then?", "Did I eat before it?",
])
def test_a_pronoun_is_no_event(question: str) -> None:
    assert resolve_time(question, NOW).anchor is None


@pytest.mark.parametrize(("question", "ordinal", "topic"), [
    ("When was the last time I saw Tom?", "last", "When was I saw Tom?"),
    ("The last time I rowed Hilde, where were we headed?", "last", "I rowed Hilde, where were we headed?"),
    ("When did I last buy ale?", "last", "When did I buy ale?"),
    ("When did the cellar flood most recently?", "last", "When did the cellar flood?"),
    ("What was my latest trip?", "last", "What was my trip?"),
    ("When did the cellar first flood?", "first", "When did the cellar flood?"),
    ("When did I patch the hull for the first time?", "first", "When did I patch the hull?"),
    ("What was the first thing I forged for Mira?", "first", "What was the thing I forged for Mira?"),
    ("What was my earliest memory of the mill?", "first", "What was my memory of the mill?"),
])
def test_the_last_and_the_first_time(question: str, ordinal: str, topic: str) -> None:
    focus = resolve_time(question, NOW)
    assert (focus.ordinal, focus.topic) == (ordinal, topic)


@pytest.mark.parametrize(("question", "topic"), [
    ("What did she do yesterday?", "What did she do?"),
    ("What happened on day 12?", "What happened?"),
    ("What did I see this morning?", "What did I see?"),
    ("Which barrel did I buy three days ago?", "Which barrel did I buy?"),
    ("What did I buy on April 8?", "What did I buy?"),
])
def test_the_topic_is_the_question_without_its_time_words(question: str, topic: str) -> None:
    assert resolve_time(question, NOW, MONDAY).topic == topic


@pytest.mark.parametrize("question", [
    "What does Margaret think of Tom?",
    "Shall I go to the pub tonight?",  # the future: what is known now answers it
    "What will I do tomorrow?",
    "What do I plan for next Monday?",
    "May I trust the blacksmith?",
    "What did I do during the march to the hills?",
    "Is the road to the mill passable?",
    "Where was I in the last week of October?",  # a week of a month, not the week before today
])
def test_questions_without_a_time_focus_are_left_as_they_are(question: str) -> None:
    focus = resolve_time(question, NOW, MONDAY)
    assert not focus.any
    assert focus.topic == question


def test_no_question_of_the_village_eval_has_a_time_focus() -> None:
    """The village eval asks what NPCs think of each other, with no time words: its ranking is untouched."""
    data = Path(memory_sim.eval.__file__).parent / "data" / "village_questions.json"
    questions = json.loads(data.read_text(encoding="utf-8"))["questions"]
    assert questions
    assert [q["query"] for q in questions if resolve_time(q["query"], NOW, MONDAY).any] == []


@pytest.mark.parametrize("question", [
    "Shall I take the cart to the mill this afternoon?",
    "Should I take the boat across the river today?",
    "Can we open the stall this morning?",
    "Is it safe to cross the ford this evening?",
])
def test_todays_words_in_a_plan_name_the_plans_time_not_the_memories(question: str) -> None:
    assert not resolve_time(question, WorldTime(12, 18)).any


@pytest.mark.parametrize("question", [
    "This morning I heard something: should I walk to the mill?",
    "What did I do this afternoon?",
    "Who came by today?",
])
def test_todays_words_about_what_happened_still_focus_today(question: str) -> None:
    assert resolve_time(question, WorldTime(12, 18)).span is not None
