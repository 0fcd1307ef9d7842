"""Drift between D1's ledger and the vector index: find it (`check`) and repair it from the ledger (`repair`).

D1 is the source of truth. A memory D1 marks `indexed` must be in the index exactly once with the ledger's
metadata; a vector D1 does not know, or holds as `none`/`unindexed`, must not be there. `pending` memories are
the retry job's work, not drift (with an outbox row after a failed attempt, or without one while the attempt is
under way or its process died), unless their outbox row has used up its attempts: no retry takes them then
(`stranded`).

    report = check(env)            # DriftReport; report.clean is True when the two agree
    repair(env, report)            # RepairReport: upserts from D1, deletes what D1 disowns, re-queues strays

The index's metadata indexes are compared too: each the memory system declares (memory/writing/provision.py) must be
there with its type, and filled: a few vectors D1 marks indexed are looked up by their own value (a re-created
index leaves the vectors written before it unfilterable, as on Cloudflare). `repair` re-creates what is missing
and re-upserts every vector as it is (no embedding) so that the index covers them again.

Crash windows that leave drift (a crash between an index write and the D1 batch that records it) are closed
by `retry_pending` for pending rows and by `repair` for the rest; docs/reliability.md lists them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from memory_sim.bindings.limits import VECTORIZE_LIST_MAX_COUNT, VECTORIZE_MAX_BATCH_BINDING
from memory_sim.bindings.vectorize import VectorizeIndex
from memory_sim.env import Env

# Metadata recall filters or shows; `decayFactor` is left out on purpose: the decay job updates D1 daily and
# weighted recall reads the factor from D1, so the index's copy is allowed to lag.
COMPARED_FIELDS = ("npcId", "type", "day", "importance", "textPreview")
DUE = "indexed"


@dataclass(frozen=True, slots=True)
class MetadataDrift:
    id: str
    field: str
    ledger: Any
    index: Any


@dataclass
class DriftReport:
    memories: int = 0  # rows in D1's ledger
    due: int = 0  # rows D1 marks indexed
    pending: int = 0  # memories D1 marks pending (the retry job's work)
    vectors: int = 0  # distinct ids in the index
    missing: list[str] = field(default_factory=list)  # D1: indexed; index: absent
    unknown: list[str] = field(default_factory=list)  # in the index; no D1 row
    disowned: list[str] = field(default_factory=list)  # in the index; D1 says none/unindexed
    duplicated: list[str] = field(default_factory=list)  # listed more than once by the index
    stranded: list[str] = field(default_factory=list)  # D1: pending, but its outbox row is out of attempts
    metadata: list[MetadataDrift] = field(default_factory=list)
    metadata_indexes: list[str] = field(default_factory=list)  # "npcId (string): missing | not filled | ..."

    @property
    def clean(self) -> bool:
        return not (self.missing or self.unknown or self.disowned or self.duplicated or self.stranded or self.metadata
                    or self.metadata_indexes)

    @property
    def drift(self) -> int:
        ids = set(self.missing) | set(self.unknown) | set(self.disowned) | set(self.duplicated) | set(self.stranded)
        return len(ids | {m.id for m in self.metadata})

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["clean"], out["drift"] = self.clean, self.drift
        return out


@dataclass(frozen=True, slots=True)
class RepairReport:
    upserted: int = 0
    deleted: int = 0
    requeued: int = 0
    metadata_indexes: int = 0  # declared metadata indexes put right
    reindexed: int = 0  # vectors re-upserted as they were, for the metadata indexes to cover them

    def to_json(self) -> dict[str, int]:
        return asdict(self)


# --- reading both sides ------------------------------------------------------------------------------------


def ledger_states(env: Env) -> dict[str, str]:
    rows = env.DB.prepare("SELECT id, index_state FROM short_term_memories").all().results
    return {r["id"]: r["index_state"] for r in rows}


def stranded_ids(env: Env, max_attempts: int | None) -> set[str]:
    """Pending memories no retry takes any more (their outbox row is out of attempts)."""
    from memory_sim.memory.config import MemoryConfig
    from memory_sim.memory.ledger import store

    return store.exhausted(env.DB, MemoryConfig().retry_max_attempts if max_attempts is None else max_attempts)


def index_ids(index: VectorizeIndex) -> list[str]:
    """Every id the index lists, page by page, repeats kept (a repeat is drift)."""
    ids: list[str] = []
    cursor: str | None = None
    while True:
        page = index.list_vectors(VECTORIZE_LIST_MAX_COUNT, cursor)
        ids += page.ids
        if not page.is_truncated or page.next_cursor is None:
            return ids
        cursor = page.next_cursor


def _batches(ids: Sequence[str], size: int = VECTORIZE_MAX_BATCH_BINDING) -> list[Sequence[str]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def metadata_drift(env: Env, ids: Sequence[str]) -> list[MetadataDrift]:
    from memory_sim.memory.ledger import store
    from memory_sim.memory.writing.indexing import vector_metadata

    found: list[MetadataDrift] = []
    for chunk in _batches(sorted(ids)):
        ledger = store.memories_by_ids(env.DB, chunk)
        for vector in env.VECTORIZE.get_by_ids(chunk):
            if vector.id in ledger:
                found += compare_metadata(vector.id, vector_metadata(ledger[vector.id]), vector.metadata or {})
    return found


def compare_metadata(memory_id: str, ledger: dict[str, Any], index: dict[str, Any]) -> list[MetadataDrift]:
    """Pure: the compared fields that differ (numbers within 1e-6)."""
    out = []
    for name in COMPARED_FIELDS:
        want, got = ledger.get(name), index.get(name)
        same = _close(want, got) if isinstance(want, (int, float)) and isinstance(got, (int, float)) else want == got
        if not same:
            out.append(MetadataDrift(memory_id, name, want, got))
    return out


def _close(a: float, b: float) -> bool:
    return abs(float(a) - float(b)) <= 1e-6


PROBES = 4  # vectors looked up by their own value per metadata index: a re-created index misses all old ones


def metadata_index_drift(index: VectorizeIndex, due_ids: Sequence[str]) -> list[str]:
    """The declared metadata indexes that are missing, of another type, or do not cover vectors D1 marks indexed
    (probed: up to PROBES of them, spread over the ledger, each queried by its own id filtered on its own value)."""
    from memory_sim.memory.writing.provision import MEMORY_METADATA_INDEXES

    present = {m.property_name: m.index_type for m in index.list_metadata_indexes()}
    step = max(1, len(due_ids) // PROBES)
    sample = index.get_by_ids(list(due_ids[::step][:PROBES])) if due_ids else []
    found = []
    for prop, kind in MEMORY_METADATA_INDEXES:
        if prop not in present:
            found.append(f"{prop} ({kind}): missing")
        elif present[prop] != kind:
            found.append(f"{prop} ({kind}): is {present[prop]}")
        elif any(not _filterable(index, v.id, prop, (v.metadata or {})[prop]) for v in sample
                 if (v.metadata or {}).get(prop) is not None):
            found.append(f"{prop} ({kind}): not filled")
    return sorted(found)


def _filterable(index: VectorizeIndex, vector_id: str, prop: str, value: Any) -> bool:
    matches = index.query_by_id(vector_id, top_k=20, filter={prop: value}).matches
    return any(m.id == vector_id for m in matches)


def check(env: Env, *, compare_metadata_fields: bool = True, max_attempts: int | None = None) -> DriftReport:
    """Compares D1's ledger with the index; reads only. The folder may be written meanwhile (the owner's jobs,
    other processes working through it): a write in flight between reading D1 and listing the index shows as
    drift once, so drift is looked at twice and only what both looks show is reported. `max_attempts`: the
    retry job's `retry_max_attempts` (the default config's when None)."""
    first = compare(env, compare_metadata_fields=compare_metadata_fields, max_attempts=max_attempts)
    if first.clean:
        return first
    return confirmed(first, compare(env, compare_metadata_fields=compare_metadata_fields, max_attempts=max_attempts))


def confirmed(first: DriftReport, second: DriftReport) -> DriftReport:
    """`second`, keeping only the drift `first` saw too."""
    def both(kind: str) -> list[str]:
        seen = set(getattr(first, kind))
        return [i for i in getattr(second, kind) if i in seen]

    fields = {(m.id, m.field) for m in first.metadata}
    return replace(second, missing=both("missing"), unknown=both("unknown"), disowned=both("disowned"),
                   duplicated=both("duplicated"), stranded=both("stranded"),
                   metadata=[m for m in second.metadata if (m.id, m.field) in fields],
                   metadata_indexes=both("metadata_indexes"))


def compare(env: Env, *, compare_metadata_fields: bool = True, max_attempts: int | None = None) -> DriftReport:
    """One look at D1's ledger and the index."""
    states, stranded = ledger_states(env), stranded_ids(env, max_attempts)
    listed = index_ids(env.VECTORIZE)
    counts = Counter(listed)
    present = set(counts)
    due = {i for i, s in states.items() if s == DUE}
    pending = sorted(i for i, s in states.items() if s == "pending")
    report = DriftReport(memories=len(states), due=len(due), pending=len(pending), vectors=len(present))
    report.missing = sorted(due - present)
    report.unknown = sorted(present - set(states))
    # a deliberately forgotten memory is drift only while its vector is still there ('forgetting': the forget
    # under way or cut short deletes it, and retry finishes it)
    report.disowned = sorted(i for i in present if states.get(i) in ("none", "unindexed", "forgotten"))
    report.duplicated = sorted(i for i, n in counts.items() if n > 1)
    report.stranded = [i for i in pending if i in stranded]
    if compare_metadata_fields:
        report.metadata = metadata_drift(env, sorted(due & present))
    report.metadata_indexes = metadata_index_drift(env.VECTORIZE, sorted(due & present))
    return report


# --- repairing from the ledger -----------------------------------------------------------------------------


def repair(env: Env, report: DriftReport, *, now: float = 0.0) -> RepairReport:
    """Makes the index what D1 says: deletes vectors D1 disowns or does not know, rewrites duplicated ones and
    those with wrong metadata, embeds missing ones, and gives stranded pending rows their attempts back (their
    outbox rows go: the retry job takes a pending row with none at once). `now` is kept for callers; unused."""
    from memory_sim.memory.ledger import store
    from memory_sim.memory.writing import indexing

    reindexed = _repair_metadata_indexes(env.VECTORIZE) if report.metadata_indexes else 0
    drop = sorted(set(report.unknown) | set(report.disowned) | set(report.duplicated))
    for chunk in _batches(drop):
        env.VECTORIZE.delete_by_ids(list(chunk))
    rewrite = sorted(
        (set(report.missing) | {m.id for m in report.metadata} | set(report.duplicated))
        - set(report.disowned)
        - set(report.unknown)
    )
    rows = list(store.memories_by_ids(env.DB, rewrite).values())
    rows = [r for r in rows if r.index_state == DUE]
    indexing.embed_and_upsert(env, rows)
    statements = store.dequeue(env.DB, report.stranded)
    if statements:
        env.DB.batch(statements)
    return RepairReport(upserted=len(rows), deleted=len(drop), requeued=len(report.stranded),
                        metadata_indexes=len(report.metadata_indexes), reindexed=reindexed)


def _repair_metadata_indexes(index: VectorizeIndex) -> int:
    """Creates each declared metadata index that is missing or of another type, then re-upserts every vector as
    it is (its values and metadata, read back: nothing is embedded), so that the indexes cover vectors written
    before them. Returns how many vectors were re-upserted."""
    from memory_sim.memory.writing.provision import MEMORY_METADATA_INDEXES

    present = {m.property_name: m.index_type for m in index.list_metadata_indexes()}
    wrong = [(prop, kind) for prop, kind in MEMORY_METADATA_INDEXES if present.get(prop) != kind]
    for prop, kind in wrong:
        if prop in present:
            index.delete_metadata_index(prop)
        index.create_metadata_index(prop, kind)
    ids = sorted(set(index_ids(index)))
    for chunk in _batches(ids):
        index.upsert(index.get_by_ids(list(chunk)))
    return len(ids)
