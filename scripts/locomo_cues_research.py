"""The ways in tried past the hybrid plateau on LoCoMo, measured on the tuning conversations (conv-26, conv-30)
with the research harness's ranking (scripts/locomo_research.py: embeddings cached, every turn of a conversation
ranked): speaker focus, "when" questions, dates named in questions, trait questions, session diversity,
pseudo-relevance feedback, session boosts, fusion and neighbour weights. Exploratory code, kept so the figures in
docs/recall-quality.md can be reproduced; what was kept lives in memory_sim/memory/recalling/cues.py and is
measured through the API by `memory-sim eval locomo`.

    .venv/bin/python scripts/locomo_cues_research.py [--data PATH] [--cache /tmp/memory_sim_locomo]

Prints a Markdown table: each variant's recall@5 on the tuning conversations, per category, and (for the chain
of kept steps only) on the eight held-out conversations.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1])); sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_research import CachedEmbedder, turn_text

from memory_sim.locomo import CATEGORY_NAMES, load_locomo
from memory_sim.memory.recalling.hybrid import (
    HybridParams,
    Timeline,
    hybrid_scores,
    neighbour_context,
    normalise_max,
    normalise_minmax,
    top_ids,
    weighted_fusion,
)
from memory_sim.memory.recalling.keyword import BM25Index

DEV = {"conv-26", "conv-30"}
CONVS: list = []
EMB: CachedEmbedder | None = None

class Ctx:
    def __init__(self, conv):
        self.conv = conv
        self.turns = conv.turns
        self.ids = [t.id for t in self.turns]
        self.texts = [turn_text(t.speaker, t.text) for t in self.turns]
        self.qvec = EMB([q.text for q in conv.questions]); self.tvec = EMB(self.texts)
        self.sim = self.qvec @ self.tvec.T
        self.bm = BM25Index(); self.bm.extend(zip(self.ids, self.texts))
        self.timeline = Timeline.of([[t.id for t in s.turns] for s in conv.sessions])
        self.pos = self.timeline.positions()
        self.speaker = {t.id: t.speaker for t in self.turns}
        self.text = dict(zip(self.ids, self.texts))
        self.session = {t.id: t.session for t in self.turns}
        self.index = {t.id: t.index for t in self.turns}
        self.date = {s.number: s.started for s in conv.sessions}
    def vector_top(self, qi, n=100, sims=None):
        s = self.sim[qi] if sims is None else sims
        best = np.argsort(-s, kind="stable")[:n]
        return {self.ids[j]: float(s[j]) for j in best}

CTXS = None
def ctxs(which="dev"):
    global CTXS
    if CTXS is None:
        CTXS = {c.id: Ctx(c) for c in CONVS}
    return [c for k, c in CTXS.items() if which == "all" or (k in DEV) == (which == "dev")]

def score_rows(rank, which="dev"):
    rows = []
    for cx in ctxs(which):
        for qi, q in enumerate(cx.conv.questions):
            ranked = rank(cx, qi)
            gold = set(q.evidence)
            gs = {g.split(":")[0] for g in gold}
            rows.append({"conv": cx.conv.id, "cat": q.category,
                         "r5": len(gold & set(ranked[:5])) / len(gold), "r10": len(gold & set(ranked[:10])) / len(gold),
                         "s5": float(bool(gs & {r.split(':')[0] for r in ranked[:5]})),
                         "s10": float(bool(gs & {r.split(':')[0] for r in ranked[:10]}))})
    return rows

def summary(rows):
    m = lambda rs, k: round(statistics.fmean(r[k] for r in rs), 4) if rs else float("nan")
    out = {"r5": m(rows, "r5"), "r10": m(rows, "r10"), "s5": m(rows, "s5"), "s10": m(rows, "s10")}
    for c in (1, 2, 3, 4):
        out[CATEGORY_NAMES[c][:5]] = m([r for r in rows if r["cat"] == c], "r5")
    return out

def base_rank(cx, qi, params=HybridParams()):
    q = cx.conv.questions[qi].text
    s = hybrid_scores(cx.vector_top(qi), cx.bm.scores(q), cx.timeline, params, cx.pos)
    return top_ids(s, 10)

from datetime import date, timedelta

NAME_WORD = re.compile(r"[A-Za-z][a-z']+")
SUBJ = [False]
def named_speakers(cx, q):
    if SUBJ[0]:
        return subject_speakers(cx, q)
    words = {w.lower().removesuffix("'s") for w in NAME_WORD.findall(q)}
    out = set()
    for s in cx.conv.speakers:
        first = s.split()[0].lower()
        if first in words or (first[:3] in words and len(first) > 3 and first[:3] == "mel"):
            out.add(s)
    return out

TIME_WORDS_OLD = re.compile(r"\b(yesterday|today|tonight|last (night|week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday|summer|winter|spring|fall)|this (week|weekend|month|morning|year)|(a|two|three|few|couple of) (days|weeks|months|years) ago|ago|recently|next (week|month|year)|tomorrow|since|\b(in|on) (january|february|march|april|may|june|july|august|september|october|november|december)|\b20\d\d)\b", re.I)
WD = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
MO = "january|february|march|april|may|june|july|august|september|october|november|december"
TIME_WORDS = re.compile(r"\b(yesterday|today|tonight|tomorrow|recently|lately|the other (day|night|week)|"
    r"(last|this|next|past|previous) (night|morning|evening|week|weekend|month|year|summer|winter|spring|fall|autumn|" + WD + r")|"
    r"(a|an|one|two|three|four|five|six|few|couple of|couple|several) (days?|weeks?|months?|years?) ago|ago\b|"
    r"(on|last|this) (" + WD + r")|(in|since|during|last|this) (" + MO + r")|(19|20)\d\d|since|just (got|finished|started|went))\b", re.I)
TRAITS = re.compile(r"\b(i|i'm|i am|i've|my)\b.{0,40}\b(love|loves|like|likes|enjoy|enjoys|fan of|favou?rite|passion|passionate|into|keen|dream|hope|want|value|believe|prefer|always|never|hate|afraid|goal)\b", re.I)
def asks_trait(q):
    ql = q.lower()
    return bool(re.match(r"(would|could|might|is|does|do|will|what might|what would)\b", ql)) or "likely" in ql
LISTY = re.compile(r"\b(both|in common|how many|what (kinds?|types?) of|what are|all)\b|^what \w+s\b", re.I)
def asks_hypothetical(q):
    ql = q.lower()
    return bool(re.match(r"(would|could|might|what might|what would)\b", ql)) or "likely" in ql
def asks_when(q):
    ql = q.lower()
    return ql.startswith("when") or " when " in ql or ql.startswith("how long") or "what year" in ql or "what month" in ql

def rank_v(cx, qi, *, params=HybridParams(), spk=0.0, spk_mode="mul", when=0.0, diverse=0.0, prf=0, prf_w=0.3,
           date_w=0.0, trait=0.0, narrow_trait=False, listy=0.0, dropname=False, sess=0.0, old_time=False, vec_n=100, spk_after=False, all_after=False, both=False, only=None):
    q = cx.conv.questions[qi].text
    vec = cx.vector_top(qi, vec_n)
    kq = q
    if dropname:
        for s_ in named_speakers(cx, q):
            kq = re.sub(r"\b" + s_.split()[0] + r"('s)?\b", " ", kq)
    kw = cx.bm.scores(kq)
    if prf:
        fusedp = weighted_fusion([(normalise_minmax(vec), params.vector_weight), (normalise_max(kw), params.keyword_weight)])
        top = top_ids(fusedp, prf)
        extra = " ".join(cx.text[i].split(":", 1)[1] for i in top)
        kw2 = cx.bm.scores(extra)
        kw2n = normalise_max(kw2)
        kwn = normalise_max(kw)
        kw = {i: kwn.get(i, 0) + prf_w * kw2n.get(i, 0) for i in set(kwn) | set(kw2n)}
    fused = weighted_fusion([(normalise_minmax(vec), params.vector_weight), (normalise_max(kw), params.keyword_weight)])
    named = (only or named_speakers(cx, q)) if spk else set()
    if both and spk and len(named) == 2 and only is None:
        kw_ = dict(narrow_trait=narrow_trait, dropname=dropname, sess=sess, trait=trait, listy=listy, old_time=old_time, params=params, spk=spk, when=when, diverse=diverse, prf=prf, prf_w=prf_w, date_w=date_w, vec_n=vec_n, spk_after=spk_after, all_after=all_after)
        a = rank_v(cx, qi, only={sorted(named)[0]}, **kw_); b = rank_v(cx, qi, only={sorted(named)[1]}, **kw_)
        out = []
        for x, y in zip(a, b):
            for z in (x, y):
                if z not in out: out.append(z)
        return out[:10]
    def adjust(scores, after):
        out = dict(scores)
        if spk and len(named) == 1 and (spk_after == after):
            for i in out:
                if cx.speaker[i] in named: out[i] = out[i] * (1 + spk)
        if all_after != after:
            return out
        if when and asks_when(q):
            for i in out:
                if (TIME_WORDS_OLD if old_time else TIME_WORDS).search(cx.text[i]): out[i] = out[i] * (1 + when)
        if trait and (asks_hypothetical(q) if narrow_trait else asks_trait(q)):
            for i in out:
                if TRAITS.search(cx.text[i]): out[i] = out[i] * (1 + trait)
        if date_w:
            rng = query_dates(q)
            if rng:
                lo, hi = rng
                for i in out:
                    d = cx.date[cx.session[i]].date()
                    if lo - timedelta(days=1) <= d <= hi + timedelta(days=7): out[i] = out[i] * (1 + date_w)
        return out
    fused = adjust(fused, False)
    s = neighbour_context(fused, cx.timeline, params.neighbour_weights, cx.pos)
    if sess:
        best = {}
        for i, v in s.items():
            best[cx.session[i]] = max(best.get(cx.session[i], 0), v)
        top = max(best.values())
        s = {i: v + sess * best[cx.session[i]] / top for i, v in s.items()}
    s = adjust(s, True)
    if diverse:
        return diversify(cx, s, diverse)
    if listy and LISTY.search(q):
        return session_diverse(cx, s, listy)
    return top_ids(s, 10)

def diversify(cx, s, penalty, k=10):
    cand = top_ids(s, 40)
    chosen = []
    while cand and len(chosen) < k:
        best, bscore = None, -1
        for i in cand:
            sc = s[i]
            if any(cx.session[i] == cx.session[j] and abs(cx.index[i] - cx.index[j]) <= 1 for j in chosen):
                sc *= (1 - penalty)
            if sc > bscore: best, bscore = i, sc
        chosen.append(best); cand.remove(best)
    return chosen

YEAR_ONLY = [False]
MONTHS = {m: i + 1 for i, m in enumerate("january february march april may june july august september october november december".split())}
DATE_RE = re.compile(r"\b(?:(\d{1,2})\s+)?(january|february|march|april|may|june|july|august|september|october|november|december)(?:\s+(\d{1,2})(?:st|nd|rd|th)?)?,?\s*(20\d\d)?\b", re.I)
def query_dates(q):
    m = DATE_RE.search(q)
    if not m or not (m.group(4)):
        y = re.search(r"\bin ((?:19|20)\d\d)\b", q)
        return (date(int(y.group(1)), 1, 1), date(int(y.group(1)), 12, 31)) if y and YEAR_ONLY[0] else None
    day = m.group(1) or m.group(3)
    month = MONTHS[m.group(2).lower()]
    year = int(m.group(4)) if m.group(4) else None
    if year is None:
        return None
    if m.group(2).lower() == "may" and not day and not m.group(4):
        return None
    import calendar
    if day:
        d = date(year, month, int(day))
        return d, d
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])

def session_diverse(cx, s, penalty, k=10):
    cand = top_ids(s, 40)
    chosen = []
    while cand and len(chosen) < k:
        best, bscore = None, -1
        for i in cand:
            n = sum(cx.session[i] == cx.session[j] for j in chosen)
            sc = s[i] * (1 - penalty) ** n
            if sc > bscore: best, bscore = i, sc
        chosen.append(best); cand.remove(best)
    return chosen

def subject_speakers(cx, q):
    words = [w.lower().removesuffix("'s").removesuffix("'") for w in re.findall(r"[A-Za-z']+", q)]
    firsts = {s.split()[0].lower(): s for s in cx.conv.speakers}
    hits = [(i, firsts[w]) for i, w in enumerate(words) if w in firsts]
    names = list(dict.fromkeys(s for _, s in hits))
    if len(names) <= 1:
        return set(names)
    # "Jon and Gina": a joint subject, no single focus
    i0 = hits[0][0]
    second = next(i for i, s in hits if s != hits[0][1])
    if second == i0 + 2 and words[i0 + 1] in ("and", "or", "&"):
        return set(names)
    return {names[0]}


BROAD = dict(spk=1.0, when=1.0, date_w=1.0, spk_after=True, trait=1.0)
KEPT = BROAD | dict(narrow_trait=True)
VARIANTS = [  # (name, kwargs, subject rule, year-only dates, held-out too)
    ("hybrid as shipped (no cues)", {}, False, False, True),
    ("speaker named: x2 before neighbours", dict(spk=1.0), False, False, False),
    ("speaker named: x4 before neighbours", dict(spk=3.0), False, False, False),
    ("speaker named: x2 after neighbours", dict(spk=1.0, spk_after=True), False, False, True),
    ("when question: timed turns x2", dict(when=1.0), False, False, True),
    ("date named: its days x2", dict(date_w=1.0), False, False, True),
    ("adjacent-turn diversity 0.2", dict(diverse=0.2), False, False, False),
    ("pseudo-relevance feedback, top 3, 0.3", dict(prf=3, prf_w=0.3), False, False, False),
    ("speaker after + when + date", dict(spk=1.0, when=1.0, date_w=1.0, spk_after=True), False, False, True),
    ("+ trait question (any yes/no): first-person tastes x2", BROAD, False, False, True),
    ("+ subject = first named unless joined", BROAD, True, False, True),
    ("+ trait cue only for hypotheticals (would, could, might, likely) (kept)", KEPT, True, False, True),
    ("  then: session diversity for list questions 0.2", KEPT | dict(listy=0.2), True, False, False),
    ("  then: joint subjects ranked apart and interleaved", KEPT | dict(both=True), True, False, False),
    ("  then: speaker names dropped from the BM25 query", KEPT | dict(dropname=True), True, False, False),
    ("  then: session boost 0.5 x best in session", KEPT | dict(sess=0.5), True, False, False),
    ("  then: session boost 0.3 x best in session", KEPT | dict(sess=0.3), True, False, False),
    ("  then: session boost 0.5 and neighbour weights 0.6/0.3",
     KEPT | dict(sess=0.5, params=HybridParams(neighbour_weights=(0.6, 0.3))), True, False, False),
    ("  then: year-only dates resolved", KEPT, True, True, False),
    ("  then: all cues after neighbours", KEPT | dict(all_after=True), True, False, False),
    ("  then: vector weight 0.35", KEPT | dict(params=HybridParams(vector_weight=0.35, keyword_weight=0.65)), True, False, False),
    ("  then: neighbour weights 0.6/0.3", KEPT | dict(params=HybridParams(neighbour_weights=(0.6, 0.3))), True, False, False),
]


def main() -> int:
    global EMB
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo10.json")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/memory_sim_locomo"))
    args = parser.parse_args()
    CONVS.extend(load_locomo(args.data))
    EMB = CachedEmbedder(args.cache)
    print("| variant | tuning r@5 | multi-hop | temporal | open-domain | single-hop | held-out r@5 |")
    print("|---|---|---|---|---|---|---|")
    for name, kw, subject, year_only, held in VARIANTS:
        SUBJ[0], YEAR_ONLY[0] = subject, year_only
        dev = summary(score_rows(lambda cx, qi: rank_v(cx, qi, **kw), "dev"))
        out = summary(score_rows(lambda cx, qi: rank_v(cx, qi, **kw), "held"))["r5"] if held else None
        print(f"| {name} | {dev['r5']:.3f} | {dev['multi']:.3f} | {dev['tempo']:.3f} | {dev['open-']:.3f} | "
              f"{dev['singl']:.3f} | {'-' if out is None else f'{out:.3f}'} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
