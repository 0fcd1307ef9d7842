"""CREATE TABLE and ALTER TABLE on DuckDB: each column's SQLite type as the DuckDB type its affinity keeps (an
INTEGER column BIGINT, NUMERIC a VARIANT, DATE-like text), rowid tables' keys, and what DuckDB must not enforce
itself because the engine does it with SQLite's meaning: REFERENCES (foreign keys: foreign_keys.py) and COLLATE
(collations: the typed emitter compares and sorts with them). The schema mirror keeps the statement as written.
"""

from __future__ import annotations

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect.expressions import Emitter, match_paren, split_args
from memory_sim.local.d1.dialect.names import name_result_columns
from memory_sim.local.d1.dialect.schema import ColumnInfo, Schema, column_type
from memory_sim.local.d1.dialect.scope import Scope
from memory_sim.local.d1.dialect.store import NOT_LITERAL, number_or_value, stored_literal
from memory_sim.local.d1.dialect.values import affinity

_COLUMN_CONSTRAINTS = {"CONSTRAINT", "PRIMARY", "NOT", "NULL", "DEFAULT", "UNIQUE", "CHECK", "REFERENCES",
                       "COLLATE", "GENERATED", "AS"}
_TABLE_CONSTRAINTS = {"CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"}


def create_table(em: Emitter, toks: list[Token], schema: Schema) -> str:
    open_i = next((i for i, t in enumerate(toks) if t.text == "(" and t.kind == "op"), None)
    if open_i is None or any(t.is_word("AS") for t in toks[:open_i]):
        return as_select(em, name_result_columns(toks), schema)  # CREATE TABLE ... AS SELECT
    close_i = match_paren(toks, open_i)
    head = em.legacy(toks, 0, open_i + 1)
    tail = [t for t in toks[close_i + 1 :] if not t.trivia]
    if any(not t.is_word("WITHOUT", "ROWID", "STRICT") and t.text != "," for t in tail):
        raise D1Unsupported("table options other than WITHOUT ROWID and STRICT")
    parts = [toks[lo:hi] for lo, hi in split_args(toks, open_i, close_i)]
    _check_collated_keys(parts)
    parts = [part for part in parts if not _is_foreign_key(part)]  # enforced by the engine (foreign_keys.py)
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
        items = [] if key_open is None else split_args(part, key_open, match_paren(part, key_open))
        names = [next(t for t in part[lo:hi] if not t.trivia).name.lower() for lo, hi in items]
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
        return em.legacy(item)
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
    rest = _stored_default(item[name_i].name, declared, _engine_only(item[type_end:]))
    return f" {em.legacy(item, name_i, name_i + 1)} {column_type(declared)} {em.legacy(rest)}".rstrip()


def _check_references(sig: list[Token]) -> None:
    if not any(t.is_word("REFERENCES") for t in sig):
        return
    for i, tok in enumerate(sig):
        if tok.is_word("ON") and i + 1 < len(sig) and sig[i + 1].is_word("DELETE", "UPDATE"):
            action = [t.upper for t in sig[i + 2 : i + 4]]
            if action != ["NO", "ACTION"]:
                raise D1Unsupported(
                    "foreign key actions (ON DELETE/ON UPDATE ...) are not available on DuckDB; "
                    "delete or update the child rows in the same batch()"
                )
        if tok.is_word("INITIALLY") and i + 1 < len(sig) and sig[i + 1].is_word("DEFERRED"):
            raise D1Unsupported(
                "DEFERRABLE INITIALLY DEFERRED foreign keys on the DuckDB engine; run PRAGMA defer_foreign_keys = ON "
                "in the batch that needs them deferred"
            )


def _stored_default(column: str, declared: str, rest: list[Token]) -> list[Token]:
    """A literal DEFAULT written as the column keeps it (`DEFAULT 1e20` in a TEXT column is '1.0e+20'); refused
    where SQLite would keep another type than the column's."""
    sig = [i for i, t in enumerate(rest) if not t.trivia]
    at = next((k for k, i in enumerate(sig) if rest[i].is_word("DEFAULT")), None)
    if at is None or at + 1 >= len(sig):
        return rest
    negative = rest[sig[at + 1]].text in ("-", "+") and at + 2 < len(sig)
    last = sig[at + 2] if negative else sig[at + 1]
    value = number_or_value(rest[last])
    if value is NOT_LITERAL or value is None:
        return rest  # an expression (evaluated per row by DuckDB, as by SQLite) or NULL
    if negative and rest[sig[at + 1]].text == "-" and isinstance(value, (int, float)):
        value = -value
    info = ColumnInfo(column_type(declared), affinity(declared))
    sql = stored_literal(value, info, f"DEFAULT of column {column}")
    return [*rest[: sig[at + 1]], Token("other", sql), *rest[last + 1 :]]


def _is_foreign_key(part: list[Token]) -> bool:
    sig = [t for t in part if not t.trivia]
    if sig and sig[0].is_word("CONSTRAINT"):
        sig = sig[2:]
    if sig and sig[0].is_word("FOREIGN"):
        _check_references(sig)
        return True
    return False


def _engine_only(rest: list[Token]) -> list[Token]:
    """A column's constraints without what the engine does itself: REFERENCES (foreign keys), COLLATE
    (collations), AUTOINCREMENT (ids come from the INSERT rewrite)."""
    out: list[Token] = []
    i = 0
    while i < len(rest):
        tok = rest[i]
        if tok.is_word("AUTOINCREMENT"):
            i += 1
        elif tok.is_word("COLLATE"):
            i = _after_word(rest, i + 1)
        elif tok.is_word("REFERENCES"):
            i = _after_references(rest, i + 1)
        else:
            out.append(tok)
            i += 1
    return out


def _after_word(toks: list[Token], i: int) -> int:
    while i < len(toks) and toks[i].trivia:
        i += 1
    return i + 1


def _after_references(toks: list[Token], i: int) -> int:
    """The index after a REFERENCES clause: the parent, its columns, actions, MATCH, DEFERRABLE."""
    i = _after_word(toks, i)
    k = i
    while k < len(toks) and toks[k].trivia:
        k += 1
    if k < len(toks) and toks[k].text == "(":
        i = match_paren(toks, k) + 1
    while True:
        sig = [j for j in range(i, len(toks)) if not toks[j].trivia][:3]
        words = [toks[j].upper for j in sig]
        if words[:1] == ["ON"] and len(sig) >= 3:
            i = sig[2] + 1
            if toks[sig[2]].is_word("SET", "NO"):
                i = _after_word(toks, i)
        elif words[:1] == ["MATCH"] and len(sig) >= 2:
            i = sig[1] + 1
        elif words[:2] == ["NOT", "DEFERRABLE"] or words[:1] == ["DEFERRABLE"]:
            i = sig[1 if words[0] == "NOT" else 0] + 1
            nxt = [j for j in range(i, len(toks)) if not toks[j].trivia][:2]
            if nxt and toks[nxt[0]].is_word("INITIALLY"):
                i = nxt[1] + 1
        else:
            return i


def _check_collated_keys(parts: list[list[Token]]) -> None:
    """A UNIQUE or PRIMARY KEY over a NOCASE or RTRIM column: SQLite's index treats 'a' and 'A' as one key, a
    DuckDB index would not."""
    collated = set()
    for part in parts:
        sig = [t for t in part if not t.trivia]
        for k, tok in enumerate(sig[:-1]):
            if tok.is_word("COLLATE") and not sig[k + 1].is_word("BINARY") and sig[0].upper not in _TABLE_CONSTRAINTS:
                collated.add(sig[0].name.lower())
                if any(t.is_word("UNIQUE", "PRIMARY") for t in sig):
                    raise _collated_key(sig[0].name)
    for part in parts:
        sig = [t for t in part if not t.trivia]
        if sig and sig[0].upper in _TABLE_CONSTRAINTS and any(t.is_word("UNIQUE", "PRIMARY") for t in sig[:3]):
            for t in sig:
                if t.kind in ("word", "qident") and t.name.lower() in collated:
                    raise _collated_key(t.name)


def _collated_key(column: str) -> D1Unsupported:
    return D1Unsupported(
        f"a UNIQUE or PRIMARY KEY over column {column}, declared COLLATE NOCASE/RTRIM, on the DuckDB engine: "
        "SQLite's index compares with the collation, DuckDB's would not; store lower(...) in a key column instead"
    )


def alter(em: Emitter, toks: list[Token]) -> str:
    sig = [(i, t) for i, t in enumerate(toks) if not t.trivia]
    add_at = next((k for k, (_, t) in enumerate(sig) if t.is_word("ADD")), None)
    if add_at is None:
        return em.legacy(toks)
    col_at = add_at + 2 if sig[add_at + 1][1].is_word("COLUMN") else add_at + 1
    start = sig[col_at][0]
    return em.legacy(toks, 0, start) + " " + _column_or_constraint(em, toks[start:]).strip()


def as_select(em: Emitter, toks: list[Token], schema: Schema) -> str:
    """CREATE VIEW / CREATE TABLE ... AS SELECT: the head as written, the SELECT typed."""
    at = next(i for i, t in enumerate(toks) if t.is_word("AS"))
    em.scope = Scope(schema, toks)
    em.wrap_output = False
    body = em.emit(toks, at + 1)
    if em.extras:
        raise D1Unsupported("a view or CREATE TABLE ... AS SELECT that needs bound values on the DuckDB engine")
    return em.legacy(toks, 0, at + 1) + " " + body
