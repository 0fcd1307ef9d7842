"""What the DuckDB engine lets D1 SQL ask of DuckDB. DuckDB has no authorizer (its configuration already keeps
it off the filesystem: duckdb_engine._CONFIG), so the engine's own objects are kept out of reach by checking each
statement twice, and refusing it in SQLite's words:

1. The user's SQL as SQLite reads it (bindings/d1_sql.py): a statement SQLite knows, no name of the engine's own
   objects (`__sq_*`: the DDL ledger, the AUTOINCREMENT sequences, the helper macros), no character SQLite
   cannot read. Checked before anything runs, the schema mirror included.
2. The DuckDB SQL the dialect layer made of it, as DuckDB itself reads it (`duckdb.extract_statements`,
   `duckdb.tokenize`: what DuckDB will run, whatever a string literal, a comment or an escape hides from a scan):
   one statement, of a kind D1 SQL can be; no identifier naming the bookkeeping tables, DuckDB's catalog views
   and schemas (duckdb_tables, information_schema, pg_catalog, ...) or a DuckDB table function (query(),
   query_table(), read_csv(), ...) except as the name a statement defines; no DuckDB-only statement inside a
   statement (SHOW, DESCRIBE, SUMMARIZE, PIVOT); no call of the DuckDB functions that read its settings. The lists
   of views and table functions come from DuckDB's own catalog, so what a later DuckDB adds is refused too. A text
   none of these rules could refuse (one SELECT, INSERT, UPDATE or DELETE, no `;`, none of the watched names
   anywhere in it) is let through without DuckDB parsing it: most statements, at a tenth of the cost.

Views a database kept from before these checks are checked when it opens (`unsafe_views`).
"""

from __future__ import annotations

import re
import threading
from functools import cache, lru_cache
from typing import Any, NamedTuple

from memory_sim.bindings.d1_sql import first_keyword, significant, tokenize
from memory_sim.errors import D1Error

INTERNAL_PREFIX = "__sq_"
BOOKKEEPING = frozenset({"__sq_ddl", "__sq_sequence"})
_SQLITE_STATEMENTS = frozenset(
    "SELECT WITH VALUES INSERT REPLACE UPDATE DELETE CREATE DROP ALTER PRAGMA ANALYZE REINDEX EXPLAIN ATTACH "
    "DETACH VACUUM BEGIN COMMIT END ROLLBACK SAVEPOINT RELEASE".split()
)
_DUCKDB_KINDS = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER"})
# SQLite's json_each/json_tree become rows of the engine's own function, unnest(__sq_json_each_1(...)) (the dialect's
# json_table.py): DuckDB's functions of those names answer differently, so they are refused like other table functions.
_ENGINE_ROWS = "__sq_json_"
_SETTINGS_FUNCTIONS = frozenset({"current_setting", "getvariable"})  # paths, configuration, variables
_INNER_STATEMENTS = frozenset({"show", "describe", "summarize", "pivot", "pivot_longer", "pivot_wider", "unpivot"})
# Words after which a name followed by "(" is being defined (a table, a CTE, an alias's columns), not called.
_DEFINING = frozenset({"table", "into", "references", "on", "view", "exists", "index", "with", "recursive", "as"})
_HEX = frozenset("0123456789abcdefABCDEF")
_TABLE_INTRODUCERS = frozenset({"from", "join", "into", "update", "table", "using"})
_CLAUSES = frozenset({
    "select", "where", "values", "set", "group", "order", "by", "having", "limit", "offset", "returning", "window",
    "qualify", "union", "except", "intersect",
})


class DuckToken(NamedTuple):
    kind: str  # DuckDB's token types: identifier, keyword, operator, string_const, numeric_const, comment
    text: str

    @property
    def name(self) -> str:
        text = self.text
        if len(text) >= 2 and text[0] == text[-1] and text[0] in '"`':
            return text[1:-1].replace(text[0] * 2, text[0]).lower()
        return text.lower()

    @property
    def value(self) -> str:
        """A plain string literal's value, lowercased."""
        text = self.text
        return text[1:-1].replace("''", "'").lower() if len(text) >= 2 and text[0] == text[-1] == "'" else ""


def no_such_table(name: str) -> D1Error:
    return D1Error(f"no such table: {name}: SQLITE_ERROR")


def not_authorized() -> D1Error:
    return D1Error("not authorized: SQLITE_AUTH")


@lru_cache(maxsize=4096)
def check_sqlite_text(sql: str) -> None:
    """Step 1: the user's statement, as SQLite reads it."""
    toks = significant(tokenize(sql))
    if not toks:
        return
    if toks[0].kind != "word" or toks[0].upper not in _SQLITE_STATEMENTS:
        raise D1Error(f'near "{toks[0].text}": syntax error: SQLITE_ERROR')
    for tok in toks:
        if tok.kind in ("word", "qident") and tok.name.lower().startswith(INTERNAL_PREFIX):
            raise no_such_table(tok.name)
        if (tok.kind == "other" and tok.text.isascii()) or (tok.kind == "blob" and not _hex_blob(tok.text)):
            raise D1Error(f'unrecognized token: "{tok.text}": SQLITE_ERROR')


def replayable(statement: object) -> bool:
    """May the schema mirror replay this DDL ledger entry? Only DDL naming none of the engine's own objects: the
    ledger is a table in a user's file (sqlite_sandbox.py's SCHEMA mode then checks what the statement does)."""
    if not isinstance(statement, str) or first_keyword(statement) not in ("CREATE", "ALTER", "DROP"):
        return False
    try:
        check_sqlite_text(statement)
    except D1Error:
        return False
    return True


def _hex_blob(text: str) -> bool:
    digits = text[2:-1]
    return len(digits) % 2 == 0 and set(digits) <= _HEX


@lru_cache(maxsize=4096)
def check_duckdb_text(sql: str) -> None:
    """Step 2: DuckDB SQL made from a user's statement, as DuckDB reads it. Most statements cannot be refused at
    all (`_nothing_to_refuse`); the others are parsed and tokenised by DuckDB."""
    if not _nothing_to_refuse(sql):
        _check_as_duckdb_reads_it(sql)


# The head of one statement whose kind DuckDB's parser cannot read otherwise (UPDATE EXTENSIONS is checked apart).
_PLAIN_HEAD = re.compile(r"[ \t\n\r]*(?:select|insert|delete|update)(?![\w$])", re.IGNORECASE)


def _nothing_to_refuse(sql: str) -> bool:
    """True when no reading of `sql` can break a rule below, so DuckDB need not parse and tokenise it (it was a
    third of translating and checking a new statement). Each rule needs one of: a `;` (a second statement); a head
    other than SELECT, INSERT, DELETE or UPDATE (another kind of statement); or, as a substring of the lowercased
    text, a string literal starting `'__sq_`, or one of the names the rules look for (a token can only name one,
    quoted or not, if the text holds it). Checking substrings, not words, keeps this a superset of what the rules
    refuse."""
    if ";" in sql or not _PLAIN_HEAD.match(sql):
        return False
    lowered = sql.lower()
    if f"'{INTERNAL_PREFIX}" in lowered:
        return False
    return not any(name in lowered for name in _watched_names())


@cache
def _watched_names() -> tuple[str, ...]:
    """Every name a rule of step 2 refuses when a token holds it (UPDATE EXTENSIONS among them)."""
    names = BOOKKEEPING | hidden_relations() | table_functions() | _SETTINGS_FUNCTIONS | _INNER_STATEMENTS
    return tuple(sorted(names | {"extensions"}))


def _check_as_duckdb_reads_it(sql: str) -> None:
    import duckdb

    try:
        statements = _parser().extract_statements(sql)
    except duckdb.Error:
        return  # DuckDB cannot parse it, so it runs nothing of it; running it reports the error
    if len(statements) > 1:
        raise D1Error("You can only execute one statement at a time.: SQLITE_ERROR")
    if statements and _kind(statements[0]) not in _DUCKDB_KINDS:
        raise not_authorized()
    toks = duckdb_tokens(sql)
    for i, tok in enumerate(toks):
        value = tok.value if tok.kind == "string_const" else ""
        if (value.startswith(INTERNAL_PREFIX) or _forbidden(value)) and _names_a_table(toks, i):
            raise no_such_table(tok.value)
        if tok.kind not in ("identifier", "keyword"):
            continue
        name = tok.name
        if _forbidden(name):
            raise no_such_table(name)
        if tok.kind == "keyword" and name in _INNER_STATEMENTS:
            raise not_authorized()
        if name in table_functions() and _is_call(toks, i) and not _defines(toks, i) and not _engine_rows(toks, i):
            raise no_such_table(name)
        if name in _SETTINGS_FUNCTIONS and _is_call(toks, i):
            raise D1Error(f"no such function: {name}: SQLITE_ERROR")


def _kind(statement: Any) -> str:
    """The statement's kind; a kind DuckDB's Python module has no name for (UPDATE EXTENSIONS) is none of ours."""
    try:
        return str(statement.type.name)
    except ValueError:
        return "unknown"


def unsafe_views(conn: Any) -> list[str]:
    """Views of this database whose DuckDB SQL the checks refuse (kept from before them), and views built on those."""
    views = conn.execute(
        "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal AND NOT temporary "
        "AND database_name = current_database()"
    ).fetchall()
    unsafe: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, sql in views:
            if name.lower() not in unsafe and (_refused(sql) or _mentions(sql, unsafe)):
                unsafe.add(name.lower())
                grew = True
    return sorted(unsafe)


def _refused(sql: str) -> bool:
    try:
        check_duckdb_text(sql)
    except D1Error:
        return True
    return False


def _mentions(sql: str, names: set[str]) -> bool:
    return any(tok.name in names for tok in duckdb_tokens(sql) if tok.kind in ("identifier", "keyword"))


def _forbidden(name: str) -> bool:
    """The bookkeeping tables, and DuckDB's catalog views and schemas (the engine emits other `__sq_` names)."""
    return name in BOOKKEEPING or name in hidden_relations()


def _names_a_table(toks: list[DuckToken], i: int) -> bool:
    """DuckDB, like SQLite, reads a string where a table belongs as the table's name: FROM '__sq_ddl'."""
    prev = toks[i - 1] if i else None
    if prev is None:
        return False
    if prev.kind == "keyword" and prev.name in _TABLE_INTRODUCERS:
        return True
    return prev.kind == "operator" and prev.text == "," and _in_from_list(toks, i - 1)


def _in_from_list(toks: list[DuckToken], comma: int) -> bool:
    """Is this comma one of a FROM clause's (not of a value list, a select list or arguments)?"""
    depth = 0
    for k in range(comma - 1, -1, -1):
        tok = toks[k]
        if tok.kind == "operator":
            depth += tok.text.count(")") - tok.text.count("(")
            if depth < 0:
                return False  # inside parentheses that hold no FROM of their own: VALUES (...), f(...), IN (...)
        elif depth == 0 and tok.kind == "keyword":
            if tok.name in ("from", "join", "using"):
                return True
            if tok.name in _CLAUSES:
                return False
    return False


def duckdb_tokens(sql: str) -> list[DuckToken]:
    import duckdb

    starts = duckdb.tokenize(sql)
    if not starts:
        return []
    ends = [start for start, _ in starts[1:]] + [len(sql)]
    toks = [DuckToken(kind.name, sql[start:end].strip()) for (start, kind), end in zip(starts, ends, strict=True)]
    return [tok for tok in toks if tok.kind != "comment"]


def _is_call(toks: list[DuckToken], i: int) -> bool:
    return i + 1 < len(toks) and toks[i + 1].kind == "operator" and toks[i + 1].text == "("


def _engine_rows(toks: list[DuckToken], i: int) -> bool:
    """unnest() of the engine's own JSON rows (a user's SQL cannot name `__sq_` functions: step 1)."""
    return toks[i].name == "unnest" and i + 2 < len(toks) and toks[i + 2].kind == "identifier" \
        and toks[i + 2].name.startswith(_ENGINE_ROWS)


def _defines(toks: list[DuckToken], i: int) -> bool:
    """Is the name at i (followed by "(") defined here: CREATE TABLE name(...), INSERT INTO name(...), a CTE?"""
    j = i
    while j >= 2 and toks[j - 1].text == ".":  # a qualified name: look before its first part
        j -= 2
    if j >= 1 and toks[j - 1].kind == "keyword" and toks[j - 1].name in _DEFINING:
        return True
    close = _matching(toks, i + 1)
    after = toks[close + 1 : close + 3]
    cte = len(after) == 2 and after[0].name == "as"
    return cte and (after[1].text == "(" or after[1].name in ("materialized", "not"))


def _matching(toks: list[DuckToken], open_at: int) -> int:
    depth = 0
    for k in range(open_at, len(toks)):
        if toks[k].kind == "operator":
            depth += toks[k].text.count("(") - toks[k].text.count(")")
            if depth <= 0:
                return k
    return len(toks) - 1


_PARSERS = threading.local()


def _parser() -> Any:
    """A connection of this thread's own to parse with: DuckDB's module-level functions share one default
    connection (and its lock) between threads."""
    conn = getattr(_PARSERS, "conn", None)
    if conn is None:
        import duckdb

        conn = _PARSERS.conn = duckdb.connect(":memory:", config={"autoload_known_extensions": False})
    return conn


@cache
def _catalog() -> tuple[frozenset[str], frozenset[str]]:
    """(views and schemas a D1 statement must not name, table functions it must not call), from DuckDB itself."""
    import duckdb

    conn = duckdb.connect(":memory:", config={"autoload_known_extensions": False})
    try:
        views = conn.execute(
            "SELECT view_name FROM duckdb_views() WHERE internal AND schema_name IN ('main', 'pg_catalog')"
        ).fetchall()
        functions = conn.execute(
            "SELECT function_name FROM duckdb_functions() WHERE function_type IN ('table', 'table_macro')"
        ).fetchall()
    finally:
        conn.close()
    hidden = {name.lower() for (name,) in views} | {"information_schema", "pg_catalog"}
    return frozenset(hidden), frozenset(name.lower() for (name,) in functions)


def hidden_relations() -> frozenset[str]:
    return _catalog()[0]


def table_functions() -> frozenset[str]:
    return _catalog()[1]
