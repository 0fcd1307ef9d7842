"""The DuckDB engine's schema mirror: an in-memory sqlite3 holding the database's DDL and no rows. It answers
PRAGMA and sqlite_master exactly as SQLite does, runs each DDL statement first (SQLite's checks and wording), and
compiles every other statement without running it (EXPLAIN), so what SQLite cannot compile fails with SQLite's own
error. It runs under SQLite's authorizer (sqlite_sandbox); replaying the DDL ledger can only change its schema."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from memory_sim.bindings.d1 import D1Value
from memory_sim.bindings.d1_sql import dummy_values
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.core import Outcome
from memory_sim.local.d1.dialect.schema import Schema, TableInfo
from memory_sim.local.d1.duckdb_sandbox import replayable
from memory_sim.local.d1.duckdb_schema import check_constraints, schema_of
from memory_sim.local.d1.sqlite_engine import sqlite_error
from memory_sim.local.d1.sqlite_sandbox import CHECK, READ, SCHEMA, Sandbox

# An EXPLAIN of the user's own: the statement it explains is what SQLite compiles (the engine then refuses EXPLAIN).
_EXPLAINED = re.compile(r"^\s*EXPLAIN(\s+QUERY\s+PLAN)?\s+", re.IGNORECASE)

_COMPILED_KEPT = 4096


class Mirror:
    def __init__(self, ledger: Iterable[object]) -> None:
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        self.conn.execute("PRAGMA foreign_keys = ON")  # so compiling a statement reports malformed keys
        self._sandbox = Sandbox(self.conn, SCHEMA)
        self._compiled: set[tuple[str, int]] = set()
        self._tables: dict[tuple[Any, ...], TableInfo] = {}  # schema_of's, kept while this mirror lives
        for statement in ledger:
            if replayable(statement):
                try:
                    self.conn.execute(str(statement))
                except sqlite3.Error:
                    continue  # e.g. a DROP of a table a later statement recreated; replay is best effort
        self._sandbox.use(READ)

    def schema(self, duck_types: dict[tuple[str, str], str]) -> Schema:
        """The schema, each column typed as DuckDB's catalog (`duck_types`, duckdb_schema.duck_types) has it."""
        if len(self._tables) > _COMPILED_KEPT:
            self._tables.clear()
        return schema_of(self.conn, types=duck_types, kept=self._tables)

    def checks(self, table: str) -> list[str]:
        return check_constraints(self.conn, table)

    def compile(self, sql: str, version: int) -> None:
        """SQLite's own verdict on the statement (no such table or column, syntax, wrong arguments...)."""
        key = (sql, version)
        if key in self._compiled:
            return
        self._sandbox.use(CHECK)
        self.conn.text_factory = bytes  # the program listing holds literals as they are, UTF-8 or not
        try:  # compiling is preparing: the program's listing is not read (40 % of a compile's time)
            self.conn.execute("EXPLAIN " + _EXPLAINED.sub("", sql, count=1), dummy_values(sql)).close()
        except sqlite3.Error as exc:
            raise sqlite_error(exc) from exc
        finally:
            self.conn.text_factory = str
            self._sandbox.use(READ)
        if len(self._compiled) > _COMPILED_KEPT:
            self._compiled.clear()
        self._compiled.add(key)

    def answer(self, sql: str, params: Sequence[D1Value], last_rowid: int) -> Outcome:
        """A PRAGMA or a query of the schema tables, answered by SQLite itself."""
        self._sandbox.read_data_table = False
        try:
            cursor = self.conn.execute(sql, tuple(params))
            rows = cursor.fetchall()
        except sqlite3.Error as exc:
            if self._sandbox.read_data_table:  # the mirror has the tables but none of their rows
                raise D1Unsupported(
                    "sqlite_master or a PRAGMA function together with a table's rows on the DuckDB engine; "
                    "query the schema on its own"
                ) from exc
            raise sqlite_error(exc) from exc
        return Outcome([d[0] for d in cursor.description or ()], rows, 0, last_rowid, False)

    def define(self, sql: str, params: Sequence[D1Value]) -> bool:
        """A DDL statement on the mirror first: SQLite's own checks and wording. Whether it changed the schema (a
        `CREATE TABLE IF NOT EXISTS` of a table that is there does not)."""
        before = self._schema_text()
        self._sandbox.use(SCHEMA)
        try:
            self.conn.execute(sql, tuple(params))
        except sqlite3.Error as exc:
            raise sqlite_error(exc) from exc
        finally:
            self._sandbox.use(READ)
        return self._schema_text() != before

    def _schema_text(self) -> list[tuple[Any, ...]]:
        return self.conn.execute("SELECT 'main', type, name, tbl_name, sql FROM sqlite_master UNION ALL "
                                 "SELECT 'temp', type, name, tbl_name, sql FROM sqlite_temp_master").fetchall()

    def close(self) -> None:
        self.conn.close()
