"""BM25 keyword index on tantivy: tokenizer, stemming, scores equal to the formula, incremental add, removal."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

from memory_sim.memory.recalling.keyword import BM25Index, stem, tokenize

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from bm25_reference import ReferenceBM25  # noqa: E402

WORDS = "bread oven forge horse smith church pub market quarrel storm harvest fair money owed tom margaret".split()


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
    index = BM25Index()
    index.extend([("a", "cat cat dog"), ("b", "dog bird"), ("c", "fish")])
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    avg = (3 + 2 + 1) / 3
    expected = idf * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / avg))
    assert index.scores("cat") == {"a": pytest.approx(expected, rel=1e-6)}  # tantivy scores in float32
    assert index.idf("cat") == pytest.approx(idf)


def corpus(rng: random.Random, n: int) -> list[tuple[str, str]]:
    # up to 40 tokens: tantivy stores lengths exactly up to there (longer ones in a lossy byte, as Lucene does)
    return [(f"d{i}", " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 40)))) for i in range(n)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_the_reference_formula_with_repeated_query_terms(seed: int) -> None:
    rng = random.Random(seed)
    docs = corpus(rng, rng.randint(1, 80))  # some documents are empty: they count in N and the average length
    index, reference = BM25Index(), ReferenceBM25()
    index.extend(docs)
    reference.extend(docs)
    for _ in range(20):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))  # words repeat: they count again
        want = reference.scores(query)
        assert index.scores(query) == pytest.approx(want, rel=1e-5)


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


def test_adds_and_removals_in_any_order_score_as_a_fresh_index() -> None:
    """Removed documents leave tantivy's statistics too (it would keep them until its segments merge)."""
    rng = random.Random(7)
    docs = corpus(rng, 60)
    index, live = BM25Index(), {}
    for step in range(120):
        if rng.random() < 0.6 or not live:
            doc_id, text = docs[rng.randrange(len(docs))]
            index.add(doc_id, text)  # an id held already is replaced
            live.pop(doc_id, None)
            live[doc_id] = text
        else:
            gone = rng.sample(sorted(live), min(len(live), rng.randint(1, 3)))
            index.remove(gone)
            for doc_id in gone:
                del live[doc_id]
        if step % 10 == 0:
            fresh = BM25Index()
            fresh.extend(live.items())
            query = " ".join(rng.sample(WORDS, 3))
            assert index.scores(query) == pytest.approx(fresh.scores(query), rel=1e-6)
            assert len(index) == len(live) and all(doc_id in index for doc_id in live)


def test_hits_give_slots_in_insertion_order_and_removed_slots_stay_empty() -> None:
    index = BM25Index()
    index.extend([("a", "forge"), ("b", "forge forge"), ("c", "bread")])
    index.remove(["a"])
    slots, scores = index.hits("forge")
    assert slots.tolist() == [index.slot("b")] == [1] and scores[0] > 0
    assert index.ids == [None, "b", "c"]


def test_ties_keep_insertion_order_and_empty_index_is_empty() -> None:
    assert BM25Index().search("anything") == []
    assert BM25Index().hits("anything")[0].size == 0
    index = BM25Index()
    index.extend([("z", "violet words"), ("a", "violet words")])
    assert [doc_id for doc_id, _ in index.search("violet")] == ["z", "a"]


def test_a_custom_tokenizer_replaces_the_default() -> None:
    index = BM25Index(tokenizer=lambda text: text.lower().split())
    index.extend([("1", "The Cat"), ("2", "a dog")])
    assert [doc_id for doc_id, _ in index.search("the")] == ["1"]  # "the" is no stopword here
