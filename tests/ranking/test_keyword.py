"""BM25 keyword index: tokenizer, stemming, scoring, incremental add."""

from __future__ import annotations

import math

import pytest

from memory_sim.memory.keyword import BM25Index, stem, tokenize


def test_tokenize_drops_stopwords_question_words_and_possessives() -> None:
    assert tokenize("When did Caroline's dog go to the park?") == ["caroline", "dog", "go", "park"]


@pytest.mark.parametrize(
    ("word", "root"),
    [("groups", "group"), ("parties", "party"), ("running", "run"), ("stopped", "stop"), ("painted", "paint"),
     ("classes", "class"), ("bus", "bus"), ("is", "is"), ("quickly", "quick"), ("pass", "pass")],
)
def test_stem_conflates_inflections(word: str, root: str) -> None:
    assert stem(word) == root


def test_tokenize_without_stemming_keeps_words() -> None:
    assert tokenize("painting groups", stemming=False) == ["painting", "groups"]


def test_scores_follow_the_bm25_formula() -> None:
    index = BM25Index(k1=1.2, b=0.75)
    index.extend([("a", "cat cat dog"), ("b", "dog bird"), ("c", "fish")])
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    avg = (3 + 2 + 1) / 3
    expected = idf * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / avg))
    assert index.scores("cat") == {"a": pytest.approx(expected)}


def test_search_ranks_the_matching_document_first_and_ignores_non_matches() -> None:
    index = BM25Index()
    index.extend([("1", "I adopted a puppy last week"), ("2", "The weather was nice"), ("3", "Puppies are cute")])
    ranked = index.search("Who adopted a puppy?", k=5)
    assert [doc_id for doc_id, _ in ranked] == ["1", "3"]
    assert ranked[0][1] > ranked[1][1] > 0


def test_rare_terms_weigh_more_than_common_ones() -> None:
    index = BM25Index()
    index.extend([("1", "went hiking mountains"), ("2", "went shopping"), ("3", "went home"), ("4", "went out")])
    assert index.idf("hike") > index.idf("went")
    assert index.search("went hiking", k=1)[0][0] == "1"


def test_incremental_add_updates_statistics() -> None:
    index = BM25Index()
    index.add("1", "guitar lessons")
    before = index.idf("guitar")
    index.add("2", "guitar concert")
    assert index.idf("guitar") < before
    assert {doc_id for doc_id, _ in index.search("guitar")} == {"1", "2"}


def test_ties_keep_insertion_order_and_empty_index_is_empty() -> None:
    assert BM25Index().search("anything") == []
    index = BM25Index()
    index.extend([("z", "violet words"), ("a", "violet words")])
    assert [doc_id for doc_id, _ in index.search("violet")] == ["z", "a"]


def test_a_custom_tokenizer_replaces_the_default() -> None:
    index = BM25Index(tokenizer=lambda text: text.lower().split())
    index.extend([("1", "The Cat"), ("2", "a dog")])
    assert [doc_id for doc_id, _ in index.search("the")] == ["1"]  # "the" is no stopword here
