"""Keyword ranking: Okapi BM25 (k1 1.2, b 0.75, Lucene's idf) over short memory texts, served by tantivy.

The project's tokeniser decides what a word is (stopwords, possessives, a light stemmer, tuned on LoCoMo:
docs/recall-quality.md); tantivy, fed those tokens through its whitespace tokenizer, keeps the postings and
scores them in Rust. Its BM25 is Lucene's, so scores equal the formula's (tests/ranking/test_keyword.py; tantivy
keeps them in float32, stores a document's length exactly up to 40 words, and leaves out a word over 65,530
bytes). Why tantivy: benchmarks/keyword.md (bm25s cannot add a document without rebuilding,
SQLite FTS5 uses another idf and is slower at 100,000 memories).

A document added with `counted=False` (a consolidated summary, which repeats its sources' words) is scored but
left out of the corpus statistics: it is kept here, not in tantivy, and scored in Python with tantivy's document
frequencies and this index's mean length, so counting it does not change every other memory's score. One added
in parts (`add_parts`: a summary's sentences) scores as its best part, so a summary never gathers the words of
sentences that answer nothing alone.

Adds are buffered and committed in one batch at the next search. A removal rebuilds the index from the texts
kept here at the next search: tantivy counts deleted documents in its statistics until its segments merge, and
scores must equal a fresh index's (the recall cache is checked against one).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

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
_WRITER_HEAP = 15_000_000  # tantivy's smallest arena per writer thread; a writer lives for one batch only
_MAX_SEGMENTS = 8  # one segment per batch until then; past it, a batch waits for tantivy's merges
Hits = tuple[np.ndarray, np.ndarray]  # (slots, scores)


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


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentence_tokens(text: str, *, stemming: bool = True) -> list[list[str]]:
    """The tokens of each sentence of `text`: a summary's parts for `BM25Index.add_parts`."""
    return [tokenize(s, stemming=stemming) for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def _schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", tokenizer_name="whitespace", index_option="freq")  # tokens are ours
    builder.add_integer_field("slot", fast=True)
    return builder.build()


class BM25Index:
    """Documents by id, each with a *slot* (its number here, in insertion order; a removed document's slot
    stays empty). `scores`/`search` by id; `hits` by slot, as arrays, for memory/recalling/hybrid_arrays.py."""

    k1, b = 1.2, 0.75  # tantivy's, Lucene's defaults

    def __init__(self, *, stemming: bool = True, tokenizer: Callable[[str], list[str]] | None = None) -> None:
        self.stemming = stemming
        self.tokenizer = tokenizer  # replaces `tokenize` (e.g. to compare tokenisers)
        self.ids: list[str | None] = []  # slot -> id (None: removed)
        self._bodies: list[str | None] = []  # slot -> the tokens as tantivy takes them (None: not in tantivy)
        self._uncounted: dict[int, list[Counter[str]]] = {}  # slot -> term counts of the parts of a document
        # left out of the statistics (one part unless added with `add_parts`)
        self._counted_length = 0  # tokens in tantivy's documents (for the mean length the uncounted are scored by)
        self._slot_of: dict[str, int] = {}
        self._pending: list[int] = []  # slots added since the last commit
        self._stale = False  # a removal since the last build: rebuild before searching
        self._schema = _schema()
        self._index: Any = None
        self._searcher: Any = None
        self.writes = 0  # batches written to tantivy (a build or a commit of what was added): the work done

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot_of

    def slot(self, doc_id: str) -> int:
        return self._slot_of[doc_id]

    def slots(self, doc_ids: Iterable[str]) -> np.ndarray:
        slot_of = self._slot_of
        return np.fromiter((slot_of[i] for i in doc_ids), np.int64)

    def add(self, doc_id: str, text: str, *, counted: bool = True) -> None:
        self.add_tokens(doc_id, self._tokens(text), counted=counted)

    def add_counts(self, doc_id: str, counts: Counter[str], *, counted: bool = True) -> None:
        """Adds a document already tokenised (term counts; BM25 needs no word order)."""
        self.add_tokens(doc_id, list(counts.elements()), counted=counted)

    def add_tokens(self, doc_id: str, tokens: list[str], *, counted: bool = True) -> None:
        """Adds a document already tokenised; an id held already is replaced. `counted=False`: scored, but left
        out of the corpus statistics (document frequencies, document count, mean length)."""
        if doc_id in self._slot_of:
            self.remove([doc_id])
        slot = len(self.ids)
        self.ids.append(doc_id)
        self._slot_of[doc_id] = slot
        if counted:
            self._bodies.append(" ".join(tokens))
            self._counted_length += len(tokens)
            self._pending.append(slot)
        else:
            self._bodies.append(None)
            self._uncounted[slot] = [Counter(tokens)]

    def add_parts(self, doc_id: str, parts: Iterable[list[str]]) -> None:
        """Adds a document left out of the statistics (as `counted=False`) that scores as its best part: the
        parts' tokens, e.g. a summary's sentences."""
        self.add_tokens(doc_id, [], counted=False)
        self._uncounted[self._slot_of[doc_id]] = [Counter(p) for p in parts] or [Counter()]

    def extend(self, docs: Iterable[tuple[str, str]]) -> None:
        for doc_id, text in docs:
            self.add(doc_id, text)

    def remove(self, doc_ids: Iterable[str]) -> None:
        """Drops documents (unknown ids are ignored); the index is rebuilt at the next search."""
        for doc_id in doc_ids:
            slot = self._slot_of.pop(doc_id, None)
            if slot is None:
                continue
            self.ids[slot] = None
            if self._uncounted.pop(slot, None) is None:
                self._counted_length -= len((self._bodies[slot] or "").split())
                self._bodies[slot] = None
                self._stale = True

    def _tokens(self, text: str) -> list[str]:
        return self.tokenizer(text) if self.tokenizer else tokenize(text, stemming=self.stemming)

    # --- reading ----------------------------------------------------------------------------------------------

    def idf(self, term: str) -> float:
        searcher = self._current()
        if searcher is None:
            return 0.0 if not self._uncounted else math.log(2.0)  # no counted document: df = N = 0
        df = searcher.doc_freq("body", term)
        return math.log(1.0 + (searcher.num_docs - df + 0.5) / (df + 0.5))

    def hits(self, query: str) -> Hits:
        """(slots, BM25 scores) of every document sharing a term with `query`; a term repeated counts again."""
        import tantivy

        terms = self._tokens(query)
        searcher = self._current()
        if not terms:
            return np.zeros(0, np.int64), np.zeros(0)
        slots: list[int] = []
        scores: list[float] = []
        if searcher is not None:
            clauses = [(tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "body", t)) for t in terms]
            found = searcher.search(tantivy.Query.boolean_query(clauses), limit=len(self), count=False).hits
            slots = list(searcher.fast_field_values("slot", [address for _, address in found]))
            scores = [score for score, _ in found]
        if self._uncounted:
            extra = self._uncounted_scores(Counter(terms))
            slots += extra.keys()
            scores += extra.values()
        return np.asarray(slots, np.int64), np.asarray(scores, np.float64)

    def _uncounted_scores(self, query: Counter[str]) -> dict[int, float]:
        """BM25 of the documents left out of the statistics, by the statistics of those counted."""
        counted = len(self._slot_of) - len(self._uncounted)
        mean_length = self._counted_length / counted if counted and self._counted_length else 1.0
        idf = {term: self.idf(term) for term in query}
        out: dict[int, float] = {}
        for slot, parts in self._uncounted.items():
            score = 0.0
            for counts in parts:
                norm = self.k1 * (1.0 - self.b + self.b * sum(counts.values()) / mean_length)
                score = max(score, sum(n * idf[t] * counts[t] * (self.k1 + 1) / (counts[t] + norm)
                                       for t, n in query.items() if t in counts))
            if score > 0:
                out[slot] = score
        return out

    def scores(self, query: str) -> dict[str, float]:
        """BM25 score of every document sharing a term with `query` (others score 0 and are left out)."""
        slots, scores = self.hits(query)
        return {self.ids[s]: v for s, v in zip(slots.tolist(), scores.tolist(), strict=True)}

    def search(
        self, query: str, k: int = 10, *, order: Callable[[str], Any] | None = None
    ) -> list[tuple[str, float]]:
        """The `k` best (id, score) pairs, highest first; ties keep insertion order, or `order`'s (a sort key of
        the id) when given, so that indexes filled in different orders answer alike."""
        slots, scores = self.hits(query)
        if 0 < k < len(scores):  # only what may reach the top k is sorted: every hit scoring at least the k-th best
            keep = scores >= np.partition(scores, len(scores) - k)[len(scores) - k]
            slots, scores = slots[keep], scores[keep]
        ids = self.ids
        ranked = sorted(zip(scores.tolist(), slots.tolist(), strict=True),
                        key=(lambda item: (-item[0], item[1])) if order is None
                        else (lambda item: (-item[0], order(ids[item[1]]))))
        return [(ids[s], v) for v, s in ranked[:k]]

    # --- tantivy ----------------------------------------------------------------------------------------------

    def _current(self) -> Any:
        """A searcher over every document added and none removed (None when empty): commits what is pending."""
        if len(self._slot_of) == len(self._uncounted):
            return None
        if self._stale or self._index is None:
            self._build()
        elif self._pending:
            self._write(self._pending)
        return self._searcher

    def _build(self) -> None:
        import tantivy

        self._index = tantivy.Index(self._schema)
        self._write([s for s, body in enumerate(self._bodies) if body is not None])
        self._stale = False

    def _write(self, slots: list[int]) -> None:
        import tantivy

        writer = self._index.writer(heap_size=_WRITER_HEAP, num_threads=1)
        for slot in slots:
            doc = tantivy.Document()
            doc.add_text("body", self._bodies[slot] or "")  # never a removed slot here
            doc.add_integer("slot", slot)
            writer.add_document(doc)
        writer.commit()
        self._index.reload()
        if self._index.searcher().num_segments > _MAX_SEGMENTS:
            writer.wait_merging_threads()  # merges what the commit found worth merging, then lets the writer go
            self._index.reload()
        del writer  # dropped, a writer cancels its merges: each batch costs a commit, not a merge
        self._searcher = self._index.searcher()
        self._pending = []
        self.writes += 1
