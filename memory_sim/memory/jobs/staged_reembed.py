"""Re-embedding D1, the ledger, into a new index that replaces the live one only when complete, on any backend
(`memory-sim reembed --model M`, local or Cloudflare alike: only the Vectorize and D1 contracts are used).

    build   every memory D1 says belongs in the index (indexed or pending) is embedded with the new model into a
            staging index `<name>-reembed`, in id order; the last id done is recorded in D1 after every batch
    swap    the live index is recreated for the new model and the staging vectors copied into it (no model
            call), the copy's cursor recorded after every page; then the staging index is dropped

The job lives in D1's `meta` table, so a crash anywhere resumes where it stopped when the same command runs
again. Until the swap the live index is untouched and recall uses it with the old model; the swap is a copy of
finished vectors (no embedding), during which recall may miss memories not yet copied. Vectorize cannot rename
an index, and a Worker binds one by name, so the name stays and the vectors move.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

from memory_sim.bindings import limits
from memory_sim.bindings.ai import Embedder
from memory_sim.bindings.d1 import D1Database
from memory_sim.bindings.vectorize import Vector, VectorizeAccount, VectorizeIndex
from memory_sim.embedding.index_model import describe_model
from memory_sim.errors import VectorizeUnavailable
from memory_sim.memory.ledger import store
from memory_sim.memory.writing.indexing import vector_metadata
from memory_sim.memory.writing.provision import MEMORY_METADATA_INDEXES, create_index

JOB_KEY = "reembed_job"
STAGING_SUFFIX = "-reembed"
GET_BY_IDS_MAX = limits.VECTORIZE_GET_BY_IDS_MAX_REST  # production's cap, whatever the backend


@dataclass
class Job:
    """The unfinished re-embed, as recorded in D1."""

    description: str  # the new model, as the index will record it
    staging: str
    phase: str = "build"  # build | swap
    after_id: str = ""  # build: the last memory id embedded
    cursor: str | None = None  # swap: the staging page after the last copied one
    recreated: bool = False  # swap: the live index is already the new model's
    copied_all: bool = False  # swap: every staging vector is in the live index
    embedded: int = 0
    copied: int = 0


@dataclass(frozen=True)
class ReembedReport:
    model: str
    dimensions: int
    embedded: int
    copied: int
    resumed: bool


def staging_name(live: str) -> str:
    return live[: limits.VECTORIZE_MAX_INDEX_NAME_BYTES - len(STAGING_SUFFIX)] + STAGING_SUFFIX


def pending_job(db: D1Database) -> Job | None:
    from memory_sim.memory.ledger.schema import migrate

    migrate(db, applied_at=0.0)
    text = store.get_meta(db, JOB_KEY)
    return None if text is None else Job(**json.loads(text))


def unfinished_model(db: D1Database) -> str | None:
    """The model of a re-embedding a crash left unfinished, if any (read only: nothing is created)."""
    from memory_sim.embedding.index_model import parse_description
    from memory_sim.errors import D1Error

    try:
        text = store.get_meta(db, JOB_KEY)
    except D1Error:  # no meta table yet: a database the memory system has not used
        return None
    return None if text is None else parse_description(json.loads(text).get("description")).get("model", "?")


def reembed_staged(
    account: VectorizeAccount, db: D1Database, live: str, embedder: Embedder, *, batch: int = 100,
    on_batch: Callable[[str, int], None] | None = None,
) -> ReembedReport:
    """Re-embeds D1 into a staging index for `embedder`, then swaps it in; resumes a job left by a crash.
    `on_batch(phase, done)` after every recorded step (tests inject a crash there)."""
    wanted = describe_model(embedder)
    job = pending_job(db)
    if job is not None and job.staging not in {d.name for d in account.list_indexes()}:
        job = None  # its staging index is gone (moved aside with a damaged folder, deleted by hand): start over
    resumed = job is not None and (job.description == wanted or job.phase == "swap")
    if job is not None and job.phase == "swap" and job.description != wanted:
        _swap(account, db, live, job, on_batch)  # another model's finished vectors: complete that swap first
        job = None
    if job is None or job.description != wanted:
        job = _start(account, db, live, embedder, wanted)
    if job.phase == "build":
        _build(account.index(job.staging), db, embedder, job, batch, on_batch)
    _swap(account, db, live, job, on_batch)
    return ReembedReport(embedder.model, embedder.dimensions, job.embedded, job.copied, resumed)


def _save(db: D1Database, job: Job) -> None:
    store.set_meta(db, JOB_KEY, json.dumps(asdict(job)))


def _start(account: VectorizeAccount, db: D1Database, live: str, embedder: Embedder, wanted: str) -> Job:
    job = Job(wanted, staging_name(live))
    if job.staging in {d.name for d in account.list_indexes()}:
        account.delete_index(job.staging)  # a staging index of an abandoned job: its vectors are not trusted
    create_index(account, job.staging, embedder)
    _save(db, job)
    return job


def _build(staging: VectorizeIndex, db: D1Database, embedder: Embedder, job: Job, batch: int,
           on_batch: Callable[[str, int], None] | None) -> None:
    rows = sorted((m for m in store.memories_in_state(db, ["indexed", "pending"]) if m.id > job.after_id),
                  key=lambda m: m.id)
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        values = embedder.embed([m.content for m in chunk])
        staging.upsert([Vector(m.id, [float(x) for x in row], vector_metadata(m))
                        for m, row in zip(chunk, values, strict=True)])
        job.after_id, job.embedded = chunk[-1].id, job.embedded + len(chunk)
        _save(db, job)
        if on_batch is not None:
            on_batch("build", job.embedded)
    job.phase = "swap"
    _save(db, job)


def _swap(account: VectorizeAccount, db: D1Database, live: str, job: Job,
          on_batch: Callable[[str, int], None] | None) -> None:
    staging = account.index(job.staging)
    if not job.recreated:
        _wait_until_visible(staging, job.embedded)
        config = account.get_index(job.staging)
        if live in {d.name for d in account.list_indexes()}:
            account.delete_index(live)
        account.create_index(live, config.dimensions, config.metric, config.description)
        target = account.index(live)
        for prop, kind in MEMORY_METADATA_INDEXES:
            target.create_metadata_index(prop, kind)
        job.recreated = True
        _save(db, job)
    target = account.index(live)
    while not job.copied_all:
        page = staging.list_vectors(limits.VECTORIZE_LIST_MAX_COUNT, job.cursor)
        if page.ids:
            target.upsert(fetch(staging, page.ids))
            job.copied += len(page.ids)
        job.cursor = page.next_cursor
        job.copied_all = not page.is_truncated or page.next_cursor is None
        _save(db, job)
        if on_batch is not None and page.ids:
            on_batch("swap", job.copied)
    account.delete_index(job.staging)
    db.prepare("DELETE FROM meta WHERE key = ?").bind(JOB_KEY).run()


def _wait_until_visible(index: VectorizeIndex, count: int, timeout_s: float = 600.0) -> None:
    """Vectorize applies writes asynchronously: the copy starts once the staging index lists all it was given."""
    import time

    deadline = time.monotonic() + timeout_s
    while index.describe().vector_count < count:
        if time.monotonic() > deadline:
            raise VectorizeUnavailable("INDEX_GET", f"the staging index {index.name!r} still lists fewer than {count} "
                                       f"vectors after {timeout_s:.0f} s; run the same reembed again to resume")
        time.sleep(0.5)


def fetch(index: VectorizeIndex, ids: list[str]) -> list[Vector]:
    found: list[Vector] = []
    for start in range(0, len(ids), GET_BY_IDS_MAX):
        found.extend(index.get_by_ids(ids[start : start + GET_BY_IDS_MAX]))
    return found
