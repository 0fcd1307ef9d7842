"""LoCoMo evidence recall through the project's recall API (`MemorySystem.recall` / `weighted_recall`).

Each conversation's two speakers become NPCs who both remember the whole conversation: every turn is a
`ShortTermMemory` `Speaker: text` on the session's sim day (days since the first session) at the session's hour,
id `<conversation>:<speaker>:D<session>:<turn>` (memory ids are global in D1 and the index, so the turn id is
kept as the suffix), remembered in order and indexed regardless of importance. Every question of categories
1-4 with a well-formed evidence id is asked, as written, through `recall` of one of the two speakers
(alternating), top 10. Nothing here sees the gold labels but the scoring.

Modes: `vector`, `keyword` (BM25 over D1), `hybrid` (recall(mode="hybrid")) and `weighted` (weighted_recall on
the default mode, the conversation's last day as today; every turn has the same importance).
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memory_sim.eval.metrics import KS, latency_summary, mean_scores, question_scores
from memory_sim.locomo import CATEGORY_NAMES, Conversation, Session
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem

MODES: tuple[str, ...] = ("vector", "keyword", "hybrid", "weighted")
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


def session_memories(npc_id: str, session: Session) -> list[ShortTermMemory]:
    when = WorldTime(session.day, session.started.hour)
    return [
        ShortTermMemory(npc_id, f"{t.speaker}: {t.text}", TURN_IMPORTANCE, when, id=turn_memory_id(npc_id, t.id))
        for t in session.turns
    ]


def remember_conversation(system: MemorySystem, conversation: Conversation) -> tuple[str, str]:
    """Both speakers remember every turn, in order; returns their NPC ids."""
    npcs = tuple(speaker_npc(conversation.id, s) for s in conversation.speakers)
    for npc in npcs:
        memories = [m for session in conversation.sessions for m in session_memories(npc, session)]
        system.remember_many(memories, index_all=True)
    return npcs[0], npcs[1]


def last_day(conversation: Conversation) -> int:
    return max((s.day for s in conversation.sessions), default=0)


def ask(system: MemorySystem, npc_id: str, question: str, mode: str, today: int) -> list[str]:
    """The top-10 turn ids this NPC recalls for the question in `mode`."""
    if mode == "weighted":
        found = system.weighted_recall(npc_id, question, current_day=today, top_k=TOP_K)
    else:
        found = system.recall(npc_id, question, top_k=TOP_K, mode=mode)  # type: ignore[arg-type]
    return [turn_id_of(npc_id, r.id) for r in found]


def evaluate(
    system: MemorySystem, conversations: Sequence[Conversation], modes: Sequence[str], timer: Timer = time.perf_counter
) -> dict[str, Any]:
    """Asks every question in every mode; returns per-mode metrics (overall, per category) and latency."""
    rows: dict[str, list[tuple[int, dict[str, float]]]] = {m: [] for m in modes}
    seconds: dict[str, list[float]] = {m: [] for m in modes}
    for conversation in conversations:
        npcs = [speaker_npc(conversation.id, s) for s in conversation.speakers]
        today = last_day(conversation)
        for qi, question in enumerate(conversation.questions):
            npc = npcs[qi % 2]
            for mode in modes:
                started = timer()
                ranked = ask(system, npc, question.text, mode, today)
                seconds[mode].append(timer() - started)
                rows[mode].append((question.category, question_scores(ranked, question.evidence)))
    return {mode: summarise(rows[mode], seconds[mode]) for mode in modes}


def summarise(rows: Sequence[tuple[int, dict[str, float]]], seconds: Sequence[float]) -> dict[str, Any]:
    categories = {
        name: mean_scores([r for c, r in rows if c == number])
        for number, name in CATEGORY_NAMES.items()
        if number != 5
    }
    return {"overall": mean_scores([r for _, r in rows]), "categories": categories, "latency": latency_summary(seconds)}


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
) -> dict[str, Any]:
    """The whole evaluation on a fresh local Env (Chroma + DuckDB + the model) in `work_dir` (a temp folder by
    default). `cache`: an embedding cache file copied in before and back after, so reruns skip the model."""
    from memory_sim.env import Env
    from memory_sim.sim.clock import SimClock

    unknown = set(modes) - set(MODES)
    if unknown:
        raise ValueError(f"unknown modes {sorted(unknown)}: expected some of {', '.join(MODES)}")
    with tempfile.TemporaryDirectory(prefix="memory_sim_eval_") as tmp:
        data = Path(work_dir or tmp) / "locomo-data"
        if data.exists():
            shutil.rmtree(data)
        data.mkdir(parents=True)
        if cache is not None and cache.exists():
            shutil.copyfile(cache, data / "embeddings.sqlite")
        clock = SimClock()
        started = time.perf_counter()
        with Env.local(data, embed_model=model, d1_engine=d1_engine) as env:
            system = MemorySystem(env, clock=clock)
            for conversation in conversations:
                progress(f"remembering {conversation.id} ({len(conversation.turns)} turns x 2 speakers)")
                remember_conversation(system, conversation)
            # past the visibility window: recall must not re-embed "recent" rows it merges from D1
            clock.advance_to(WorldTime(max((last_day(c) for c in conversations), default=0) + 1))
            warm_query_cache(system, conversations)
            ingest_s = time.perf_counter() - started
            progress(f"asking {sum(len(c.questions) for c in conversations)} questions x {len(modes)} modes")
            results = evaluate(system, conversations, modes)
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
    return "\n".join(lines) + "\n"
