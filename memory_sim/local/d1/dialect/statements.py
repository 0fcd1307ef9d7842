"""Statement-level SQLite -> DuckDB rewrites, and the dialect's entry point `translate(sql, schema)` (cached by
SQL text and schema version: the schema matters because INSERTs into INTEGER PRIMARY KEY tables get ids):
CREATE TABLE with SQLite's type affinities and rowid tables, INSERTs that give INTEGER PRIMARY KEY rows their
ids, REPLACE INTO, result-column names, and the list of constructs refused because DuckDB cannot honour their
SQLite meaning.
"""

from __future__ import annotations

from functools import lru_cache

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Error, D1Unsupported
from memory_sim.local.d1.dialect.expressions import (
    Emitter,
    Schema,
    TableInfo,
    Translation,
    column_type,
    match_paren,
    new_emitter,
    next_significant,
    quote_name,
    source_end,
    split_args,
    strip_end,
)
from memory_sim.local.d1.dialect.replace import replace_plan
from memory_sim.local.d1.dialect.rowid import ROWID_WORDS, mentions_rowid, resolve_rowids

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
_COLUMN_CONSTRAINTS = {"CONSTRAINT", "PRIMARY", "NOT", "NULL", "DEFAULT", "UNIQUE", "CHECK", "REFERENCES",
                       "COLLATE", "GENERATED", "AS"}
_TABLE_CONSTRAINTS = {"CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"}
_SCHEMA_TABLES = {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}


def translate_statement(sql: str, schema: Schema) -> Translation:
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
    em = new_emitter(sql)
    if head == "CREATE":
        return _create(em, toks)
    if head in ("DROP", "ALTER"):
        return Translation(_alter(em, toks) if head == "ALTER" else em.emit(toks), "ddl", returns_rows=False)
    if head in ("INSERT", "REPLACE"):
        return _insert(em, toks, schema)
    if head in ("UPDATE", "DELETE"):
        return _write(em, toks)
    named = name_result_columns(toks)  # named by the SQL as written: `max(rowid)`, as SQLite names it
    return Translation(em.emit(resolve_rowids(named, schema) if rowids else named), "read", extras=tuple(em.extras))


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
    if toks[0].upper == "PRAGMA" and any(t.text == "=" for t in toks):
        raise D1Unsupported("PRAGMA assignments are not available on the DuckDB engine; use the sqlite engine")
    return Translation("".join(t.text for t in toks), "mirror")


def _write(em: Emitter, toks: list[Token]) -> Translation:
    if len(toks) > 2 and toks[0].is_word("UPDATE") and toks[next_significant(toks, 1) or 0].is_word("OR"):
        raise D1Unsupported("UPDATE OR <conflict> is not available on the DuckDB engine; use plain UPDATE")
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
    sig = [t for t in item if not t.trivia]
    if not sig or sig[-1].text == "*":
        return None
    if len(sig) == 1 and sig[0].kind in ("word", "qident") or (
        len(sig) == 3 and sig[1].text == "." and sig[2].kind in ("word", "qident")
    ):
        return None  # a column (or table.column): named by the column already
    if len(sig) >= 2 and (sig[-2].is_word("AS") or _implicit_alias(sig)):
        return None
    return "".join(t.text for t in item).strip()


def _implicit_alias(sig: list[Token]) -> bool:
    last, before = sig[-1], sig[-2]
    if last.kind == "qident":
        return before.kind != "op" or before.text == ")"
    if last.kind != "word" or last.upper in _NOT_ALIASES:
        return False
    return before.kind in ("word", "qident", "number", "string", "param") or before.text == ")"


# --- DDL ----------------------------------------------------------------------------------------------------------
def _create(em: Emitter, toks: list[Token]) -> Translation:
    sig = [t for t in toks if not t.trivia]
    kinds = [t.upper for t in sig[1:4]]
    if "TABLE" in kinds:
        return Translation(_create_table(em, toks), "ddl", returns_rows=False)
    if "INDEX" in kinds and any(t.is_word("WHERE") for t in toks):
        raise D1Unsupported("partial indexes (CREATE INDEX ... WHERE) are not available on DuckDB; index all rows")
    if "VIEW" in kinds:
        return Translation(em.emit(name_result_columns(toks)), "ddl", returns_rows=False)
    return Translation(em.emit(toks), "ddl", returns_rows=False)


def _create_table(em: Emitter, toks: list[Token]) -> str:
    open_i = next((i for i, t in enumerate(toks) if t.text == "(" and t.kind == "op"), None)
    if open_i is None or any(t.is_word("AS") for t in toks[:open_i]):
        return em.emit(toks)  # CREATE TABLE ... AS SELECT
    close_i = match_paren(toks, open_i)
    head = em.emit(toks, 0, open_i + 1)
    tail = [t for t in toks[close_i + 1 :] if not t.trivia]
    if any(not t.is_word("WITHOUT", "ROWID", "STRICT") and t.text != "," for t in tail):
        raise D1Unsupported("table options other than WITHOUT ROWID and STRICT")
    parts = [toks[lo:hi] for lo, hi in split_args(toks, open_i, close_i)]
    if not any(t.is_word("WITHOUT") for t in tail):
        parts = [_nullable_key(part, _integer_columns(parts)) for part in parts]
    items = [_column_or_constraint(em, part) for part in parts]
    return head + ",".join(items) + ")"  # WITHOUT ROWID / STRICT dropped: DuckDB tables are both already


def _integer_columns(parts: list[list[Token]]) -> set[str]:
    out = set()
    for part in parts:
        sig = [t for t in part if not t.trivia]
        if len(sig) > 1 and sig[0].upper not in _TABLE_CONSTRAINTS and sig[1].is_word("INTEGER"):
            out.add(sig[0].name.lower())
    return out


def _nullable_key(part: list[Token], integer_columns: set[str]) -> list[Token]:
    """A rowid table's PRIMARY KEY other than INTEGER PRIMARY KEY admits NULLs in SQLite (a legacy quirk: it is
    only a UNIQUE index); DuckDB's PRIMARY KEY implies NOT NULL, so such keys become UNIQUE here."""
    sig = [i for i, t in enumerate(part) if not t.trivia]
    at = next(
        (k for k, i in enumerate(sig[:-1]) if part[i].is_word("PRIMARY") and part[sig[k + 1]].is_word("KEY")), None
    )
    if at is None:
        return part
    first = part[sig[0]]
    if first.upper in _TABLE_CONSTRAINTS:
        key_open = next((i for i in sig[at + 2 :] if part[i].text == "("), None)
        names = (
            []
            if key_open is None
            else [
                next(t for t in part[lo:hi] if not t.trivia).name.lower()
                for lo, hi in split_args(part, key_open, match_paren(part, key_open))
            ]
        )
        if len(names) == 1 and names[0] in integer_columns:
            return part
    elif first.name.lower() in integer_columns:
        return part  # INTEGER PRIMARY KEY: the rowid itself, never NULL
    drop = {sig[at + 1]}
    if at + 2 < len(sig) and part[sig[at + 2]].is_word("ASC", "DESC"):
        drop.add(sig[at + 2])
    return [Token("word", "UNIQUE") if i == sig[at] else t for i, t in enumerate(part) if i not in drop]


def _column_or_constraint(em: Emitter, item: list[Token]) -> str:
    sig = [t for t in item if not t.trivia]
    if sig and sig[0].upper in _TABLE_CONSTRAINTS:
        _check_references(sig)
        return em.emit(item)
    _check_references(sig)
    name_i = next(i for i, t in enumerate(item) if not t.trivia)
    type_end = name_i + 1
    while type_end < len(item):
        tok = item[type_end]
        if tok.kind == "word" and tok.upper in _COLUMN_CONSTRAINTS:
            break
        if tok.text == "(":
            type_end = match_paren(item, type_end)
        type_end += 1
    declared = " ".join(t.text for t in item[name_i + 1 : type_end] if not t.trivia and t.kind == "word")
    rest = [t for t in item[type_end:] if not t.is_word("AUTOINCREMENT")]  # ids come from the INSERT rewrite
    return f" {em.emit(item, name_i, name_i + 1)} {column_type(declared)} {em.emit(rest)}".rstrip()


def _check_references(sig: list[Token]) -> None:
    for i, tok in enumerate(sig):
        action = tok.is_word("ON") and i + 1 < len(sig) and sig[i + 1].is_word("DELETE", "UPDATE")
        if action and any(t.is_word("REFERENCES") for t in sig[:i]):
            raise D1Unsupported(
                "foreign key actions (ON DELETE/ON UPDATE ...) are not available on DuckDB; "
                "delete or update the child rows in the same batch()"
            )


def _alter(em: Emitter, toks: list[Token]) -> str:
    sig = [(i, t) for i, t in enumerate(toks) if not t.trivia]
    add_at = next((k for k, (_, t) in enumerate(sig) if t.is_word("ADD")), None)
    if add_at is None:
        return em.emit(toks)
    col_at = add_at + 2 if sig[add_at + 1][1].is_word("COLUMN") else add_at + 1
    start = sig[col_at][0]
    return em.emit(toks, 0, start) + " " + _column_or_constraint(em, toks[start:]).strip()


# --- INSERT -------------------------------------------------------------------------------------------------------
def _insert(em: Emitter, toks: list[Token], schema: Schema) -> Translation:
    sig = [(i, t) for i, t in enumerate(toks) if not t.trivia]
    if len(sig) < 3:  # INSERT [OR x] INTO t ... cut short: SQLite's own words
        raise D1Error("incomplete input: SQLITE_ERROR")
    prefix = "INSERT OR REPLACE"
    k = 1
    if sig[0][1].is_word("INSERT"):
        prefix = "INSERT"
        if sig[1][1].is_word("OR"):
            action = sig[2][1].upper
            if action in ("ROLLBACK", "FAIL"):
                raise D1Unsupported(f"INSERT OR {action} is not available on DuckDB; use INSERT in a batch()")
            prefix = "INSERT" if action == "ABORT" else f"INSERT OR {action}"
            k = 3
    if len(sig) < k + 2:
        raise D1Error("incomplete input: SQLITE_ERROR")
    if not sig[k][1].is_word("INTO"):
        raise D1Unsupported("INSERT without INTO")
    table = schema.table(sig[k + 1][1].name)
    returning = any(t.is_word("RETURNING") for t in toks)
    body_start = sig[k][0] + 1
    body = name_result_columns(toks[body_start:], start_word="RETURNING") if returning else toks[body_start:]
    if prefix == "INSERT OR REPLACE" and table is not None:
        return replace_plan(em, body, table, returning)
    if table is None or table.rowid_column is None:
        sql = f"{prefix} INTO{em.emit(body)}"
        return Translation(sql, "write", returns_rows=returning, extras=tuple(em.extras))
    sql = f"{prefix} INTO{_with_ids(em, body, table)}"
    if not returning:
        sql += f" RETURNING {quote_name(table.rowid_column)}"
    upsert = any(t.is_word("CONFLICT") for t in toks)
    return Translation(sql, "write", True, tuple(em.extras), table, returning_injected=not returning, upsert=upsert)


def _with_ids(em: Emitter, body: list[Token], table: TableInfo) -> str:
    """Give rows without an id SQLite's next rowid (max + 1 upward, counted from a base the engine binds)."""
    rowid = table.rowid_column or ""
    sig = [(i, t) for i, t in enumerate(body) if not t.trivia]
    name_end = sig[0][0] + 1
    j = 1
    if j < len(sig) and sig[j][1].is_word("AS"):
        name_end, j = sig[j + 1][0] + 1, j + 2
    columns: list[str] | None = None
    cols_close = None
    if j < len(sig) and sig[j][1].text == "(":
        cols_close = match_paren(body, sig[j][0])
        columns = [
            next(t for t in body[lo:hi] if not t.trivia).name for lo, hi in split_args(body, sig[j][0], cols_close)
        ]
    source_at = cols_close + 1 if cols_close is not None else name_end
    src = next_significant(body, source_at)
    if src is None:
        raise D1Unsupported("INSERT without VALUES or SELECT")
    head = em.emit(body, 0, name_end)
    listed = columns if columns is not None else list(table.columns)
    lower = [c.lower() for c in listed]
    base = em.extra("id_base")
    if body[src].is_word("DEFAULT"):
        after = next_significant(body, src + 1) or src
        return f"{head} ({quote_name(rowid)}) VALUES ({base} + 1)" + em.emit(body, after + 1)
    if body[src].is_word("VALUES"):
        return _values_with_ids(em, body, src, head, listed, lower, rowid, base)
    if rowid.lower() in lower:
        return head + em.emit(body, name_end)  # ids come from the SELECT itself
    end = source_end(body, src)
    cols = ", ".join(quote_name(c) for c in [rowid, *listed])
    select = em.emit(body, src, end)
    return f"{head} ({cols}) SELECT {base} + row_number() OVER (), __src.* FROM ({select}) AS __src " + em.emit(
        body, end
    )


def _values_with_ids(
    em: Emitter, body: list[Token], src: int, head: str, listed: list[str], lower: list[str], rowid: str, base: str
) -> str:
    position = lower.index(rowid.lower()) if rowid.lower() in lower else None
    cols = listed if position is not None else [rowid, *listed]
    out = [f"{head} ({', '.join(quote_name(c) for c in cols)}) VALUES "]
    i = src + 1
    n = 0
    while True:
        open_i = next_significant(body, i)
        if open_i is None or body[open_i].text != "(":
            break
        close_i = match_paren(body, open_i)
        n += 1
        values = [em.emit(body, lo, hi).strip() for lo, hi in split_args(body, open_i, close_i)]
        if position is None:
            values.insert(0, f"{base} + {n}")
        else:
            values[position] = f"coalesce({values[position]}, {base} + {n})"
        out.append(("," if n > 1 else "") + f"({', '.join(values)})")
        comma = next_significant(body, close_i + 1)
        if comma is None or body[comma].text != ",":
            i = close_i + 1
            break
        i = comma + 1
    return "".join(out) + " " + em.emit(body, i)


@lru_cache(maxsize=4096)
def translate(sql: str, schema: Schema) -> Translation:
    """`translate_statement`, cached by (SQL text, schema version)."""
    return translate_statement(sql, schema)
