"""Keyword ranking: BM25 (Lucene's idf) over short memory texts, with no third-party dependency.

Pure and in-memory: an index is built from (id, text) pairs, grows by `add`, and scores a query against every
document it holds. The memory system builds one from the texts it keeps in D1 (one NPC's memories are a few
thousand short rows, so scoring all of them takes well under a millisecond per query term).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

# A compact English stopword list (function words, auxiliaries, pronouns); question words are stopwords too,
# since "what"/"when" never name what a memory is about.
STOPWORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are aren as at be because been before being below
    between both but by can could couldn did didn do does doesn doing don down during each few for from further
    had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn it its
    itself just let ll me might more most must mustn my myself no nor not now of off on once only or other ought
    our ours ourselves out over own re s same shall shan she should shouldn so some such t than that the their
    theirs them themselves then there these they this those through to too under until up ve very was wasn we
    were weren what when where which while who whom why will with won would wouldn y you your yours yourself
    yourselves d m o ma also get got yeah oh hey hi""".split()
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def stem(word: str) -> str:
    """A light suffix stripper (plural -s/-es/-ies, -ing, -ed, -ly): conflates inflections, keeps roots readable."""
    if len(word) <= 3:
        return word
    for suffix, repl, min_stem in (("ies", "y", 2), ("sses", "ss", 2), ("ing", "", 3), ("edly", "", 3),
                                   ("ed", "", 3), ("ly", "", 4), ("es", "", 3), ("s", "", 3)):
        if word.endswith(suffix) and len(word) - len(suffix) >= min_stem:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            if suffix == "es" and not word.endswith(("shes", "ches", "xes", "zes", "sses")):
                continue
            root = word[: len(word) - len(suffix)] + repl
            if suffix in ("ing", "ed", "edly") and len(root) > 2 and root[-1] == root[-2] and root[-1] not in "lsz":
                root = root[:-1]  # running -> run, stopped -> stop
            return root
    return word


def tokenize(text: str, *, stemming: bool = True, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """Lower-case word tokens without stopwords and possessive/contracted tails, optionally stemmed."""
    tokens = []
    for match in _WORD.findall(text.lower()):
        word = match.split("'", 1)[0]
        if len(word) < 2 or word in stopwords:
            continue
        tokens.append(stem(word) if stemming else word)
    return tokens


@dataclass
class BM25Index:
    """Okapi BM25 with Lucene's non-negative idf; documents are kept as term counts, in insertion order.

    A document added with `counted=False` is scored but leaves the corpus statistics (document frequencies, the
    number of documents, their mean length) as they were: a consolidated summary repeats its sources' words, and
    counting them twice would change every other memory's scores."""

    k1: float = 1.2
    b: float = 0.75
    stemming: bool = True
    tokenizer: Callable[[str], list[str]] | None = None  # replaces `tokenize` (e.g. to compare tokenisers)
    ids: list[str] = field(default_factory=list)
    _counts: list[Counter[str]] = field(default_factory=list)
    _lengths: list[int] = field(default_factory=list)
    _postings: dict[str, list[int]] = field(default_factory=dict)
    _total_length: int = 0  # sum of the counted documents' lengths (integers: exact in any order)
    _counted: int = 0  # documents in the statistics
    _df: dict[str, int] = field(default_factory=dict)  # term -> counted documents holding it

    def add(self, doc_id: str, text: str, *, counted: bool = True) -> None:
        self.add_counts(doc_id, Counter(self._tokens(text)), counted=counted)

    def add_counts(self, doc_id: str, counts: Counter[str], *, counted: bool = True) -> None:
        """Adds a document already tokenised (term counts, e.g. kept from an earlier index); not copied."""
        position = len(self.ids)
        length = sum(counts.values())
        self.ids.append(doc_id)
        self._counts.append(counts)
        self._lengths.append(length)
        for term in counts:
            self._postings.setdefault(term, []).append(position)
        if counted:
            self._total_length += length
            self._counted += 1
            for term in counts:
                self._df[term] = self._df.get(term, 0) + 1

    def extend(self, docs: Iterable[tuple[str, str]]) -> None:
        for doc_id, text in docs:
            self.add(doc_id, text)

    def _tokens(self, text: str) -> list[str]:
        return self.tokenizer(text) if self.tokenizer else tokenize(text, stemming=self.stemming)

    def idf(self, term: str) -> float:
        df = self._df.get(term, 0)
        return math.log(1.0 + (self._counted - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> dict[str, float]:
        """BM25 score of every document sharing a term with `query` (others score 0 and are left out)."""
        return {self.ids[p]: s for p, s in self._scores_by_position(query).items()}

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """The `k` best (id, score) pairs, highest first; ties keep insertion order."""
        ranked = sorted(self._scores_by_position(query).items(), key=lambda item: (-item[1], item[0]))
        return [(self.ids[p], s) for p, s in ranked[:k]]

    def _scores_by_position(self, query: str) -> dict[int, float]:
        if not self.ids:
            return {}
        avg_length = self._total_length / (self._counted or 1) or 1.0
        totals: dict[int, float] = {}
        for term, query_count in Counter(self._tokens(query)).items():
            idf = self.idf(term)
            for position in self._postings.get(term, ()):
                tf = self._counts[position][term]
                norm = self.k1 * (1.0 - self.b + self.b * self._lengths[position] / avg_length)
                totals[position] = totals.get(position, 0.0) + query_count * idf * tf * (self.k1 + 1) / (tf + norm)
        return totals
