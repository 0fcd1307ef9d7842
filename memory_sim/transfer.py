"""Moving local memory to production: export files for wrangler, and `push` through the Cloudflare adapter.

- `export_vectors(index, out)` writes NDJSON, one `{id, values, metadata?, namespace?}` per line: what
  `wrangler vectorize insert <index> --file out` takes.
- `export_sql(db, out)` writes the schema and the rows as SQL statements: what `wrangler d1 execute <db> --file`
  takes.
- `pull(source, target, progress_file)` brings an account's index and database (Cloudflare, or the local server
  acting as it) into local ones: the same resumable copy the other way, reading vectors through list-vectors and
  get-by-ids, at most 20 ids per call as production answers.
- `push(source, target, progress_file)` sends the local index and database to another account (Cloudflare, or
  the local server acting as it) in batches. Progress is recorded after every acknowledged batch, so a rerun
  after an interruption resumes there; vectors are upserted, and a batch of rows refused as sent (sent twice, its
  answer lost) is written again with INSERT OR REPLACE, so it leaves no duplicates where the table has a primary
  key.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_sim.bindings import limits
from memory_sim.bindings.d1 import D1Database
from memory_sim.bindings.d1_sql import sql_literal
from memory_sim.bindings.vectorize import Vector, VectorizeAccount, VectorizeIndex

GET_CHUNK = limits.VECTORIZE_MAX_BATCH_BINDING  # get_by_ids per call from a local index
REMOTE_GET_CHUNK = limits.VECTORIZE_GET_BY_IDS_MAX_REST  # production's getByIds answers at most 20 ids per call
REMOTE_IN_FLIGHT = 4  # get-by-ids calls at once when pulling: a round trip each
ROWS_PER_REQUEST = 200
SKIPPED_TABLES = ("sqlite_%", "_cf_%", "d1_%")


# --- reading the local side ------------------------------------------------------------------------------------
def vector_pages(index: VectorizeIndex, *, page_size: int = limits.VECTORIZE_LIST_MAX_COUNT,
                 after: str | None = None, get_chunk: int = GET_CHUNK,
                 in_flight: int = 1) -> Iterator[tuple[list[Vector], str | None]]:
    """Every vector, a page at a time, with the cursor that follows the page (None at the end); `get_chunk` ids
    per get_by_ids call, `in_flight` calls at once (a remote index: each call is a round trip)."""
    from concurrent.futures import ThreadPoolExecutor

    cursor = after
    with ThreadPoolExecutor(max_workers=in_flight) as pool:
        fetch = map if in_flight == 1 else pool.map  # a local index is read in the caller's thread
        while True:
            page = index.list_vectors(page_size, cursor)
            chunks = [page.ids[start : start + get_chunk] for start in range(0, len(page.ids), get_chunk)]
            vectors = [v for found in fetch(index.get_by_ids, chunks) for v in found]
            if page.ids:
                yield vectors, page.next_cursor
            if not page.is_truncated or page.next_cursor is None:
                return
            cursor = page.next_cursor


def tables(db: D1Database) -> list[dict[str, Any]]:
    """User tables and their indexes, in creation order, as `sqlite_master` lists them."""
    skip = " AND ".join(f"name NOT LIKE '{p}'" for p in SKIPPED_TABLES)
    sql = f"SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND {skip}"
    return db.prepare(sql).all().results


def paging_order(db: D1Database, table: str) -> str:
    """A stable order for paging: the primary key's columns, else every column. Not `rowid`: tables with a TEXT
    key have no rowid on the DuckDB engine (it refuses it rather than give an unstable one)."""
    columns = db.prepare(f'PRAGMA table_info("{table}")').all().results
    key = sorted((c for c in columns if c["pk"]), key=lambda c: c["pk"]) or columns
    return ", ".join(f'"{c["name"]}"' for c in key)


def rows_of(
    db: D1Database, table: str, *, offset: int = 0, page: int = ROWS_PER_REQUEST
) -> Iterator[tuple[list[str], list[list[Any]]]]:
    order = paging_order(db, table)
    while True:
        rows = (
            db.prepare(f'SELECT * FROM "{table}" ORDER BY {order} LIMIT ? OFFSET ?')
            .bind(page, offset)
            .raw(column_names=True)
        )
        if len(rows) <= 1:
            return
        yield rows[0], rows[1:]
        offset += len(rows) - 1


# --- export ----------------------------------------------------------------------------------------------------
def export_vectors(index: VectorizeIndex, out: str | Path) -> int:
    count = 0
    with open(out, "w", encoding="utf-8") as sink:
        for vectors, _ in vector_pages(index):
            for vector in vectors:
                sink.write(json.dumps(vector.to_json(), separators=(",", ":"), ensure_ascii=False) + "\n")
                count += 1
    return count


def insert_sql(table: str, columns: list[str], row: list[Any], verb: str = "INSERT") -> str:
    names = ", ".join(f'"{c}"' for c in columns)
    return f'{verb} INTO "{table}" ({names}) VALUES ({", ".join(sql_literal(v) for v in row)});'


def export_sql(db: D1Database, out: str | Path) -> int:
    """Schema then rows, one statement per line (`wrangler d1 execute --file`); returns the number of rows."""
    count = 0
    schema = tables(db)
    with open(out, "w", encoding="utf-8") as sink:
        for item in schema:
            if item["type"] == "table":
                sink.write(" ".join(item["sql"].split()) + ";\n")
        for item in schema:
            if item["type"] != "table":
                continue
            for columns, rows in rows_of(db, item["name"]):
                for row in rows:
                    sink.write(insert_sql(item["name"], columns, row) + "\n")
                    count += 1
        for item in schema:
            if item["type"] == "index":
                sink.write(" ".join(item["sql"].split()) + ";\n")
    return count


# --- push ------------------------------------------------------------------------------------------------------
@dataclass
class Progress:
    """What has been acknowledged; saved after every batch."""

    path: Path
    vectors_cursor: str | None = None
    vectors_done: bool = False
    vectors_sent: int = 0
    schema_done: bool = False
    rows_done: dict[str, int] = field(default_factory=dict)
    tables_done: list[str] = field(default_factory=list)

    @staticmethod
    def load(path: str | Path) -> Progress:
        path = Path(path)
        if not path.exists():
            return Progress(path)
        return Progress(path, **json.loads(path.read_text()))

    def save(self) -> None:
        state = {k: v for k, v in self.__dict__.items() if k != "path"}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(self.path)  # atomic: an interruption leaves the old or the new record, never half


def ensure_target_index(source: VectorizeAccount, target: VectorizeAccount, name: str) -> VectorizeIndex:
    """The target index with the source's config and metadata indexes (created before any vector)."""
    wanted = source.get_index(name)
    if name not in {d.name for d in target.list_indexes()}:
        target.create_index(name, wanted.dimensions, wanted.metric, wanted.description)
    index = target.index(name)
    present = {m.property_name for m in index.list_metadata_indexes()}
    for meta in source.index(name).list_metadata_indexes():
        if meta.property_name not in present:
            index.create_metadata_index(meta.property_name, meta.index_type)
    return index


def push_vectors(source: VectorizeAccount, target: VectorizeAccount, name: str, progress: Progress,
                 batch: int = limits.VECTORIZE_MAX_BATCH_REST, on_batch: Callable[[int], None] | None = None,
                 get_chunk: int = GET_CHUNK, in_flight: int = 1) -> int:
    if progress.vectors_done:
        return 0
    to = ensure_target_index(source, target, name)
    sent = 0
    for vectors, cursor in vector_pages(source.index(name), page_size=min(batch, limits.VECTORIZE_LIST_MAX_COUNT),
                                        after=progress.vectors_cursor, get_chunk=get_chunk, in_flight=in_flight):
        for start in range(0, len(vectors), batch):
            to.upsert(vectors[start : start + batch])
        sent += len(vectors)
        progress.vectors_cursor, progress.vectors_sent = cursor, progress.vectors_sent + len(vectors)
        progress.save()
        if on_batch is not None:
            on_batch(sent)
    progress.vectors_done = True
    progress.save()
    return sent


def push_rows(source: D1Database, target: D1Database, progress: Progress, rows_per_request: int = ROWS_PER_REQUEST,
              on_batch: Callable[[int], None] | None = None) -> int:
    schema = tables(source)
    if not progress.schema_done:
        existing = {r["name"] for r in tables(target)}
        creates = [target.prepare(s["sql"]) for s in schema if s["name"] not in existing]
        if creates:
            target.batch(creates)
        progress.schema_done = True
        progress.save()
    sent = 0
    for item in (s for s in schema if s["type"] == "table" and s["name"] not in progress.tables_done):
        table = item["name"]
        for columns, rows in rows_of(source, table, offset=progress.rows_done.get(table, 0), page=rows_per_request):
            _write_rows(target, table, columns, rows)
            sent += len(rows)
            progress.rows_done[table] = progress.rows_done.get(table, 0) + len(rows)
            progress.save()
            if on_batch is not None:
                on_batch(sent)
        progress.tables_done.append(table)
        progress.save()
    return sent


def _write_rows(db: D1Database, table: str, columns: list[str], rows: list[list[Any]]) -> None:
    """One batch (atomic) of plain INSERTs; where that fails (a batch sent twice, its answer lost; rows already
    there), the same batch as INSERT OR REPLACE, which leaves no duplicates where the table has a primary key.
    Plain first: the DuckDB engine emulates OR REPLACE statement by statement, ~20x slower."""
    from memory_sim.errors import D1Error

    try:
        db.batch([_row_statement(db, table, columns, row, "INSERT") for row in rows])
    except D1Error:
        db.batch([_row_statement(db, table, columns, row, "INSERT OR REPLACE") for row in rows])


def _row_statement(db: D1Database, table: str, columns: list[str], row: list[Any], verb: str) -> Any:
    marks = ", ".join("?" for _ in columns)
    names = ", ".join(f'"{c}"' for c in columns)
    values = [bytes(v) if isinstance(v, list) else v for v in row]
    return db.prepare(f'{verb} INTO "{table}" ({names}) VALUES ({marks})').bind(*values)


@dataclass(frozen=True)
class PushReport:
    vectors: int
    rows: int


def push(source: VectorizeAccount, source_db: D1Database, target: VectorizeAccount, target_db: D1Database,
         index_name: str, progress_file: str | Path, **options: Any) -> PushReport:
    """Local account and database -> another account (Cloudflare): the index, then the database's rows."""
    progress = Progress.load(progress_file)
    vectors = push_vectors(source, target, index_name, progress, **options)
    rows = push_rows(source_db, target_db, progress)
    return PushReport(vectors, rows)


def pull(source: VectorizeAccount, source_db: D1Database, target: VectorizeAccount, target_db: D1Database,
         index_name: str, progress_file: str | Path, **options: Any) -> PushReport:
    """An account's index and database (Cloudflare) -> local ones: the vectors with their metadata and namespaces
    (list-vectors, then get-by-ids 20 at a time), then the database's schema and rows. Resumable as `push` is."""
    progress = Progress.load(progress_file)
    options.setdefault("get_chunk", REMOTE_GET_CHUNK)
    options.setdefault("in_flight", REMOTE_IN_FLIGHT)
    vectors = push_vectors(source, target, index_name, progress, **options)
    rows = push_rows(source_db, target_db, progress)
    return PushReport(vectors, rows)
