"""LoCoMo evidence recall through the project's recall API (`MemorySystem.recall` / `weighted_recall`).

Each conversation's two speakers become NPCs who both remember the whole conversation: every turn is a
`ShortTermMemory` `Speaker: text` on the session's sim day (days since the first session) at the session's hour,
id `<conversation>:<speaker>:D<session>:<turn>` (memory ids are global in D1 and the index, so the turn id is
kept as the suffix), remembered in order and indexed regardless of importance. Every question of categories
1-4 with a well-formed evidence id is asked, as written, through `recall` of one of the two speakers
(alternating), top 10. Nothing here sees the gold labels but the scoring.

Modes: `vector`, `keyword` (BM25 over D1), `hybrid` (recall(mode="hybrid")) and `weighted` (weighted_recall on
the default mode, the conversation's last day as today; every turn has the same importance). `weighted:<preset>`
ranks by another scoring preset (memory/recalling/presets.py); weighted recall records last access, so each
weighted mode starts from the accesses the ones before it found (none) and they are put back after it.

Figures are given at turn level (a gold turn retrieved) and at session level (a retrieved turn in a gold turn's
session: eval/metrics.py), overall, per category, and on the tuning conversations (conv-26, conv-30: the only
ones any recall parameter was tuned on) apart from the eight held out.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from memory_sim.eval.metrics import KS, latency_summary, mean_scores, question_scores, session_scores
from memory_sim.locomo import CATEGORY_NAMES, Conversation, Session
from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.recalling import access
from memory_sim.memory.recalling.presets import SCORINGS, Scoring
from memory_sim.memory.system import MemorySystem

MODES: tuple[str, ...] = ("vector", "keyword", "hybrid", "weighted")
TUNING: frozenset[str] = frozenset({"conv-26", "conv-30"})  # recall's parameters were tuned on these alone
EVAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
TURN_IMPORTANCE = 0.5  # LoCoMo has no importance; all turns alike, so weighted recall ranks by score and age
TOP_K = max(KS)
Timer = Callable[[], float]


def speaker_npc(conversation_id: str, speaker: str) -> str:
    return f"{conversation_id}:{re.sub(r'[^a-z0-9]+', '-', speaker.lower()).strip('-')}"


def turn_memory_id(npc_id: str, turn_id: str) -> str:
    return f"{npc_id}:{turn_id}"


def turn_id_of(npc_id: str, memory_id: str) -> str:
    return memory_id[len(npc_id) + 1 :]


def day_offset(conversation: Conversation, day_zero: date | None) -> int:
    """Sim days from `day_zero` to the conversation's first session (0 without a calendar): every conversation's
    days then count from one date, the calendar recall resolves the dates a question names against."""
    if day_zero is None or not conversation.sessions:
        return 0
    return (min(s.started for s in conversation.sessions).date() - day_zero).days


def calendar_start(conversations: Sequence[Conversation]) -> date | None:
    """The earliest first session's date: sim day 0 of the evaluation."""
    return min((s.started.date() for c in conversations for s in c.sessions), default=None)


def session_memories(npc_id: str, session: Session, offset: int = 0) -> list[ShortTermMemory]:
    when = WorldTime(session.day + offset, session.started.hour)
    return [
        ShortTermMemory(npc_id, f"{t.speaker}: {t.text}", TURN_IMPORTANCE, when, id=turn_memory_id(npc_id, t.id))
        for t in session.turns
    ]


def remember_conversation(system: MemorySystem, conversation: Conversation, offset: int = 0) -> tuple[str, str]:
    """Both speakers remember every turn, in order, `offset` sim days on; returns their NPC ids."""
    npcs = tuple(speaker_npc(conversation.id, s) for s in conversation.speakers)
    for npc in npcs:
        memories = [m for session in conversation.sessions for m in session_memories(npc, session, offset)]
        system.remember_many(memories, index_all=True)
    return npcs[0], npcs[1]


def turn_session(turn_id: str) -> str:
    """LoCoMo's session of a turn id: `D3` for `D3:12`."""
    return turn_id.split(":", 1)[0]


def is_mode(mode: str) -> bool:
    """One of MODES, or `weighted:<preset>` for a scoring preset of weighted recall."""
    name, _, preset = mode.partition(":")
    return mode in MODES or (name == "weighted" and preset in SCORINGS)


def with_scorings(modes: Sequence[str], scorings: Sequence[str]) -> list[str]:
    """`weighted` once per scoring preset: `weighted` for the design's, `weighted:<preset>` for the others."""
    named = ["weighted" if s == "design" else f"weighted:{s}" for s in scorings]
    return [n for m in modes for n in (named if m == "weighted" else [m])]


def last_day(conversation: Conversation) -> int:
    return max((s.day for s in conversation.sessions), default=0)


def ask(system: MemorySystem, npc_id: str, question: str, mode: str, today: int) -> list[str]:
    """The top-10 turn ids this NPC recalls for the question in `mode`."""
    if mode == "weighted" or mode.startswith("weighted:"):
        scoring: Scoring = mode.partition(":")[2] or "design"  # type: ignore[assignment]
        found = system.weighted_recall(npc_id, question, current_day=today, top_k=TOP_K, scoring=scoring)
    else:
        found = system.recall(npc_id, question, top_k=TOP_K, mode=mode)  # type: ignore[arg-type]
    return [turn_id_of(npc_id, r.id) for r in found]


def evaluate(
    system: MemorySystem, conversations: Sequence[Conversation], modes: Sequence[str], timer: Timer = time.perf_counter,
    day_zero: date | None = None,
) -> dict[str, Any]:
    """Asks every question in every mode; returns per-mode metrics (overall, per category, tuning and held-out
    conversations apart) and latency. Mode by mode, the last accesses weighted recall records put back after each."""
    rows: dict[str, list[Row]] = {m: [] for m in modes}
    seconds: dict[str, list[float]] = {m: [] for m in modes}
    recorded = access.snapshot(system.env.DB)
    for mode in modes:
        for conversation in conversations:
            npcs = [speaker_npc(conversation.id, s) for s in conversation.speakers]
            today = last_day(conversation) + day_offset(conversation, day_zero)
            for qi, question in enumerate(conversation.questions):
                started = timer()
                ranked = ask(system, npcs[qi % 2], question.text, mode, today)
                seconds[mode].append(timer() - started)
                scores = question_scores(ranked, question.evidence) | session_scores(
                    ranked, question.evidence, turn_session
                )
                rows[mode].append(Row(conversation.id, question.category, scores))
        access.restore(system.env.DB, recorded)
    return {mode: summarise(rows[mode], seconds[mode]) for mode in modes}


@dataclass(frozen=True, slots=True)
class Row:
    """One question's scores in one mode, with what the report groups them by."""

    conversation: str
    category: int
    scores: dict[str, float]


def by_category(rows: Sequence[Row]) -> dict[str, dict[str, float]]:
    return {
        name: mean_scores([r.scores for r in rows if r.category == number])
        for number, name in CATEGORY_NAMES.items()
        if number != 5
    }


def summarise(rows: Sequence[Row], seconds: Sequence[float]) -> dict[str, Any]:
    """Means overall and per category, and the same for the tuning conversations and the held-out ones."""
    splits = {
        "tuning": [r for r in rows if r.conversation in TUNING],
        "held-out": [r for r in rows if r.conversation not in TUNING],
    }
    return {
        "overall": mean_scores([r.scores for r in rows]),
        "categories": by_category(rows),
        "splits": {name: {"overall": mean_scores([r.scores for r in part]), "categories": by_category(part)}
                   for name, part in splits.items()},
        "latency": latency_summary(seconds),
    }


def warm_query_cache(system: MemorySystem, conversations: Sequence[Conversation]) -> None:
    """Embeds every question once (the cache keeps them), so each mode's latency is measured alike: recall with
    the query embedding served from the cache."""
    questions = [q.text for c in conversations for q in c.questions]
    if questions:
        system.env.embedder.embed(questions, query=True)


def run_locomo(
    conversations: Sequence[Conversation],
    *,
    modes: Sequence[str] = MODES,
    work_dir: Path | None = None,
    cache: Path | None = None,
    model: str = EVAL_MODEL,
    progress: Callable[[str], None] = lambda _: None,
    d1_engine: str = "duckdb",
    config: MemoryConfig | None = None,
) -> dict[str, Any]:
    """The whole evaluation on a fresh local Env (Chroma + DuckDB + the model) in `work_dir` (a temp folder by
    default). `cache`: an embedding cache file copied in before and back after, so reruns skip the model.
    `config`: the memory system's (its calendar is set here: sim day 0 is the earliest session's date, so recall
    can resolve the dates questions name)."""
    from memory_sim.env import Env
    from memory_sim.sim.clock import SimClock

    unknown = sorted(m for m in modes if not is_mode(m))
    if unknown:
        raise ValueError(f"unknown modes {unknown}: expected some of {', '.join(MODES)} or weighted:<preset>")
    with tempfile.TemporaryDirectory(prefix="memory_sim_eval_") as tmp:
        data = Path(work_dir or tmp) / "locomo-data"
        if data.exists():
            shutil.rmtree(data)
        data.mkdir(parents=True)
        if cache is not None and cache.exists():
            shutil.copyfile(cache, data / "embeddings.sqlite")
        clock = SimClock()
        started = time.perf_counter()
        day_zero = calendar_start(conversations)
        config = (config or MemoryConfig()).replace(calendar_start=day_zero.isoformat() if day_zero else "")
        with Env.local(data, embed_model=model, d1_engine=d1_engine) as env:
            system = MemorySystem(env, clock=clock, config=config)
            for conversation in conversations:
                progress(f"remembering {conversation.id} ({len(conversation.turns)} turns x 2 speakers)")
                remember_conversation(system, conversation, day_offset(conversation, day_zero))
            # past the visibility window: recall must not re-embed "recent" rows it merges from D1
            end = max((last_day(c) + day_offset(c, day_zero) for c in conversations), default=0)
            clock.advance_to(WorldTime(end + 1))
            warm_query_cache(system, conversations)
            ingest_s = time.perf_counter() - started
            progress(f"asking {sum(len(c.questions) for c in conversations)} questions x {len(modes)} modes")
            results = evaluate(system, conversations, modes, day_zero=day_zero)
            vectors = system.stats().get("vectors", -1)
        if cache is not None:
            save_cache(data / "embeddings.sqlite", cache)
    meta = {
        "conversations": [c.id for c in conversations],
        "questions": sum(len(c.questions) for c in conversations),
        "memories": 2 * sum(len(c.turns) for c in conversations),
        "vectors": vectors,
        "model": model,
        "ingest_s": round(ingest_s, 1),
        "top_k": TOP_K,
        "calendar_start": config.calendar_start,
        "query_cues": config.query_cues,
    }
    return {"meta": meta, "modes": results}


def save_cache(source: Path, target: Path) -> None:
    """Copies the cache with sqlite's backup API (the source may still have a write-ahead log)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def markdown(report: dict[str, Any], machine: str) -> str:
    meta = report["meta"]
    lines = [
        f"# LoCoMo evidence recall through `MemorySystem.recall` ({meta['questions']} questions, "
        f"{len(meta['conversations'])} conversations)",
        "",
        f"Machine: {machine}. Model: {meta['model']}. Memories: {meta['memories']} (both speakers remember every "
        f"turn), ingest {meta['ingest_s']} s. Latency: one `recall` call, query embedding served from the cache.",
        "",
        "| mode | recall@1 | recall@5 | recall@10 | hit@1 | hit@5 | hit@10 | "
        + " | ".join(f"{n} r@5" for c, n in CATEGORY_NAMES.items() if c != 5)
        + " | p50 ms | p95 ms |",
        "|---" * 13 + "|",
    ]
    for mode, result in report["modes"].items():
        o, lat = result["overall"], result["latency"]
        cats = [result["categories"][n].get("recall@5", 0.0) for c, n in CATEGORY_NAMES.items() if c != 5]
        cells = [o["recall@1"], o["recall@5"], o["recall@10"], o["hit@1"], o["hit@5"], o["hit@10"], *cats]
        lines.append(
            f"| {mode} | " + " | ".join(f"{v:.3f}" for v in cells) + f" | {lat['p50_ms']:.1f} | {lat['p95_ms']:.1f} |"
        )
    return "\n".join(lines + session_table(report) + split_table(report)) + "\n"


def _cell(scores: dict[str, float], key: str) -> str:
    return f"{scores[key]:.3f}" if key in scores else "-"


def session_table(report: dict[str, Any]) -> list[str]:
    """Turn level beside session level, each labelled: published LoCoMo tables mix the two units."""
    lines = [
        "",
        "Turn level: a gold evidence turn is in the top k. Session level: a retrieved turn lies in a session that "
        "holds gold evidence (hit: any evidence session reached; recall: the share of evidence sessions reached). "
        "Session-level figures are higher by construction and compare only with session-level figures.",
        "",
        "| mode | turn recall@5 | turn recall@10 | session hit@5 | session hit@10 | session recall@5 "
        "| session recall@10 |",
        "|---" * 7 + "|",
    ]
    for mode, result in report["modes"].items():
        o = result["overall"]
        keys = ("recall@5", "recall@10", "session_hit@5", "session_hit@10", "session_recall@5", "session_recall@10")
        lines.append(f"| {mode} | " + " | ".join(_cell(o, k) for k in keys) + " |")
    return lines


def split_table(report: dict[str, Any]) -> list[str]:
    """recall@5 (turn level) on the tuning conversations apart from the held-out ones, per category."""
    names = [n for c, n in CATEGORY_NAMES.items() if c != 5]
    lines = [
        "",
        f"Tuning conversations ({', '.join(sorted(TUNING))}: every recall parameter was set on these alone) against "
        "the held-out ones, turn-level recall@5 (session hit@5 overall in the last column):",
        "",
        "| mode | split | questions | recall@5 | " + " | ".join(f"{n} r@5" for n in names) + " | session hit@5 |",
        "|---" * (5 + len(names)) + "|",
    ]
    for mode, result in report["modes"].items():
        for split, part in result.get("splits", {}).items():
            o = part["overall"]
            cats = [_cell(part["categories"][n], "recall@5") for n in names]
            lines.append(f"| {mode} | {split} | {o.get('questions', 0)} | {_cell(o, 'recall@5')} | "
                         + " | ".join(cats) + f" | {_cell(o, 'session_hit@5')} |")
    return lines
