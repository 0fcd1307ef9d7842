"""beliefs/story.py: a view is a stance, not a sentence. Consecutive memories with the same state value (or the
same words) are one view, told since its first memory; the earlier views are counted as views, with the days they
began. On main every memory under the key was a view: the demo's Margaret had "19 earlier views" of Tom."""

from __future__ import annotations

import re

from memory_sim.memory.beliefs.story import View, opinion_story, restates, stances


def newest_first(*said: tuple[int, str, str | None]) -> list[View]:
    return [View(day, text, value) for day, text, value in reversed(said)]


def test_restatements_of_one_view_are_one_view_since_its_first_memory() -> None:
    views = newest_first((1, "I don't trust him.", "cold"), (3, "He is loud.", "cold"),
                         (6, "After he mended my cart, I trust him.", "warm"), (8, "He has a good heart.", "warm"),
                         (9, "Nobody is more reliable.", "warm"))
    held = stances(views)
    assert [(s.since, s.last_day, s.value, len(s.said)) for s in held] == [(6, 9, "warm", 3), (1, 3, "cold", 2)]
    story = opinion_story("Ada", "Cole", views)
    assert story == ('Ada\'s view of Cole, since day 6: "After he mended my cart, I trust him." (said again twice, '
                     'last on day 9). Before that (1 earlier view, newest first): day 1, "I don\'t trust him." '
                     '(said twice, days 1 to 3).')


def test_a_view_that_turns_back_is_a_new_view_and_counts_and_days_agree() -> None:
    values = {1: "warm", 2: "warm", 3: "cold", 4: "cold", 5: "cold", 8: "warm", 9: "warm", 11: "cold"}
    views = newest_first(*[(d, f"view {d}", v) for d, v in values.items()])
    held = stances(views)
    assert [s.since for s in held] == [11, 8, 3, 1] and [s.value for s in held] == ["cold", "warm", "cold", "warm"]
    story = opinion_story("Ada", "Cole", views)
    assert story.startswith('Ada\'s view of Cole, since day 11: "view 11" Before that (3 earlier views')
    assert re.findall(r"(?:: |; )day (\d+), \"", story) == ["8", "3", "1"]


def test_more_earlier_views_than_are_quoted_are_counted_with_their_days() -> None:
    said = [(d, f"view {d}", "warm" if d % 2 else "cold") for d in range(1, 7)]  # six views, each a turn
    story = opinion_story("Ada", "Cole", newest_first(*said))
    assert "Before that (5 earlier views, newest first): day 5," in story
    assert story.endswith("; and 2 more (days 1 to 2).")


def test_without_a_value_only_the_same_words_restate_a_view() -> None:
    assert restates(View(2, "I don't trust Tom.", None), View(1, "I don't  trust Tom", None))
    assert not restates(View(2, "Tom is a fine fellow.", None), View(1, "Tom has a good heart.", None))
    assert not restates(View(2, "Tom has a good heart.", "cold"), View(1, "Tom has a good heart.", "warm"))
    mixed = stances(newest_first((1, "A.", "warm"), (2, "B.", None), (3, "C.", "warm")))
    assert [s.since for s in mixed] == [3, 2, 1]  # no value: no guess that B restates A


def test_no_view_and_one_view() -> None:
    assert opinion_story("Ada", "Cole", []) == "Ada has no opinion of Cole yet."
    assert opinion_story("Ada", "Cole", [View(4, "A friend.", "warm")]) == (
        'Ada\'s view of Cole, since day 4: "A friend." No earlier view.')
