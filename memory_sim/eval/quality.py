"""What consolidation adds, measured on a run's D1: repeats in recall's top 5, summaries that only repeat a
memory or carry a diary's framing, and what a recalled id stands for when recall is scored.

- A repeat in a ranking: an entry whose text (words, case and punctuation aside) an earlier entry has, or a
  summary beside a memory it was made from (either order). Goal: none in any recall mode's top 5.
- A quoted repeat in a ranking: a summary beside a memory whose whole text it quotes (its source, or the same
  sentence remembered on another day). Goal: none in any recall mode's top 5.
- A redundant summary: its text inside one observation of the same NPC (it says nothing that memory does not);
  a framed one: it carries a diary's "It brought back day N: ..." line. Goal: none of either.
- Coverage, for scoring: a recalled id stands for itself, every memory of the NPC with the same text, and, for a
  summary, the memories it was made from (and their same-text twins). A ranking that collapses repeats is then
  scored on what it shows, not on how many copies of a sentence it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_sim.bindings.d1 import D1Database
from memory_sim.errors import D1Error
from memory_sim.memory.scoring import text_key

FRAMING = "it brought back day"


@dataclass
class NpcTexts:
    """One NPC's memories as the checks see them: text keys, ids by key, and lineage."""

    key_of: dict[str, str] = field(default_factory=dict)
    ids_of_key: dict[str, set[str]] = field(default_factory=dict)
    sources: dict[str, set[str]] = field(default_factory=dict)

    def covered(self, memory_id: str) -> set[str]:
        """The ids a recalled id stands for (see the module's docstring)."""
        ids = {memory_id} | self.sources.get(memory_id, set())
        return ids | {twin for i in ids for twin in self.ids_of_key.get(self.key_of.get(i, ""), set())}

    def repeats(self, ranked: Sequence[str]) -> int:
        """How many entries of `ranked` repeat an earlier one."""
        seen_keys: set[str] = set()
        seen: list[str] = []
        count = 0
        for memory_id in ranked:
            key = self.key_of.get(memory_id)
            mine = self.sources.get(memory_id, set())
            if (key is not None and key in seen_keys) or mine.intersection(seen) or any(
                memory_id in self.sources.get(s, ()) for s in seen
            ):
                count += 1
            seen.append(memory_id)
            if key is not None:
                seen_keys.add(key)
        return count

    def quoted(self, ranked: Sequence[str]) -> int:
        """How many entries of `ranked` stand beside an earlier one where one is a summary quoting the other's
        whole text (the same sentence shown twice, once inside a summary), its own sources included."""
        return sum(1 for i, memory_id in enumerate(ranked) if any(self._quotes(memory_id, e) for e in ranked[:i]))

    def _quotes(self, one: str, other: str) -> bool:
        for summary, memory_id in ((one, other), (other, one)):
            outer, inner = self.key_of.get(summary, ""), self.key_of.get(memory_id, "")
            if summary in self.sources and outer and inner and f" {inner} " in f" {outer} ":
                return True
        return False


def lineage(db: D1Database) -> dict[str, set[str]]:
    """summary id -> source ids; empty on a database from before lineage (no `memory_sources` table)."""
    try:
        rows = db.prepare("SELECT summary_id, source_id FROM memory_sources").all().results
    except D1Error:
        return {}
    out: dict[str, set[str]] = {}
    for row in rows:
        out.setdefault(str(row["summary_id"]), set()).add(str(row["source_id"]))
    return out


def npc_texts(db: D1Database, npc_id: str, sources: dict[str, set[str]]) -> NpcTexts:
    texts = NpcTexts(sources=sources)
    for row in db.prepare("SELECT id, content FROM short_term_memories WHERE npc_id = ?").bind(npc_id).all().results:
        key = text_key(str(row["content"]))
        texts.key_of[str(row["id"])] = key
        texts.ids_of_key.setdefault(key, set()).add(str(row["id"]))
    return texts


def _inside(inner: str, outers: Iterable[str]) -> bool:
    return any(f" {inner} " in f" {outer} " for outer in outers)


def summary_redundancy(db: D1Database) -> dict[str, Any]:
    """Counts of summaries, of those repeating one observation of their NPC, of those carrying framing, and of
    days linked to their one memory instead of summarised."""
    rows = db.prepare("SELECT npc_id, content, kind FROM short_term_memories ORDER BY npc_id, id").all().results
    observations: dict[str, list[str]] = {}
    for row in rows:
        if row["kind"] == "observation":
            observations.setdefault(str(row["npc_id"]), []).append(text_key(str(row["content"])))
    summaries = [(str(r["npc_id"]), text_key(str(r["content"]))) for r in rows if r["kind"] == "summary"]
    redundant = sum(1 for npc, key in summaries if _inside(key, observations.get(npc, [])))
    framed = sum(1 for _, key in summaries if FRAMING in key)
    linked = db.prepare(
        "SELECT COUNT(*) AS n FROM diaries JOIN short_term_memories ON short_term_memories.id = diaries.summary_id"
        " WHERE short_term_memories.kind = 'observation'"
    ).first("n")
    return {"summaries": len(summaries), "redundant": redundant, "framed": framed, "linked_days": int(linked or 0),
            "redundant_share": round(redundant / len(summaries), 4) if summaries else 0.0}
