"""D1 on DuckDB with SQLite's semantics. Statements go through the SQLite dialect layer (dialect/);
DDL is also applied to a small in-memory sqlite3 "schema mirror", which answers PRAGMA and sqlite_master
exactly as SQLite does and tells the INSERT rewrite which tables have INTEGER PRIMARY KEY rowids. The DDL is
kept in the DuckDB file (table __sq_ddl), so the mirror is rebuilt on open. User SQL never reaches that ledger
(duckdb_sandbox), and the mirror runs under SQLite's authorizer (sqlite_sandbox): replaying the ledger can only
change the mirror's schema, whatever the ledger holds.

Before DuckDB sees a statement, the mirror compiles it (EXPLAIN, never run): what SQLite cannot compile fails with
SQLite's own error. Foreign keys are the engine's (foreign_keys.py); DuckDB's errors are mapped to D1's words
(duckdb_errors.py).

One process owns a DuckDB file: a second process gets DataInUseError and should go through `memory-sim serve`.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory_sim.bindings.d1 import D1Value
from memory_sim.bindings.d1_sql import first_keyword
from memory_sim.bindings.limits import D1_MAX_DATABASE_BYTES
from memory_sim.damage import d1_damaged, looks_damaged
from memory_sim.errors import D1Error, D1Unsupported, DataInUseError
from memory_sim.local.d1.bulk import (
    BulkInsert,
    FailingRow,
    assign_ids,
    bulk_insert,
    column_lists,
    first_failing_row,
)
from memory_sim.local.d1.core import CompactFailed, D1CoreDatabase, Outcome
from memory_sim.local.d1.dialect import functions as sqlite_functions
from memory_sim.local.d1.dialect.expressions import Translation
from memory_sim.local.d1.dialect.operands import SUBQUERY
from memory_sim.local.d1.dialect.replace import STAGE
from memory_sim.local.d1.dialect.schema import TableInfo, quote_name
from memory_sim.local.d1.dialect.statements import translate
from memory_sim.local.d1.dialect.values import param_class, param_view
from memory_sim.local.d1.duckdb_connection import MacroConnection
from memory_sim.local.d1.duckdb_errors import d1_error
from memory_sim.local.d1.duckdb_mirror import Mirror
from memory_sim.local.d1.duckdb_pragmas import Pragmas
from memory_sim.local.d1.duckdb_rows import decoded, read, target_name
from memory_sim.local.d1.duckdb_sandbox import check_duckdb_text, check_sqlite_text, unsafe_views
from memory_sim.local.d1.duckdb_schema import duck_types
from memory_sim.local.d1.foreign_keys import Enforcer
from memory_sim.local.d1.literal_rows import literal_insert
from memory_sim.local.d1.time_limit import D1_QUERY_TIME_LIMIT_S, Watchdog

_CONFIG: dict[str, str | bool | int] = {
    "integer_division": True,  # SQLite: 7/2 = 3
    "error_on_division_by_zero": False,  # SQLite: x/0 is NULL
    "default_null_order": "nulls_first_on_asc_last_on_desc",  # SQLite: NULL sorts as the smallest value
    # D1 reaches no file but its own: no read_csv('/etc/passwd'), no COPY ... TO, no extension downloads.
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "python_enable_replacements": False,  # FROM name never reads a Python object of this process
    # SQLite runs a statement on one thread; DuckDB's pool of workers costs CPU on every small statement (its
    # wake-ups), and each database (a DuckDB instance) would start a pool of its own.
    "threads": 1,
    "lock_configuration": True,  # and a statement cannot SET it back
}
MIN_FREE_BYTES = 16 * 2**20
_PASSED_KEPT = 4096  # translations that passed the checks, kept per engine
_LEDGER = "CREATE TABLE IF NOT EXISTS __sq_ddl(seq BIGINT, sql VARCHAR)"
_SEQUENCE = "CREATE TABLE IF NOT EXISTS __sq_sequence(name VARCHAR PRIMARY KEY, seq BIGINT)"
# DDL that leaves every table's and view's DuckDB column types as they were: the catalog is not read again after
# it (a dropped table's types linger unused until a CREATE, which reads them again). Anything else, or a statement
# this does not recognise (a leading comment), reads them.
_KEEPS_COLUMN_TYPES = re.compile(r"\s*(?:CREATE\s+(?:UNIQUE\s+)?INDEX|CREATE\s+TRIGGER|DROP)\b", re.IGNORECASE)


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


class DuckDBEngine:
    def __init__(self, path: str | Path = ":memory:", *, max_bytes: int = D1_MAX_DATABASE_BYTES) -> None:
        import duckdb

        self.max_bytes = max_bytes  # D1's size cap: a write to a database already past it fails (SQLITE_FULL)
        self._path = str(path)
        self._conn = MacroConnection(connect(path))
        self._file = None if self._path == ":memory:" else Path(self._path)
        empty = self._file is None  # an in-memory database starts with nothing stored: nothing to read back
        try:
            sqlite_functions.register(self._conn)
            self._conn.execute(_LEDGER)
            self._conn.execute(_SEQUENCE)
            if not empty:
                self._conn.make_stored_needs()
        except duckdb.Error as exc:  # the first reads are where a torn file shows
            self._conn.close()
            raise self._failure(exc) from exc
        self._last_rowid = 0
        self._changes = self._total_changes = 0  # SQLite's changes() and total_changes()
        self._id_base = 0
        # Highest rowid (or AUTOINCREMENT sequence) per table, known without a max() query: kept across plain
        # INSERTs, forgotten on anything that may lower it or that is undone (UPDATE, DELETE, REPLACE, DDL, rollback).
        self._tops: dict[str, int | None] = {}
        self._passed: dict[tuple[str, tuple[str, ...], int], Translation] = {}
        self._ddl_in_transaction = False
        self._in_transaction = False
        self._fks = Enforcer()
        self._watchdog = Watchdog(self._conn.interrupt)  # D1's time limit (time_limit.py)
        try:
            self._rebuild_mirror(empty)
        except duckdb.Error as exc:  # the ledger's reads are where a torn file shows too
            self._conn.close()
            raise self._failure(exc) from exc
        # views made before the sandbox checked views: they may read its tables
        for view in () if empty else unsafe_views(self._conn):
            try:
                self.execute(f"DROP VIEW IF EXISTS {quote_name(view)}", [])  # from the mirror and the ledger too
            except D1Error:
                self._conn.execute(f"DROP VIEW IF EXISTS {quote_name(view)}")

    # --- Engine ---------------------------------------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[D1Value]) -> Outcome:
        translation = self._translate(sql, params)
        if translation.kind == "mirror":
            pragma = self._pragmas.answer(sql, self._in_transaction)
            return pragma if pragma is not None else self._mirror.answer(sql, params, self._last_rowid)
        if translation.kind == "ddl":
            return self._ddl(sql, translation, params)
        if translation.kind == "noop":
            return Outcome([], [], 0, self._last_rowid, False)
        if translation.kind != "read" and (translation.upsert or translation.sql.lstrip()[:6].upper() != "INSERT"):
            self._tops.clear()
        values = [self._extra(name, translation, params) for name in translation.extras]
        if translation.kind == "read":
            return self._run(translation, values)
        self._check_room()
        keys = self._fks.involved(self._written_table(translation))
        outcome = self._checked(translation, values, keys) if keys else self._write(translation, values)
        self._changes = outcome.changes
        self._total_changes += outcome.changes
        return outcome

    def _check_room(self) -> None:
        """DuckDB has no size cap of its own (SQLite's max_page_count): a write is refused once the file and its
        write-ahead log are past `max_bytes`, or its disk has under MIN_FREE_BYTES free, in SQLite's words for a
        full database."""
        if self._file is None:
            return
        used = self.size() + _size_of(self._file.with_name(self._file.name + ".wal"))
        if used > self.max_bytes:
            raise D1Error(f"database or disk is full (the database is over its {self.max_bytes:,}-byte cap): "
                          "SQLITE_FULL")
        free = shutil.disk_usage(self._file.parent).free
        if free < MIN_FREE_BYTES:  # DuckDB needs room to roll back and checkpoint: stop while there is some
            raise D1Error(f"database or disk is full ({free:,} bytes free on the disk): SQLITE_FULL")

    def _write(self, translation: Translation, values: list[Any]) -> Outcome:
        if translation.kind == "replace":
            return self._replace(translation, values)
        return self._run(translation, values)

    def _run(self, translation: Translation, values: list[Any]) -> Outcome:
        import duckdb

        try:
            cursor = self._conn.execute(translation.sql, values)
            if translation.kind == "read":
                return read(cursor, self._last_rowid)
            rows = decoded(cursor.description or (), cursor.fetchall())
            columns = [d[0] for d in cursor.description or ()]
        except duckdb.Error as exc:
            raise self._failure(exc, translation) from exc
        return self._written(translation, columns, rows)

    def _checked(self, translation: Translation, values: list[Any], keys: list[Any]) -> Outcome:
        """A write to a table with foreign keys: checked when the statement ends (at commit when deferred), the
        statement undone if it leaves a row without its parent."""
        import duckdb

        table = self._written_table(translation)
        if self._in_transaction:
            outcome = self._write(translation, values)
            if self._fks.deferred:
                self._fks.pending.add(str(table).lower())
            else:
                self._fks.check(self._conn, keys, set())
            return outcome
        self._conn.execute("BEGIN TRANSACTION")
        try:
            outcome = self._write_in(translation, values)
            self._fks.check(self._conn, keys, set())
            self._conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(duckdb.Error):
                self._conn.execute("ROLLBACK")
            self._tops.clear()
            if isinstance(exc, duckdb.Error):
                raise self._failure(exc, translation) from exc
            raise
        return outcome

    def _write_in(self, translation: Translation, values: list[Any]) -> Outcome:
        """The write inside a transaction this engine opened (a replace plan then runs without its own)."""
        self._in_transaction = True
        try:
            return self._write(translation, values)
        finally:
            self._in_transaction = False

    def execute_run(self, sql: str, param_rows: Sequence[Sequence[D1Value]]) -> list[Outcome] | None:
        """A run of one INSERT bound many times, as one statement (bulk.py); None: run them one by one. A run with
        a statement that would fail NOT NULL or a unique key fails before anything runs (FailingRow: SQLite's
        words and which statement; the caller rolls back)."""
        if len(param_rows) == 1 and not param_rows[0] and first_keyword(sql) == "INSERT":
            return self._literal_run(sql)
        return self._bulk_run(sql, param_rows)

    def _literal_run(self, sql: str) -> list[Outcome] | None:
        """One INSERT of many literal rows (more than D1 binds: a hand-written file's), as its one-row `?` form
        bound with the rows: one outcome for the statement."""
        literal = literal_insert(sql)
        if literal is None:
            return None
        # The rows hold literals only (literal_insert refuses anything else), so the `?` form, which _bulk_run
        # compiles on the mirror and checks like any statement, names all this statement names.
        try:
            outcomes = self._bulk_run(*literal)
        except FailingRow as exc:
            exc.statement = 0  # the rows are one statement's
            raise
        if not outcomes:
            return None
        return [Outcome([], [], sum(o.changes for o in outcomes), outcomes[-1].last_row_id, True)]

    def _bulk_run(self, sql: str, param_rows: Sequence[Sequence[D1Value]]) -> list[Outcome] | None:
        import duckdb

        # what the bulk statement is made of passes the sandbox
        self._translate(sql, param_rows[0] if param_rows else ())
        bulk = bulk_insert(sql, self._schema)
        lists = column_lists(param_rows, bulk) if bulk is not None else None
        if bulk is None or lists is None or not self._bulk_allowed(bulk):
            return None
        count = len(lists[0]) if lists else 0
        ids: list[int] = []
        bad: int | None = None
        top: int | None = None
        if bulk.target is not None:
            self._id_base_of(bulk.target)
            top = self._tops.get(bulk.target.name.lower())  # None: the table is empty
            explicit = lists[bulk.explicit_ids - 1] if bulk.explicit_ids is not None else None
            ids, bad = assign_ids(top, explicit, count)
            lists.append(ids)
        failing = first_failing_row(self._conn, bulk, lists, count if bad is None else bad,
                                    empty=bulk.target is not None and top is None, top=top)
        per = bulk.rows_per_statement
        if failing is not None:  # nothing ran: the run fails, as its statement `row // per` would, rolled back
            raise FailingRow(failing[1], failing[0] // per)
        statements = count // per
        try:
            self._conn.execute(bulk.sql, lists)
        except duckdb.Error as exc:
            raise self._failure(exc) from exc
        if bulk.target is None:
            return [Outcome([], [], per, self._last_rowid, True) for _ in range(statements)]
        self._last_rowid = ids[-1]
        self._note_ids(bulk.target, [max(ids)])
        return [Outcome([], [], per, ids[(n + 1) * per - 1], True) for n in range(statements)]

    def _bulk_allowed(self, bulk: BulkInsert) -> bool:
        """Foreign keys checked at once, and CHECK constraints, can fail a row the engine cannot point at before
        it runs: one by one then. A deferred check runs at commit, as it would."""
        table = bulk.table_name
        if self._mirror.checks(table):
            return False
        child = [k for k in self._fks.involved(table) if k.child.lower() == table.lower()]
        if child and not self._fks.deferred:
            return False
        if child:
            self._fks.pending.add(table.lower())
        return True

    def begin(self) -> None:
        self._conn.execute("BEGIN TRANSACTION")
        self._in_transaction = True
        self._ddl_in_transaction = False
        self._fks.end()

    def commit(self) -> None:
        import duckdb

        try:
            self._fks.at_commit(self._conn)
        except D1Error:
            self.rollback_quietly()
            raise
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
        self._fks.end()
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

    def compact(self) -> DuckDBEngine:
        """DuckDB never zeroes the blocks it frees (a CHECKPOINT only folds the log in), so the file is rewritten:
        checkpointed and closed, copied table by table into a new file (`COPY FROM DATABASE`, on a connection of
        our own: D1's is sandboxed from other files), which replaces it; the engine opens again over it."""
        import duckdb

        if self._file is None:
            return self
        try:
            self._conn.execute("CHECKPOINT")
        except duckdb.Error as exc:
            raise self._failure(exc) from exc
        self.close()
        try:
            _rewrite(self._file)
        except duckdb.Error as exc:
            raise CompactFailed(f"compacting {self._file.name} failed: {exc}",
                                DuckDBEngine(self._file, max_bytes=self.max_bytes)) from exc
        return DuckDBEngine(self._file, max_bytes=self.max_bytes)

    def time_limit(self, deadline: float | None) -> None:
        if deadline is None:
            self._watchdog.disarm()
        else:
            self._watchdog.arm(deadline)

    def size(self) -> int:
        return 0 if self._file is None else _size_of(self._file)

    def close(self) -> None:
        self._watchdog.close()
        self._conn.close()
        self._mirror.close()

    # --- internals ------------------------------------------------------------------------------------------------
    def _failure(self, exc: Exception, translation: Translation | None = None) -> D1Error:
        """DuckDB's error as D1's (duckdb_errors.py); a damaged file as one line naming it and the way back."""
        if self._file is not None and looks_damaged(exc):
            return d1_damaged(self._file, exc)
        if isinstance(exc, D1Error):
            return exc
        table = self._written_table(translation) if translation is not None else None
        return d1_error(exc, self._schema.table(table) if table else None, self._mirror.checks)

    def _written_table(self, translation: Translation) -> str | None:
        if translation.kind not in ("write", "replace"):
            return None
        if translation.target is not None:
            return translation.target.name
        return target_name(translation.steps[-1] if translation.kind == "replace" else translation.sql)

    def _translate(self, sql: str, params: Sequence[D1Value] = ()) -> Translation:
        """The statement in DuckDB's SQL, once SQLite compiled it (on the mirror) and both views of it pass the
        sandbox (duckdb_sandbox); all cached, and what passed kept by (SQL, bound classes) for this schema."""
        signature = tuple(param_class(v) for v in params)
        key = (sql, signature, self._schema.version)
        passed = self._passed.get(key)
        if passed is not None:
            return passed
        translation = self._checked_translation(sql, signature)
        if len(self._passed) >= _PASSED_KEPT:
            self._passed.clear()
        self._passed[key] = translation
        return translation

    def _checked_translation(self, sql: str, signature: tuple[str, ...]) -> Translation:
        check_sqlite_text(sql)
        if first_keyword(sql) == "ANALYZE":
            raise D1Unsupported(
                "ANALYZE: SQLite's planner statistics (sqlite_stat1) have no counterpart on the DuckDB engine, "
                "which plans without them; leave ANALYZE out or use the sqlite engine"
            )
        if first_keyword(sql) not in ("PRAGMA", "CREATE", "DROP", "ALTER"):
            self._mirror.compile(sql, self._schema.version)  # SQLite's verdict first: its errors are the answer
        translation = translate(sql, self._schema, signature)
        if translation.kind not in ("mirror", "noop"):
            for text in (*translation.steps, translation.sql, *translation.hoisted):
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
        """Run an INSERT OR REPLACE plan (replace.py) atomically; `changes` counts every new row."""
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

    def _extra(self, name: str, translation: Translation, params: Sequence[D1Value] = ()) -> Any:
        if name.startswith(SUBQUERY):  # a VALUES row's scalar subquery (dialect/clauses.py, Walker.hoisted)
            return self._scalar(name.removeprefix(SUBQUERY), translation)
        if name == "last_rowid":
            return self._last_rowid
        if name in ("changes", "total_changes"):
            return self._changes if name == "changes" else self._total_changes
        if ":" in name:  # the user's ?N, or a view of it through one of SQLite's conversions
            kind, number = name.split(":")
            value = params[int(number) - 1]
            return value if kind == "p" else param_view(kind, value)
        assert translation.target is not None
        base = self._id_base_of(translation.target)
        if base >= 2**63 - 1:
            raise D1Unsupported(
                f"a new row without an id in {translation.target.name}, whose largest rowid is 9223372036854775807, "
                "on the DuckDB engine (SQLite picks a random unused rowid); give the row its id"
            )
        return self._tops[translation.target.name.lower()] if name == "id_top" else base

    def _scalar(self, sql: str, translation: Translation) -> Any:
        """A scalar subquery's value (NULL for no row), asked as the subquery it was: more than one row fails as
        it would inline (SQLite's first row is in an order DuckDB does not keep)."""
        import duckdb

        try:
            row = self._conn.execute(f"SELECT ({sql})").fetchone()
        except duckdb.Error as exc:
            raise self._failure(exc, translation) from exc
        return None if row is None else row[0]  # an int, a float or a str (Walker.hoisted): bound as it is

    def _id_base_of(self, table: TableInfo) -> int:
        """The rowid new ids count up from: the table's largest (0 when it is empty, and negative when its rows'
        are); for AUTOINCREMENT at least the largest ever given. Remembered in `_tops` (None: an empty table)."""
        assert table.rowid_column is not None
        name = table.name.lower()
        if name not in self._tops:
            row = self._conn.execute(
                f"SELECT max({quote_name(table.rowid_column)}) FROM {quote_name(table.name)}"
            ).fetchone()
            top = None if row is None or row[0] is None else int(row[0])
            if table.autoincrement:  # AUTOINCREMENT never reuses an id, even after the largest row is deleted
                seen = self._conn.execute("SELECT seq FROM __sq_sequence WHERE name = ?", [table.name]).fetchone()
                top = max(top or 0, int(seen[0]) if seen else 0)
            self._tops[name] = top
        known = self._tops[name]
        self._id_base = known if known is not None else 0
        return self._id_base

    def _note_ids(self, table: TableInfo, inserted: list[int]) -> None:
        name = table.name.lower()
        if name in self._tops:  # else unknown: asked of the table next time
            known = self._tops[name]
            self._tops[name] = max(inserted) if known is None else max(known, *inserted)
        if table.autoincrement:
            self._conn.execute(
                "INSERT INTO __sq_sequence VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET seq = greatest(seq, excluded.seq)",
                [table.name, max(0, *inserted)],
            )

    def _ddl(self, sql: str, translation: Translation, params: Sequence[D1Value]) -> Outcome:
        import duckdb

        changed = self._mirror.define(sql, params)
        own = not self._in_transaction
        try:
            if own:
                self._conn.execute("BEGIN TRANSACTION")
            self._conn.execute(translation.sql, list(params))
            if changed:  # a no-op (CREATE ... IF NOT EXISTS of what is there) changes nothing, the ledger included
                self._conn.execute("INSERT INTO __sq_ddl VALUES (?, ?)", [self._ledger_top + 1, sql])
                self._ledger_top += 1  # a rollback of it rebuilds the mirror, which reads the top again
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
        if not _KEEPS_COLUMN_TYPES.match(sql):
            self._duck_types = duck_types(self._conn)
        self._schema = self._mirror.schema(self._duck_types)
        self._fks.reload(self._mirror.conn)
        return Outcome([], [], 0, self._last_rowid, True)

    def _rebuild_mirror(self, empty: bool = False) -> None:
        """The schema mirror from the DDL ledger (`empty`: a new in-memory database's, which holds none)."""
        old = getattr(self, "_mirror", None)
        if old is not None:
            old.close()
        ledger = [] if empty else self._conn.execute("SELECT seq, sql FROM __sq_ddl ORDER BY seq").fetchall()
        self._ledger_top = int(ledger[-1][0]) if ledger else 0
        self._mirror = Mirror(statement for (_, statement) in ledger)
        self._pragmas = Pragmas(self._fks)
        self._duck_types = {} if empty else duck_types(self._conn)
        self._schema = self._mirror.schema(self._duck_types)
        self._fks.reload(self._mirror.conn)


def _rewrite(file: Path) -> None:
    """The database copied into a new file that then replaces it (its write-ahead log, already folded, goes)."""
    import os

    import duckdb

    fresh = file.with_name(f".{file.name}.compact")
    fresh.unlink(missing_ok=True)
    copier = duckdb.connect(":memory:")
    try:
        copier.execute("ATTACH ? AS old_db (READ_ONLY)", [str(file)])
        copier.execute("ATTACH ? AS new_db", [str(fresh)])
        copier.execute("COPY FROM DATABASE old_db TO new_db")
        copier.execute("DETACH new_db")
        copier.execute("DETACH old_db")
    except BaseException:
        fresh.unlink(missing_ok=True)
        raise
    finally:
        copier.close()
    os.chmod(fresh, 0o600)
    os.replace(fresh, file)
    file.with_name(file.name + ".wal").unlink(missing_ok=True)


class DuckDBDatabase(D1CoreDatabase):
    """`D1Database` on DuckDB with SQLite semantics. `path` may be ":memory:"."""

    def __init__(self, path: str | Path = ":memory:", *, time_limit_s: float = D1_QUERY_TIME_LIMIT_S,
                 max_bytes: int = D1_MAX_DATABASE_BYTES) -> None:
        """`max_bytes`: the database's size cap (D1's 10 GB)."""
        super().__init__(DuckDBEngine(path, max_bytes=max_bytes), time_limit_s=time_limit_s)


def _size_of(path: Path) -> int:
    """A file's size, 0 where there is none (one system call: every write asks)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
