"""How many memories a folder holds, one definition of each count: `memory-sim stats` (`MemorySystem.stats`),
`memory-sim run`'s log, the inspector and its API all read them from here, so they agree. Forgotten memories are
counted apart: `memories` is what the NPCs still remember."""

from __future__ import annotations

from memory_sim.bindings.d1 import D1Database

FORGOTTEN = "index_state IN ('forgetting', 'forgotten')"  # forgotten, or being forgotten (its vector on its way out)
DEFINITIONS = {  # count -> which rows of short_term_memories it counts
    "memories": f"NOT ({FORGOTTEN})",  # remembered and not forgotten, summaries included
    "forgotten": FORGOTTEN,
    "indexed": "index_state = 'indexed'",  # in the vector index, as D1 records it
    "pending": "index_state = 'pending'",  # waiting for the index: retry_pending's work
    "summaries": f"kind = 'summary' AND NOT ({FORGOTTEN})",
}
# columns named n_<count>: INDEXED is a word of SQLite's grammar (INDEXED BY), not a name to give a column
_SUMS = ", ".join(f"SUM(CASE WHEN {where} THEN 1 ELSE 0 END) AS n_{name}" for name, where in DEFINITIONS.items())


def memory_counts(db: D1Database, npc_id: str | None = None) -> dict[str, int]:
    """The counts of the folder, or of one NPC's memories; one statement."""
    where, values = ("WHERE npc_id = ?", [npc_id]) if npc_id is not None else ("", [])
    row = db.prepare(f"SELECT {_SUMS} FROM short_term_memories {where}").bind(*values).first() or {}
    return {name: int(row.get(f"n_{name}") or 0) for name in DEFINITIONS}


def counts_by_npc(db: D1Database) -> dict[str, dict[str, int]]:
    """Each NPC's counts (NPCs with memories only), in one statement."""
    rows = db.prepare(f"SELECT npc_id, {_SUMS} FROM short_term_memories GROUP BY npc_id").all().results
    return {str(r["npc_id"]): {name: int(r[f"n_{name}"] or 0) for name in DEFINITIONS} for r in rows}
