"""Statement-level SQLite -> DuckDB rewrites: CREATE TABLE with SQLite's type affinities and rowid tables,
INSERTs that give INTEGER PRIMARY KEY rows their ids, REPLACE INTO, result-column names, and the list of
constructs refused because DuckDB cannot honour their SQLite meaning.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect.ddl import alter, as_select, create_table
from memory_sim.local.d1.dialect.expressions import (
    Emitter,
    Translation,
    new_emitter,
    next_significant,
    strip_end,
)
from memory_sim.local.d1.dialect.insert import translate_insert
from memory_sim.local.d1.dialect.names import name_result_columns
from memory_sim.local.d1.dialect.rowid import ROWID_WORDS, mentions_rowid, resolve_rowids
from memory_sim.local.d1.dialect.schema import Schema, TableInfo
from memory_sim.local.d1.dialect.scope import Scope
from memory_sim.local.d1.dialect.shorthands import spell_out

# Construct -> the SQLite-side alternative, for the refusal message.
_REFUSED_WORDS = {
    "TRIGGER": "triggers are not available on the DuckDB engine; use the sqlite engine or do it in batch()",
    "VIRTUAL": "virtual tables (FTS5) are not available on the DuckDB engine; use LIKE or the sqlite engine",
    "ATTACH": "ATTACH is not available in D1",
    "DETACH": "DETACH is not available in D1",
    "REGEXP": "REGEXP is not available in SQLite without an extension; use LIKE or GLOB",
    "EXPLAIN": "EXPLAIN shows DuckDB's plan, not SQLite's; use the sqlite engine",
    "VACUUM": "VACUUM is not available in D1",
}
_SCHEMA_TABLES = {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}


def translate_statement(sql: str, schema: Schema, signature: tuple[str, ...] = ()) -> Translation:
    toks = strip_end(sql)
    words = {t.upper for t in toks if t.kind == "word"}
    toks = spell_out(toks, words)
    for word, why in _REFUSED_WORDS.items():
        if word in words:
            raise D1Unsupported(f"{word}: {why}")
    if not toks:
        raise D1Unsupported("empty statement")
    head = toks[0].upper
    if head == "REINDEX":  # SQLite checked the name (the mirror compiled it); DuckDB's indexes need no rebuild
        return Translation("", "noop", returns_rows=False)
    if head == "PRAGMA" or any(_names_schema(t) for t in toks):
        return _mirror(toks)
    rowids = bool(words & ROWID_WORDS) and mentions_rowid(toks)
    if rowids and head not in ("SELECT", "WITH", "VALUES"):
        toks = _with_rowids(toks, head, schema)
    em = new_emitter(sql, signature)
    if head == "CREATE":
        return _create(em, toks, schema)
    if head in ("DROP", "ALTER"):
        return Translation(alter(em, toks) if head == "ALTER" else em.legacy(toks), "ddl", returns_rows=False)
    if head in ("INSERT", "REPLACE"):
        em.scope = Scope(schema, toks, _insert_target(toks, schema))
        return translate_insert(em, toks, schema)
    em.scope = Scope(schema, toks)
    if head in ("UPDATE", "DELETE"):
        return _write(em, toks, schema)
    named = name_result_columns(toks)  # named by the SQL as written: `max(rowid)`, as SQLite names it
    return Translation(em.emit(resolve_rowids(named, schema) if rowids else named), "read", extras=tuple(em.extras))


def _insert_target(toks: list[Token], schema: Schema) -> TableInfo | None:
    sig = [t for t in toks if not t.trivia]
    into = next((i for i, t in enumerate(sig) if t.is_word("INTO")), None)
    return schema.table(sig[into + 1].name) if into is not None and into + 1 < len(sig) else None


def _with_rowids(toks: list[Token], head: str, schema: Schema) -> list[Token]:
    """rowid as SQLite means it (rowid.py); DDL keeps its own words (WITHOUT ROWID, column names)."""
    if head in ("CREATE", "DROP", "ALTER"):
        if any(t.is_word("VIEW") for t in toks):
            raise D1Unsupported("rowid in a view on the DuckDB engine; select an INTEGER PRIMARY KEY column")
        return toks
    return resolve_rowids(toks, schema)


def _names_schema(tok: Token) -> bool:
    """sqlite_master & co. and SQLite's PRAGMA functions: the schema, which the mirror answers (DuckDB has views
    of those names that would list the engine's own tables)."""
    if tok.kind not in ("word", "qident"):
        return False
    name = tok.name.lower()
    return name in _SCHEMA_TABLES or name.startswith("pragma_")


def _mirror(toks: list[Token]) -> Translation:
    """PRAGMAs and the schema tables: answered by the schema mirror (foreign-key PRAGMAs by the engine)."""
    return Translation("".join(t.text for t in toks), "mirror")


def _write(em: Emitter, toks: list[Token], schema: Schema) -> Translation:
    if len(toks) > 2 and toks[0].is_word("UPDATE") and toks[next_significant(toks, 1) or 0].is_word("OR"):
        raise D1Unsupported("UPDATE OR <conflict> is not available on the DuckDB engine; use plain UPDATE")
    if toks[0].is_word("UPDATE"):
        em.store_target = schema.table(toks[next_significant(toks, 1) or 0].name)
    returning = any(t.is_word("RETURNING") for t in toks)
    sql = em.emit(name_result_columns(toks, start_word="RETURNING") if returning else toks)
    return Translation(sql, "write", returns_rows=returning, extras=tuple(em.extras))


# --- DDL ----------------------------------------------------------------------------------------------------------
def _create(em: Emitter, toks: list[Token], schema: Schema) -> Translation:
    sig = [t for t in toks if not t.trivia]
    kinds = [t.upper for t in sig[1:4]]
    if "TABLE" in kinds:
        return Translation(create_table(em, toks, schema), "ddl", returns_rows=False)
    if "INDEX" in kinds and any(t.is_word("WHERE") for t in toks):
        raise D1Unsupported("partial indexes (CREATE INDEX ... WHERE) are not available on DuckDB; index all rows")
    if "VIEW" in kinds:
        return Translation(as_select(em, name_result_columns(toks), schema), "ddl", returns_rows=False)
    return Translation(em.legacy(toks), "ddl", returns_rows=False)


@lru_cache(maxsize=4096)
def translate(sql: str, schema: Schema, signature: tuple[str, ...] = ()) -> Translation:
    """The statement in DuckDB's SQL for bound values of these classes (values.param_class)."""
    return numbered(translate_statement(sql, schema, signature))


_MARK = re.compile("\x00([^\x00]*)\x00")


def numbered(t: Translation) -> Translation:
    """Bound values as $1, $2, ... in order of first use in the SQL that receives them (a replace plan binds its
    first step); Translation.extras lists what each one is."""
    order: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in order:
            order.append(match.group(1))
        return f"${order.index(match.group(1)) + 1}"

    if t.kind == "replace":
        first = _MARK.sub(number, t.steps[0])
        if _MARK.search(t.sql) or any(_MARK.search(step) for step in t.steps[1:]):
            raise D1Unsupported("bound values in RETURNING of an INSERT OR REPLACE on the DuckDB engine")
        return replace(t, steps=(first, *t.steps[1:]), extras=tuple(order))
    return replace(t, sql=_MARK.sub(number, t.sql), extras=tuple(order))
