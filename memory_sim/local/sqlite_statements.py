"""Statement-level SQLite -> DuckDB rewrites: CREATE TABLE with SQLite's type affinities and rowid tables,
INSERTs that give INTEGER PRIMARY KEY rows their ids, REPLACE INTO, result-column names, and the list of
constructs refused because DuckDB cannot honour their SQLite meaning.
"""

from __future__ import annotations

from memory_sim.errors import D1Unsupported
from memory_sim.local.sqlite_dialect import (
    Emitter,
    Schema,
    TableInfo,
    Translation,
    new_emitter,
    next_significant,
    split_args,
    strip_end,
)
from memory_sim.local.sqlite_ast import Column
from memory_sim.local.sqlite_expr import Parser
from memory_sim.local.sqlite_rowid import ROWID_WORDS, mentions_rowid, resolve_rowids
from memory_sim.local.sqlite_scope import Scope
from memory_sim.local.sqlite_tokens import Token

# Construct -> the SQLite-side alternative, for the refusal message.
_REFUSED_WORDS = {
    "TRIGGER": "triggers are not available on the DuckDB engine; use the sqlite engine or do it in batch()",
    "VIRTUAL": "virtual tables (FTS5) are not available on the DuckDB engine; use LIKE or the sqlite engine",
    "ATTACH": "ATTACH is not available in D1",
    "DETACH": "DETACH is not available in D1",
    "INDEXED": "INDEXED BY is not available on the DuckDB engine; drop the hint",
    "REGEXP": "REGEXP is not available in SQLite without an extension; use LIKE or GLOB",
    "EXPLAIN": "EXPLAIN shows DuckDB's plan, not SQLite's; use the sqlite engine",
    "VACUUM": "VACUUM is not available in D1",
}
_LIST_ENDS = {"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "WINDOW"}
_NOT_ALIASES = {"END", "NULL", "TRUE", "FALSE", "NOCASE", "BINARY", "RTRIM", "CURRENT_TIMESTAMP", "CURRENT_DATE",
                "CURRENT_TIME", "ASC", "DESC"}
_SCHEMA_TABLES = {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}


def translate_statement(sql: str, schema: Schema, signature: tuple[str, ...] = ()) -> Translation:
    toks = strip_end(sql)
    words = {t.upper for t in toks if t.kind == "word"}
    for word, why in _REFUSED_WORDS.items():
        if word in words:
            raise D1Unsupported(f"{word}: {why}")
    if not toks:
        raise D1Unsupported("empty statement")
    head = toks[0].upper
    if head == "PRAGMA" or any(_names_schema(t) for t in toks):
        return _mirror(toks)
    rowids = bool(words & ROWID_WORDS) and mentions_rowid(toks)
    if rowids and head not in ("SELECT", "WITH", "VALUES"):
        toks = _with_rowids(toks, head, schema)
    em = new_emitter(sql, signature)
    if head == "CREATE":
        return _create(em, toks, schema)
    if head in ("DROP", "ALTER"):
        from memory_sim.local.sqlite_ddl import alter

        return Translation(alter(em, toks) if head == "ALTER" else em.legacy(toks), "ddl", returns_rows=False)
    if head in ("INSERT", "REPLACE"):
        from memory_sim.local.sqlite_insert import translate_insert

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
    """rowid as SQLite means it (sqlite_rowid); DDL keeps its own words (WITHOUT ROWID, column names)."""
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


# --- result column names ----------------------------------------------------------------------------------------
def name_result_columns(toks: list[Token], start_word: str = "SELECT") -> list[Token]:
    """Alias each unaliased expression of the top-level result list with its SQL text, as SQLite names it."""
    depth = 0
    for i, tok in enumerate(toks):
        if tok.kind == "op" and tok.text in "()":
            depth += 1 if tok.text == "(" else -1
        elif depth == 0 and tok.is_word(start_word):
            return _alias_list(toks, i + 1)
    return toks


def _alias_list(toks: list[Token], start: int) -> list[Token]:
    first = next_significant(toks, start)
    if first is not None and toks[first].is_word("DISTINCT", "ALL"):
        start = first + 1
    end = len(toks)
    depth = 0
    for i in range(start, len(toks)):
        tok = toks[i]
        if tok.kind == "op" and tok.text in "()":
            depth += 1 if tok.text == "(" else -1
        elif depth == 0 and tok.kind == "word" and tok.upper in _LIST_ENDS:
            end = i
            break
    out = toks[:start]
    items = split_args(toks, start - 1, end) if end > start else []
    for lo, hi in items:
        item = toks[lo:hi]
        out.extend(item)
        name = _needs_alias(item)
        if name is not None:
            escaped = name.replace('"', '""')
            out.extend([Token("ws", " "), Token("word", "AS"), Token("ws", " "), Token("qident", f'"{escaped}"')])
        out.append(Token("op", ","))
    if items:
        out.pop()
    return out + toks[end:]


def _needs_alias(item: list[Token]) -> str | None:
    """The name SQLite gives an unaliased result expression (its text), or None: a column, `*`, or an item that
    has an alias already (what follows the expression, as SQLite's grammar reads it)."""
    sig = [t for t in item if not t.trivia]
    if not sig or sig[-1].text == "*":
        return None
    parser = Parser(item, len(item), lambda tok: 0)
    try:
        node = parser.expr()
    except D1Unsupported:
        return None
    if any(not t.trivia for t in item[parser.i:]) or isinstance(node, Column):
        return None
    return "".join(t.text for t in item).strip()


# --- DDL ----------------------------------------------------------------------------------------------------------
def _create(em: Emitter, toks: list[Token], schema: Schema) -> Translation:
    sig = [t for t in toks if not t.trivia]
    kinds = [t.upper for t in sig[1:4]]
    if "TABLE" in kinds:
        from memory_sim.local.sqlite_ddl import create_table

        return Translation(create_table(em, toks, schema), "ddl", returns_rows=False)
    if "INDEX" in kinds and any(t.is_word("WHERE") for t in toks):
        raise D1Unsupported("partial indexes (CREATE INDEX ... WHERE) are not available on DuckDB; index all rows")
    if "VIEW" in kinds:
        return Translation(as_select(em, name_result_columns(toks), schema), "ddl", returns_rows=False)
    return Translation(em.legacy(toks), "ddl", returns_rows=False)


def as_select(em: Emitter, toks: list[Token], schema: Schema) -> str:
    """CREATE VIEW / CREATE TABLE ... AS SELECT: the head as written, the SELECT typed."""
    at = next(i for i, t in enumerate(toks) if t.is_word("AS"))
    em.scope = Scope(schema, toks)
    em.wrap_output = False
    body = em.emit(toks, at + 1)
    if em.extras:
        raise D1Unsupported("a view or CREATE TABLE ... AS SELECT that needs bound values on the DuckDB engine")
    return em.legacy(toks, 0, at + 1) + " " + body


