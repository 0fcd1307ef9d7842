"""Helpers for the experiment tests: tiny experiments on the real parts (Chroma, sqlite3 D1, the experiment's
DuckDB) with the hashing embedder: seconds, not minutes, and results that do not depend on a model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory_sim.experiments import store

TINY = """
name = "tiny"
[target]
kind = "village"
[base]
seeds = [1, 2]
npcs = 3
days = 3
model = "fake/hashing"
d1_engine = "sqlite"
[grid]
decay_rate = [0.05, 0.6]
"""


def tables(folder: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The reproducible tables, row by row in key order."""
    with store.connect(folder, read_only=True) as db:
        return {table: store.table_rows(db, table) for table in store.REPRODUCIBLE_TABLES}


def write_locomo(path: Path) -> Path:
    """A LoCoMo-shaped file: one conversation of two sessions a week apart, questions of two categories."""
    turns1 = [("Ann", "I adopted a grey cat called Pixel last weekend."), ("Ben", "Lovely! I started pottery classes."),
              ("Ann", "Pixel sleeps on my keyboard all day."), ("Ben", "My first bowl cracked in the kiln.")]
    turns2 = [("Ann", "Pixel learned to open the fridge."), ("Ben", "I sold three mugs at the market on Sunday."),
              ("Ann", "I am training for a half marathon in June."), ("Ben", "Good luck with the running!")]
    conversation: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Ben",
                                    "session_1_date_time": "1:56 pm on 8 May, 2023",
                                    "session_2_date_time": "7:10 pm on 15 May, 2023"}
    for number, turns in ((1, turns1), (2, turns2)):
        conversation[f"session_{number}"] = [
            {"speaker": s, "dia_id": f"D{number}:{i + 1}", "text": t} for i, (s, t) in enumerate(turns)
        ]
    qa = [
        {"question": "What is the name of Ann's cat?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
        {"question": "What did Ben sell at the market?", "answer": "mugs", "evidence": ["D2:2"], "category": 4},
        {"question": "What is Ann training for?", "answer": "a half marathon", "evidence": ["D2:3"], "category": 2},
        {"question": "What hobby did Ben take up?", "answer": "pottery", "evidence": ["D1:2", "D1:4"], "category": 1},
    ]
    path.write_text(json.dumps([{"sample_id": "conv-x", "conversation": conversation, "qa": qa}]))
    return path
