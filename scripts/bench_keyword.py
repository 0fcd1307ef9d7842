"""Keyword-search libraries side by side for one NPC's memories: the hand-written BM25 the project had, bm25s,
tantivy and SQLite FTS5 (Python's own sqlite3, an in-memory side database). Every engine is fed the project's
tokens (memory_sim.memory.recalling.keyword.tokenize, joined by spaces), so only the engine differs.

Per engine and size (1k / 10k / 100k memories, LoCoMo's vocabulary): bulk build, one memory added and
searchable, one memory deleted and no longer found, query p50 returning every matching memory's score (what
hybrid recall fuses), resident memory added by the index, and agreement with exact Lucene BM25 (top-10 overlap,
largest difference of max-normalised scores). Then BM25-only recall@5 on LoCoMo per engine, and bm25s with
PyStemmer's Snowball stemmer in place of the project's light one. Each engine and size runs in its own process
(clean memory figures). Writes benchmarks/keyword.{json,md}.

    .venv/bin/python scripts/bench_keyword.py [--sizes 1000 10000 100000] [--engines ...]

bm25s and PyStemmer are only needed here: `pip install -e '.[keyword-bench]'` (engines not installed are left
out).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_memory_scale import QUERIES, locomo_path, texts, words  # noqa: E402

ENGINES = ("hand-written", "bm25s", "tantivy", "sqlite-fts5")
Tokens = list[str]


class Engine(Protocol):
    def build(self, docs: list[Tokens]) -> None: ...
    def add(self, position: int, tokens: Tokens) -> None: ...
    def delete(self, position: int) -> None: ...
    def scores(self, query: Tokens) -> tuple[np.ndarray, np.ndarray]: ...  # positions, scores


class HandWritten:
    """The project's BM25 before tantivy (scripts/bm25_reference.py): a Python step per posting; no delete, so
    a removal rebuilds it."""

    def build(self, docs: list[Tokens]) -> None:
        self._build(dict(enumerate(docs)))

    def _build(self, docs: dict[int, Tokens]) -> None:
        from bm25_reference import ReferenceBM25

        self.docs, self.index = docs, ReferenceBM25()
        for position, tokens in docs.items():
            self.index.add_tokens(str(position), tokens)

    def add(self, position: int, tokens: Tokens) -> None:
        self.docs[position] = tokens
        self.index.add_tokens(str(position), tokens)

    def delete(self, position: int) -> None:
        self._build({p: d for p, d in self.docs.items() if p != position})

    def scores(self, query: Tokens) -> tuple[np.ndarray, np.ndarray]:
        found = self.index.score_tokens(query)
        positions = np.fromiter((int(self.index.ids[p]) for p in found), np.int64, len(found))
        return positions, np.fromiter(found.values(), np.float64, len(found))


class Bm25s:
    """Static: a new or removed document rebuilds the index (idf and average length change for all)."""

    def build(self, docs: list[Tokens]) -> None:
        self._build(dict(enumerate(docs)))

    def _build(self, docs: dict[int, Tokens]) -> None:
        import bm25s

        self.docs = docs
        self.positions = np.fromiter(docs.keys(), np.int64, len(docs))
        self.index = bm25s.BM25(k1=1.2, b=0.75, method="lucene", dtype="float64")
        self.index.index(list(docs.values()), show_progress=False)

    def add(self, position: int, tokens: Tokens) -> None:
        self._build(self.docs | {position: tokens})

    def delete(self, position: int) -> None:
        self._build({p: d for p, d in self.docs.items() if p != position})

    def scores(self, query: Tokens) -> tuple[np.ndarray, np.ndarray]:
        known = [t for t in query if t in self.index.vocab_dict]
        if not known:
            return np.zeros(0, np.int64), np.zeros(0)
        scores = self.index.get_scores(known) * 2.2  # bm25s leaves out the constant (k1 + 1)
        found = np.flatnonzero(scores)
        return self.positions[found], scores[found]


class Tantivy:
    def build(self, docs: list[Tokens]) -> None:
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", tokenizer_name="whitespace", index_option="freq")
        builder.add_unsigned_field("pos", indexed=True, fast=True)
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema)
        self.writer = self.index.writer(heap_size=15_000_000, num_threads=1)
        for i, tokens in enumerate(docs):
            self.writer.add_document(self._doc(i, tokens))
        self._commit()

    def _commit(self) -> None:
        self.writer.commit()
        self.index.reload()
        self.searcher = self.index.searcher()

    def add(self, position: int, tokens: Tokens) -> None:
        self.writer.add_document(self._doc(position, tokens))
        self._commit()

    def _doc(self, position: int, tokens: Tokens) -> Any:
        import tantivy

        doc = tantivy.Document()
        doc.add_text("body", " ".join(tokens))
        doc.add_unsigned("pos", position)
        return doc

    def delete(self, position: int) -> None:
        import tantivy

        self.writer.delete_documents_by_query(tantivy.Query.term_query(self.schema, "pos", position))
        self._commit()

    def scores(self, query: Tokens) -> tuple[np.ndarray, np.ndarray]:
        import tantivy

        if not query:
            return np.zeros(0, np.int64), np.zeros(0)
        clauses = [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "body", t)) for t in query]
        hits = self.searcher.search(tantivy.Query.boolean_query(clauses), limit=max(1, self.searcher.num_docs),
                                    count=False).hits
        positions = self.searcher.fast_field_values("pos", [address for _, address in hits])
        return np.asarray(positions, np.int64), np.asarray([score for score, _ in hits], np.float64)


class Fts5:
    def build(self, docs: list[Tokens]) -> None:
        import sqlite3

        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE kw USING fts5(body, tokenize='ascii')")
        self.db.executemany("INSERT INTO kw(rowid, body) VALUES (?, ?)", ((i, " ".join(d)) for i, d in enumerate(docs)))

    def add(self, position: int, tokens: Tokens) -> None:
        self.db.execute("INSERT INTO kw(rowid, body) VALUES (?, ?)", (position, " ".join(tokens)))

    def delete(self, position: int) -> None:
        self.db.execute("DELETE FROM kw WHERE rowid = ?", (position,))

    def scores(self, query: Tokens) -> tuple[np.ndarray, np.ndarray]:
        if not query:
            return np.zeros(0, np.int64), np.zeros(0)
        match = " OR ".join(f'"{t}"' for t in query)
        rows = self.db.execute("SELECT rowid, -bm25(kw) FROM kw WHERE kw MATCH ?", (match,)).fetchall()
        found = np.asarray(rows, np.float64).reshape(-1, 2)
        return found[:, 0].astype(np.int64), found[:, 1]


MAKERS: dict[str, Callable[[], Engine]] = {
    "hand-written": HandWritten, "bm25s": Bm25s, "tantivy": Tantivy, "sqlite-fts5": Fts5,
}


def installed(engine: str) -> bool:
    import importlib.util

    module = {"bm25s": "bm25s", "tantivy": "tantivy"}.get(engine)
    return module is None or importlib.util.find_spec(module) is not None


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def exact(docs: list[Tokens], query: Tokens) -> dict[int, float]:
    engine = HandWritten()
    engine.build(docs)
    positions, scores = engine.scores(query)
    return dict(zip(positions.tolist(), scores.tolist()))


def top10(found: dict[int, float]) -> list[int]:
    return [p for p, _ in sorted(found.items(), key=lambda item: (-item[1], item[0]))[:10]]


def run_one(engine_name: str, n: int, seed: int, adds: int) -> dict[str, Any]:
    """One engine at one size, in this process."""
    from memory_sim.memory.recalling.keyword import tokenize

    rng = random.Random(seed)
    docs = [tokenize(t) for t in texts(n + adds, words(), rng)]
    queries = [tokenize(q) for q in QUERIES]
    engine = MAKERS[engine_name]()
    before = rss_mb()
    started = time.perf_counter()
    engine.build(docs[:n])
    build_s = time.perf_counter() - started
    memory = rss_mb() - before
    times = []
    for q in queries * 3:
        started = time.perf_counter()
        engine.scores(q)
        times.append((time.perf_counter() - started) * 1000)
    agree, worst = [], 0.0
    for q in queries:
        positions, scores = engine.scores(q)
        got, want = dict(zip(positions.tolist(), scores.tolist())), exact(docs[:n], q)
        agree.append(len(set(top10(got)) & set(top10(want))) / max(1, len(top10(want))))
        top_got, top_want = max(got.values(), default=1.0), max(want.values(), default=1.0)
        worst = max([worst] + [abs(got.get(p, 0.0) / top_got - s / top_want) for p, s in want.items()])
    add_ms = []
    for i in range(n, n + adds):
        started = time.perf_counter()
        engine.add(i, docs[i])
        add_ms.append((time.perf_counter() - started) * 1000)
    found_new = i in engine.scores(docs[i])[0].tolist()
    started = time.perf_counter()
    engine.delete(i)
    delete_ms = (time.perf_counter() - started) * 1000
    gone = i not in engine.scores(docs[i])[0].tolist()
    return {
        "engine": engine_name, "memories": n, "build_s": round(build_s, 3), "memory_mb": round(memory, 1),
        "query_p50_ms": round(statistics.median(times), 2), "add_ms": round(statistics.median(add_ms), 2),
        "delete_ms": round(delete_ms, 2), "added_found": found_new, "deleted_gone": gone,
        "top10_agreement": round(statistics.fmean(agree), 3), "max_score_diff": round(worst, 4),
    }


def after_deletes(engine_name: str, seed: int, n: int = 1000, deletes: int = 100) -> float:
    """Largest difference of max-normalised scores against exact BM25 over the memories left, after deleting
    every tenth: an engine that keeps deleted documents in its statistics drifts from a fresh build."""
    from memory_sim.memory.recalling.keyword import tokenize

    docs = [tokenize(t) for t in texts(n, words(), random.Random(seed))]
    engine = MAKERS[engine_name]()
    engine.build(docs)
    gone = set(range(0, n, n // deletes))
    for position in sorted(gone):
        engine.delete(position)
    worst = 0.0
    for q in [tokenize(q) for q in QUERIES]:
        positions, scores = engine.scores(q)
        got = dict(zip(positions.tolist(), scores.tolist()))
        want = {p: s for p, s in exact([d for i, d in enumerate(docs) if i not in gone], q).items()}
        kept = [i for i in range(n) if i not in gone]
        want = {kept[p]: s for p, s in want.items()}
        top_got, top_want = max(got.values(), default=1.0), max(want.values(), default=1.0)
        worst = max([worst] + [abs(got.get(p, 0.0) / top_got - s / top_want) for p, s in want.items()])
    return round(worst, 4)


def locomo_recall(engine_name: str, tokenizer: Callable[[str], Tokens]) -> float | None:
    """BM25 alone on LoCoMo: recall@5 over the questions, each ranked against its conversation's turns."""
    from memory_sim.eval.metrics import question_scores
    from memory_sim.locomo import load_locomo

    path = locomo_path()
    if path is None:
        return None
    recalls = []
    for conv in load_locomo(path):
        turns = conv.turns
        engine = MAKERS[engine_name]()
        engine.build([tokenizer(f"{t.speaker}: {t.text}") for t in turns])
        for question in conv.questions:
            positions, scores = engine.scores(tokenizer(question.text))
            order = sorted(zip(scores.tolist(), positions.tolist()), key=lambda item: (-item[0], item[1]))
            ranked = [turns[p].id for _, p in order[:5]]
            recalls.append(question_scores(ranked, question.evidence, (5,))["recall@5"])
    return round(statistics.fmean(recalls), 4)


def snowball_tokens(text: str) -> Tokens:
    import Stemmer

    from memory_sim.memory.recalling.keyword import tokenize

    return Stemmer.Stemmer("english").stemWords(tokenize(text, stemming=False))


def markdown(
    results: list[dict[str, Any]], quality: dict[str, float | None], drift: dict[str, float], meta: dict[str, Any]
) -> str:
    lines = [
        "# Keyword search libraries for one NPC's memories", "",
        f"{meta['machine']}; load average at start {meta['load']}. Every engine gets the project's tokens "
        "(stopwords dropped, light stemmer); query = every matching memory with its score (what hybrid recall "
        "fuses), p50 over 30 queries. Add: one memory added and searchable; delete: one removed and gone. "
        "Agreement: top-10 overlap with exact Lucene BM25, and the largest difference of max-normalised scores.", "",
        "| engine | memories | build, s | memory, MB | query p50, ms | add, ms | delete, ms | top-10 agreement |"
        " max score diff |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['engine']} | {r['memories']} | {r['build_s']} | {r['memory_mb']} | {r['query_p50_ms']} |"
            f" {r['add_ms']} | {r['delete_ms']} | {r['top10_agreement']} | {r['max_score_diff']} |"
        )
    lines += ["", "After deleting every tenth of 1,000 memories, the largest difference of max-normalised scores "
              "against exact BM25 over the memories left:", "", "| engine | max score diff |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in drift.items()]
    lines += ["", "LoCoMo, BM25 alone (1,531 questions, each against its conversation's turns): recall@5", "",
              "| engine (tokens) | recall@5 |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in quality.items()]
    lines += ["", WHY]
    return "\n".join(lines) + "\n"


WHY = (
    "Chosen: tantivy (memory/recalling/keyword.py). Memories arrive one at a time and a recall must see them: tantivy adds"
    " one in milliseconds at any size and answers a 100k-memory query in 0.7-2 ms. bm25s scores"
    " fastest but cannot add or delete without rebuilding (seconds at 100k). SQLite FTS5 adds instantly but its"
    " query at 100k is 6-16x slower than tantivy's, and its idf differs from Lucene's (recall@5 0.516 against 0.521)."
    " tantivy's own delete leaves the deleted memories in its statistics until segments merge (the drift above),"
    " so BM25Index rebuilds from its kept tokens after a removal instead. PyStemmer's Snowball stemmer would add"
    " about 0.016 to BM25-only recall@5, but changes every score the hybrid weights were tuned on; not taken here."
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--one", nargs=2, metavar=("ENGINE", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.engines = [e for e in args.engines if installed(e)]
    if args.one:
        adds = 3 if args.one[0] == "bm25s" else 20
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.seed, adds)))
        return
    meta = {"machine": f"{platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}",
            "load": round(os.getloadavg()[0], 2)}
    results = []
    for n in args.sizes:
        for name in args.engines:
            out = subprocess.run([sys.executable, __file__, "--one", name, str(n), "--seed", str(args.seed)],
                                 check=True, capture_output=True, text=True).stdout
            results.append(json.loads(out.strip().splitlines()[-1]))
            print(json.dumps(results[-1]), flush=True)
    from memory_sim.memory.recalling.keyword import tokenize

    drift = {name: after_deletes(name, args.seed) for name in args.engines}
    print(json.dumps(drift))
    quality = {f"{name} (project tokens)": locomo_recall(name, tokenize) for name in args.engines}
    if "bm25s" in args.engines and importlib.util.find_spec("Stemmer") is not None:
        quality["bm25s (PyStemmer Snowball instead of the light stemmer)"] = locomo_recall("bm25s", snowball_tokens)
    print(json.dumps(quality))
    out = ROOT / "benchmarks"
    (out / "keyword.json").write_text(json.dumps({"meta": meta, "results": results, "locomo_bm25_recall@5": quality,
                                                  "max_score_diff_after_deletes": drift},
                                                 indent=2) + "\n", "utf-8")
    (out / "keyword.md").write_text(markdown(results, quality, drift, meta), "utf-8")
    print(markdown(results, quality, drift, meta))


if __name__ == "__main__":
    main()
