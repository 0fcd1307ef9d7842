"""Questions about time ("What did she do yesterday?", "on day 12", "after he came back from the fair", "the last
time...") asked of a small written village, scored by hit@3: one of the question's expected memories is in the
top 3.

Two labelled halves live in tests/memory/data/: `temporal_heldout.json` (written first, never tuned on) and
`temporal_tuning.json` (what the time ranking was set on). Each holds its own village: NPCs, memories (id, NPC,
sim day and hour, importance, type, text), the calendar date of sim day 0, and questions (asking NPC, the sim day
and hour asked, a phrasing family, the expected memory ids). The clock is set to each question's time before it
is asked, so "yesterday" means the day before that.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_sim.env import Env
from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem

MODES: tuple[str, ...] = ("vector", "keyword", "hybrid", "weighted")
TOP_K = 3
MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True, slots=True)
class TemporalQuestion:
    id: str
    family: str
    npc: str
    asked: WorldTime
    text: str
    expected: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TemporalVillage:
    name: str
    calendar_start: str
    npcs: tuple[dict[str, str], ...]
    memories: tuple[ShortTermMemory, ...]
    questions: tuple[TemporalQuestion, ...]


def load_village(path: Path) -> TemporalVillage:
    raw = json.loads(path.read_text(encoding="utf-8"))
    memories = tuple(
        ShortTermMemory(m["npc"], m["text"], float(m["importance"]), WorldTime(m["day"], m["hour"]), m["type"],
                        tuple(m.get("about", ())), id=m["id"])
        for m in raw["memories"]
    )
    questions = tuple(
        TemporalQuestion(q["id"], q["family"], q["npc"], WorldTime(q["day"], q["hour"]), q["question"],
                         tuple(q["expected"]))
        for q in raw["questions"]
    )
    return TemporalVillage(path.stem, raw.get("calendar_start", ""), tuple(raw["npcs"]), memories, questions)


def ask(system: MemorySystem, question: TemporalQuestion, mode: str) -> list[str]:
    """The top-3 memory ids the question's NPC recalls in `mode` ("weighted": weighted_recall, hybrid)."""
    if mode == "weighted":
        found = system.weighted_recall(question.npc, question.text, top_k=TOP_K)
    else:
        found = system.recall(question.npc, question.text, top_k=TOP_K, mode=mode)  # type: ignore[arg-type]
    return [r.id for r in found]


def evaluate(system: MemorySystem, set_time: Callable[[WorldTime], None], village: TemporalVillage,
             modes: Sequence[str] = MODES) -> dict[str, list[dict[str, Any]]]:
    """Each question in each mode, the clock set to when it is asked: its top 3 and whether it hit."""
    out: dict[str, list[dict[str, Any]]] = {}
    for mode in modes:
        rows = []
        for question in village.questions:
            set_time(question.asked)
            top = ask(system, question, mode)
            rows.append({"id": question.id, "family": question.family, "top": top,
                         "hit": bool(set(top) & set(question.expected))})
        out[mode] = rows
    return out


def run_village(village: TemporalVillage, modes: Sequence[str] = MODES, model: str = MODEL,
                work_dir: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """The village on a fresh local Env (Chroma + DuckDB + the model), every question asked in every mode."""
    moment = [WorldTime(0).to_seconds()]

    def set_time(when: WorldTime) -> None:
        moment[0] = when.to_seconds()

    with tempfile.TemporaryDirectory(prefix="memory_sim_temporal_") as tmp:
        folder = Path(work_dir or tmp) / village.name
        with Env.local(folder, embed_model=model) as env:
            system = MemorySystem(env, clock=lambda: moment[0],
                                  config=MemoryConfig(calendar_start=village.calendar_start))
            for npc in village.npcs:
                system.register_npc(npc["id"], npc["name"], npc.get("role"))
            for memory in sorted(village.memories, key=lambda m: (m.world_time, m.id)):
                set_time(memory.world_time)
                system.remember(memory)
            return evaluate(system, set_time, village, modes)


def hit_rates(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """hit@3 overall and per phrasing family, with the question counts."""
    families = sorted({r["family"] for r in rows})

    def rate(part: Sequence[dict[str, Any]]) -> float:
        return round(sum(r["hit"] for r in part) / len(part), 3) if part else 0.0

    return {"overall": rate(rows), "questions": len(rows),
            "families": {f: rate([r for r in rows if r["family"] == f]) for f in families}}
