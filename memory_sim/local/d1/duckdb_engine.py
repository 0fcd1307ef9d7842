"""D1 on DuckDB with SQLite's semantics. Statements go through the SQLite dialect layer (dialect/);
DDL is also applied to a small in-memory sqlite3 "schema mirror", which answers PRAGMA and sqlite_master
exactly as SQLite does and tells the INSERT rewrite which tables have INTEGER PRIMARY KEY rowids. The DDL is
kept in the DuckDB file (table __sq_ddl), so the mirror is rebuilt on open. User SQL never reaches that ledger
(duckdb_sandbox.py), and the mirror runs under SQLite's authorizer (sqlite_sandbox.py): replaying the ledger can only
change the mirror's schema, whatever the ledger holds.

One process owns a DuckDB file: a second process gets DataInUseError and should go through `memory-sim serve`.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory_sim.bindings.d1 import D1Value
from memory_sim.bindings.d1_sql import tokenize
from memory_sim.damage import d1_damaged, looks_damaged
from memory_sim.errors import D1Error, D1Unsupported, DataInUseError
from memory_sim.local.d1.bulk import bulk_insert, column_lists
from memory_sim.local.d1.core import D1CoreDatabase, Outcome
from memory_sim.local.d1.dialect import functions as sqlite_functions
from memory_sim.local.d1.dialect.expressions import Schema, TableInfo, Translation, quote_name
from memory_sim.local.d1.dialect.replace import STAGE
from memory_sim.local.d1.dialect.statements import translate
from memory_sim.local.d1.duckdb_sandbox import check_duckdb_text, check_sqlite_text, replayable, unsafe_views
from memory_sim.local.d1.sqlite_engine import sqlite_error
from memory_sim.local.d1.sqlite_sandbox import READ, SCHEMA, Sandbox

_CONFIG: dict[str, str | bool] = {
    "integer_division": True,  # SQLite: 7/2 = 3
    "error_on_division_by_zero": False,  # SQLite: x/0 is NULL
    "default_null_order": "nulls_first_on_asc_last_on_desc",  # SQLite: NULL sorts as the smallest value
    # D1 reaches no file but its own: no read_csv('/etc/passwd'), no COPY ... TO, no extension downloads.
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "python_enable_replacements": False,  # FROM name never reads a Python object of this process
    "lock_configuration": True,  # and a statement cannot SET it back
}
# Result types whose Python values need no reshaping for D1 (and convert exactly through numpy).
_BARE_COLUMN = re.compile(r'column "([^"]+)" must appear in the GROUP BY clause')
_SUGGESTION = re.compile(r'\s*Did you mean "[^"]*"\?')  # may name the engine's own tables
_PLAIN_TYPES = frozenset({"VARCHAR", "BIGINT", "INTEGER", "DOUBLE"})
_HEAD_ROWS = 64  # rows fetched as tuples before a large result switches to columnar fetching
_LEDGER = "CREATE TABLE IF NOT EXISTS __sq_ddl(seq BIGINT, sql VARCHAR)"
_SEQUENCE = "CREATE TABLE IF NOT EXISTS __sq_sequence(name VARCHAR PRIMARY KEY, seq BIGINT)"


def connect(path: str | Path) -> Any:
    import duckdb

    try:
        return duckdb.connect(str(path), config=dict(_CONFIG))
    except duckdb.Error as exc:
        if looks_damaged(exc):
            raise d1_damaged(Path(path), exc) from exc
        if not isinstance(exc, duckdb.IOException) or "lock" not in str(exc).lower():
            raise D1Error(str(exc)) from exc
        raise DataInUseError(
            f"the D1 data at {path} is in use by another process ({str(exc).splitlines()[0]}); "
            "reach it through `memory-sim serve` instead of opening it directly"
        ) from exc


def schema_of(mirror: sqlite3.Connection) -> Schema:
    tables: dict[str, TableInfo] = {}
    query = "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    for name, sql in mirror.execute(query).fetchall():
        info = mirror.execute(f"PRAGMA table_info({quote_name(name)})").fetchall()  # cid, name, type, notnull, dflt, pk
        toks = [t for t in tokenize(sql or "") if not t.trivia]
        words = {t.upper for t in toks if t.kind == "word"}
        keys = [row for row in info if row[5] > 0]
        is_alias = len(keys) == 1 and str(keys[0][2]).upper() == "INTEGER" and "WITHOUT" not in words
        rowid = keys[0][1] if is_alias else None
        tables[name] = TableInfo(
            name,
            tuple(r[1] for r in info),
            rowid,
            "AUTOINCREMENT" in words,
            _unique_keys(mirror, name, rowid),
            frozenset(r[1] for r in info if r[4] is not None),
            any(t.is_word("REFERENCES") and i + 1 < len(toks) and toks[i + 1].name.lower() == name.lower()
                for i, t in enumerate(toks)),
        )
    return Schema(tables)


def _unique_keys(mirror: sqlite3.Connection, table: str, rowid: str | None) -> tuple[tuple[str, ...], ...]:
    keys = [(rowid,)] if rowid is not None else []
    for _, index, unique, _, partial in mirror.execute(f"PRAGMA index_list({quote_name(table)})").fetchall():
        if unique and not partial:
            info = mirror.execute(f"PRAGMA index_info({quote_name(index)})").fetchall()  # seqno, cid, name
            keys.append(tuple(row[2] for row in sorted(info)))
    return tuple(keys)


class DuckDBEngine:
    def __init__(self, path: str | Path = ":memory:") -> None:
        import duckdb

        self._path = str(path)
        self._conn = connect(path)
        self._file = None if self._path == ":memory:" else Path(self._path)
        try:
            sqlite_functions.register(self._conn)
            self._conn.execute(_LEDGER)
            self._conn.execute(_SEQUENCE)
        except duckdb.Error as exc:  # the first reads are where a torn file shows
            self._conn.close()
            raise self._failure(exc) from exc
        self._last_rowid = 0
        self._id_base = 0
        # Highest rowid (or AUTOINCREMENT sequence) per table, known without a max() query: kept across plain
        # INSERTs, forgotten on anything that may lower it or that is undone (UPDATE, DELETE, REPLACE, DDL, rollback).
        self._tops: dict[str, int] = {}
        self._ddl_in_transaction = False
        self._in_transaction = False
        try:
            self._rebuild_mirror()
        except duckdb.Error as exc:  # the ledger's reads are where a torn file shows too
            self._conn.close()
            raise self._failure(exc) from exc
        for view in unsafe_views(self._conn):  # made before the sandbox checked views: they may read its tables
            try:
                self.execute(f"DROP VIEW IF EXISTS {quote_name(view)}", [])  # from the mirror and the ledger too
            except D1Error:
                self._conn.execute(f"DROP VIEW IF EXISTS {quote_name(view)}")

    # --- Engine ---------------------------------------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[D1Value]) -> Outcome:
        import duckdb

        translation = self._translate(sql)
        if translation.kind == "mirror":
            return self._on_mirror(sql, params)
        if translation.kind == "ddl":
            return self._ddl(sql, translation, params)
        if translation.kind != "read" and (translation.upsert or translation.sql.lstrip()[:6].upper() != "INSERT"):
            self._tops.clear()
        values = [*params, *(self._extra(name, translation) for name in translation.extras)]
        if translation.kind == "replace":
            return self._replace(translation, values)
        try:
            cursor = self._conn.execute(translation.sql, values)
            if translation.kind == "read":
                return self._read(cursor)
            rows = cursor.fetchall()
            columns = [d[0] for d in cursor.description or ()]
        except duckdb.Error as exc:
            raise _refusal(exc) or self._failure(exc) from exc
        return self._written(translation, columns, rows)

    def execute_run(self, sql: str, param_rows: Sequence[Sequence[D1Value]]) -> list[Outcome] | None:
        """A run of one INSERT bound many times, as one statement (bulk.py); None: run them one by one."""
        import duckdb

        self._translate(sql)  # what the bulk statement is made of passes the sandbox
        bulk = bulk_insert(sql, self._schema)
        lists = column_lists(param_rows, bulk.params) if bulk is not None else None
        if bulk is None or lists is None:
            return None
        count = len(param_rows)
        base = self._id_base_of(bulk.target) if bulk.target is not None else 0
        if bulk.target is not None:
            lists.append(list(range(base + 1, base + count + 1)))
        try:
            self._conn.execute(bulk.sql, lists)
        except duckdb.Error as exc:
            raise self._failure(exc) from exc
        if bulk.target is None:
            return [Outcome([], [], 1, self._last_rowid, True) for _ in range(count)]
        self._last_rowid = base + count
        self._note_ids(bulk.target, [base + count])
        return [Outcome([], [], 1, base + n, True) for n in range(1, count + 1)]

    def begin(self) -> None:
        self._conn.execute("BEGIN TRANSACTION")
        self._in_transaction = True
        self._ddl_in_transaction = False

    def commit(self) -> None:
        import duckdb

        try:
            self._conn.execute("COMMIT")
        except duckdb.Error as exc:  # the write-ahead log could not be written (disk full, file too large)
            self.rollback_quietly()
            raise self._failure(exc) from exc
        self._in_transaction = False

    def rollback_quietly(self) -> None:
        """After a failed COMMIT DuckDB has usually rolled back already; reset our state either way."""
        import duckdb

        try:
            self.rollback()
        except duckdb.Error:
            self._in_transaction = False
            self._tops.clear()
            if self._ddl_in_transaction:
                self._rebuild_mirror()

    def rollback(self) -> None:
        self._conn.execute("ROLLBACK")
        self._in_transaction = False
        self._tops.clear()
        if self._ddl_in_transaction:
            self._rebuild_mirror()

    def backup(self, dest: Path) -> None:
        """A consistent copy of the file: CHECKPOINT folds the write-ahead log into it, then it is copied while
        the caller (D1CoreDatabase) holds the database's lock, so no statement runs in between. (EXPORT DATABASE
        and ATTACH would need external access, which D1's sandbox turns off for good.)"""
        import shutil

        import duckdb

        if self._file is None:
            raise D1Error("an in-memory database has no file to back up")
        try:
            self._conn.execute("CHECKPOINT")
        except duckdb.Error as exc:
            raise self._failure(exc) from exc
        shutil.copyfile(self._file, dest)

    def size(self) -> int:
        return self._file.stat().st_size if self._file is not None and self._file.exists() else 0

    def close(self) -> None:
        self._conn.close()
        self._mirror.close()

    # --- internals ------------------------------------------------------------------------------------------------
    def _failure(self, exc: Exception) -> D1Error:
        """DuckDB's error as D1's; a damaged file as one line naming it and the way back."""
        if self._file is not None and looks_damaged(exc):
            return d1_damaged(self._file, exc)
        return exc if isinstance(exc, D1Error) else D1Error(_cause(exc))

    def _translate(self, sql: str) -> Translation:
        """The statement in DuckDB's SQL, once both views of it pass the sandbox (duckdb_sandbox.py); all cached."""
        check_sqlite_text(sql)
        translation = translate(sql, self._schema)
        if translation.kind != "mirror":
            for text in (*translation.steps, translation.sql):
                check_duckdb_text(text)
        return translation

    def _written(self, translation: Translation, columns: list[str], rows: list[tuple[Any, ...]]) -> Outcome:
        if not translation.returns_rows:
            changes = int(rows[0][0]) if rows else 0
            return Outcome([], [], changes, self._last_rowid, changes > 0)
        target = translation.target
        if target is not None and rows and target.rowid_column in columns:
            at = columns.index(target.rowid_column)
            ids = [int(row[at]) for row in rows if row[at] is not None]
            # Rows at or below the base existed before: an upsert updated them, which SQLite does not count.
            inserted = [i for i in ids if i > self._id_base] if translation.upsert else ids
            if inserted:
                self._last_rowid = inserted[-1]
                self._note_ids(target, inserted)
        if translation.returning_injected:
            return Outcome([], [], len(rows), self._last_rowid, bool(rows))
        return Outcome(columns, rows, len(rows), self._last_rowid, bool(rows))

    def _replace(self, translation: Translation, values: list[Any]) -> Outcome:
        """Run an INSERT OR REPLACE plan (dialect/replace.py) atomically; `changes` counts every new row."""
        import duckdb

        own = not self._in_transaction
        try:
            if own:
                self._conn.execute("BEGIN TRANSACTION")
            self._conn.execute(translation.steps[0], values)
            staged = int(self._conn.execute(translation.steps[1]).fetchone()[0])
            for step in translation.steps[2:]:
                self._conn.execute(step)
            cursor = self._conn.execute(translation.sql)
            rows = cursor.fetchall()
            columns = [d[0] for d in cursor.description or ()]
            self._conn.execute(f"DROP TABLE {STAGE}")
            if own:
                self._conn.execute("COMMIT")
        except BaseException as exc:
            if own:
                self._conn.execute("ROLLBACK")
            if isinstance(exc, duckdb.Error):
                raise self._failure(exc) from exc
            raise
        outcome = self._written(translation, columns, rows)
        self._tops.clear()  # the deletes may have removed the highest rowid
        outcome.changes, outcome.changed_db = staged, staged > 0
        return outcome

    def _read(self, cursor: Any) -> Outcome:
        """Rows as tuples; past the first few, columns of plain types come columnar (numpy), which is far
        cheaper for large reads than Python tuples."""
        description = cursor.description or ()
        columns = [d[0] for d in description]
        plain = len(set(columns)) == len(columns) and all(str(d[1]) in _PLAIN_TYPES for d in description)
        rows = cursor.fetchmany(_HEAD_ROWS)
        if len(rows) < _HEAD_ROWS:
            return Outcome(columns, rows, 0, self._last_rowid, False, plain)
        if not plain:
            return Outcome(columns, rows + cursor.fetchall(), 0, self._last_rowid, False)
        arrays = cursor.fetchnumpy()
        tail = [arrays[name].tolist() for name in columns]
        return Outcome(columns, rows, 0, self._last_rowid, False, plain, tail)

    def _extra(self, name: str, translation: Translation) -> int:
        if name == "last_rowid":
            return self._last_rowid
        assert translation.target is not None
        return self._id_base_of(translation.target)

    def _id_base_of(self, table: TableInfo) -> int:
        assert table.rowid_column is not None
        known = self._tops.get(table.name.lower())
        if known is not None:
            self._id_base = known
            return known
        top = self._conn.execute(
            f"SELECT coalesce(max({quote_name(table.rowid_column)}), 0) FROM {quote_name(table.name)}"
        ).fetchone()
        base = int(top[0]) if top else 0
        if table.autoincrement:  # AUTOINCREMENT never reuses an id, even after the largest row is deleted
            seen = self._conn.execute("SELECT seq FROM __sq_sequence WHERE name = ?", [table.name]).fetchone()
            base = max(base, int(seen[0]) if seen else 0)
        self._id_base = self._tops[table.name.lower()] = base
        return base

    def _note_ids(self, table: TableInfo, inserted: list[int]) -> None:
        top = max(self._tops.get(table.name.lower(), 0), *inserted)
        self._tops[table.name.lower()] = top
        if table.autoincrement:
            self._conn.execute(
                "INSERT INTO __sq_sequence VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET seq = greatest(seq, excluded.seq)",
                [table.name, top],
            )

    def _on_mirror(self, sql: str, params: Sequence[D1Value]) -> Outcome:
        self._sandbox.read_data_table = False
        try:
            cursor = self._mirror.execute(sql, tuple(params))
            rows = cursor.fetchall()
        except sqlite3.Error as exc:
            if self._sandbox.read_data_table:  # the mirror has the tables but none of their rows
                raise D1Unsupported(
                    "sqlite_master or a PRAGMA function together with a table's rows on the DuckDB engine; "
                    "query the schema on its own"
                ) from exc
            raise sqlite_error(exc) from exc
        return Outcome([d[0] for d in cursor.description or ()], rows, 0, self._last_rowid, False)

    def _ddl(self, sql: str, translation: Translation, params: Sequence[D1Value]) -> Outcome:
        import duckdb

        self._sandbox.use(SCHEMA)
        try:
            self._mirror.execute(sql, tuple(params))  # SQLite's own checks and wording come first
        except sqlite3.Error as exc:
            raise sqlite_error(exc) from exc
        finally:
            self._sandbox.use(READ)
        own = not self._in_transaction
        try:
            if own:
                self._conn.execute("BEGIN TRANSACTION")
            self._conn.execute(translation.sql, list(params))
            self._conn.execute("INSERT INTO __sq_ddl SELECT coalesce(max(seq), 0) + 1, ? FROM __sq_ddl", [sql])
            if own:
                self._conn.execute("COMMIT")
        except duckdb.Error as exc:
            if own:
                self._conn.execute("ROLLBACK")
                self._rebuild_mirror()
            else:
                self._ddl_in_transaction = True  # the batch's rollback rebuilds the mirror
            raise self._failure(exc) from exc
        self._ddl_in_transaction = True
        self._tops.clear()
        self._schema = schema_of(self._mirror)
        return Outcome([], [], 0, self._last_rowid, True)

    def _rebuild_mirror(self) -> None:
        old = getattr(self, "_mirror", None)
        if old is not None:
            old.close()
        self._mirror = sqlite3.connect(":memory:", check_same_thread=False)
        self._sandbox = Sandbox(self._mirror, SCHEMA)
        for (statement,) in self._conn.execute("SELECT sql FROM __sq_ddl ORDER BY seq").fetchall():
            if replayable(statement):
                try:
                    self._mirror.execute(statement)
                except sqlite3.Error:
                    continue  # e.g. a DROP of a table a later statement recreated; replay is best effort
        self._sandbox.use(READ)
        self._schema = schema_of(self._mirror)


def _refusal(exc: Exception) -> D1Unsupported | None:
    """DuckDB errors that mean "valid SQLite, but not with SQLite's meaning here", as refusals."""
    found = _BARE_COLUMN.search(str(exc))
    if found is None:
        return None
    column = found.group(1)
    return D1Unsupported(
        f"bare column {column} next to an aggregate outside GROUP BY: SQLite takes it from an arbitrary (or the "
        f"max()/min()) row, which DuckDB cannot reproduce; add {column} to GROUP BY or wrap it in an aggregate "
        f"such as max({column})"
    )


def _cause(exc: Exception) -> str:
    text = _SUGGESTION.sub("", str(exc)).strip()
    return " ".join(line.strip() for line in text.splitlines()[:2] if line.strip())


class DuckDBDatabase(D1CoreDatabase):
    """`D1Database` on DuckDB with SQLite semantics. `path` may be ":memory:"."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        super().__init__(DuckDBEngine(path))
