"""Okapi BM25 written out in plain Python (Lucene's idf): the oracle that tests and benchmarks compare the
project's index (memory_sim.memory.recalling.keyword, on tantivy) against, and the k1 = 1.5 baseline of
locomo_research.py. Not used by the memory system.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from memory_sim.memory.recalling.keyword import tokenize


@dataclass
class ReferenceBM25:
    """Documents kept as term counts, in insertion order; every query scores every posting in Python."""

    k1: float = 1.2
    b: float = 0.75
    tokenizer: Callable[[str], list[str]] = tokenize
    ids: list[str] = field(default_factory=list)
    _counts: list[Counter[str]] = field(default_factory=list)
    _lengths: list[int] = field(default_factory=list)
    _postings: dict[str, list[int]] = field(default_factory=dict)
    _total_length: int = 0

    def add_tokens(self, doc_id: str, tokens: list[str]) -> None:
        counts = Counter(tokens)
        for term in counts:
            self._postings.setdefault(term, []).append(len(self.ids))
        self.ids.append(doc_id)
        self._counts.append(counts)
        self._lengths.append(len(tokens))
        self._total_length += len(tokens)

    def extend(self, docs: Iterable[tuple[str, str]]) -> None:
        for doc_id, text in docs:
            self.add_tokens(doc_id, self.tokenizer(text))

    def idf(self, term: str) -> float:
        df = len(self._postings.get(term, ()))
        return math.log(1.0 + (len(self.ids) - df + 0.5) / (df + 0.5))

    def score_tokens(self, query: list[str]) -> dict[int, float]:
        """Position -> score for every document sharing a term with the query; a repeated term counts again."""
        if not self.ids:
            return {}
        average = self._total_length / len(self.ids) or 1.0
        totals: dict[int, float] = {}
        for term, times in Counter(query).items():
            idf = self.idf(term)
            for position in self._postings.get(term, ()):
                tf = self._counts[position][term]
                norm = self.k1 * (1.0 - self.b + self.b * self._lengths[position] / average)
                totals[position] = totals.get(position, 0.0) + times * idf * tf * (self.k1 + 1) / (tf + norm)
        return totals

    def scores(self, query: str) -> dict[str, float]:
        return {self.ids[p]: s for p, s in self.score_tokens(self.tokenizer(query)).items()}

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """The `k` best (id, score) pairs, highest first; ties keep insertion order."""
        ranked = sorted(self.score_tokens(self.tokenizer(query)).items(), key=lambda item: (-item[1], item[0]))
        return [(self.ids[p], s) for p, s in ranked[:k]]
