"""SQLite's `rowid` (also `_rowid_`, `oid`) on DuckDB.

SQLite's rowid is stable for a row's life and IS the INTEGER PRIMARY KEY column where a table has one. DuckDB's
`rowid` is a physical position that changes when a row is UPDATEd, so passing the word through would run with
another meaning. Here a rowid reference to a table with an INTEGER PRIMARY KEY becomes that column; to a table
with a real column of that name, stays that column (as in SQLite); anything else is refused (D1Unsupported),
naming the alternative: an INTEGER PRIMARY KEY column.
"""

from __future__ import annotations

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect.expressions import next_significant
from memory_sim.local.d1.dialect.schema import Schema, TableInfo

ROWID_WORDS = frozenset({"ROWID", "_ROWID_", "OID"})
# Words that may follow a table reference and so are not its alias.
_NOT_ALIAS = frozenset(
    "WHERE JOIN LEFT RIGHT INNER OUTER CROSS NATURAL FULL ON USING SET ORDER GROUP HAVING LIMIT UNION EXCEPT "
    "INTERSECT WINDOW VALUES SELECT DEFAULT RETURNING INDEXED NOT DO OFFSET".split()
)


def mentions_rowid(toks: list[Token]) -> bool:
    return any(_is_rowid(t) for t in toks)


def _is_rowid(tok: Token) -> bool:
    return tok.kind in ("word", "qident") and tok.name.upper() in ROWID_WORDS


def resolve_rowids(toks: list[Token], schema: Schema) -> list[Token]:
    """The statement's tokens with each rowid reference replaced by the INTEGER PRIMARY KEY column it means."""
    tables, aliases = referenced(toks, schema)
    out = list(toks)
    for i, tok in enumerate(toks):
        if not _is_rowid(tok) or _is_alias_or_call(toks, i):
            continue
        table = _target(toks, i, tables, aliases)
        if tok.name.lower() in (c.lower() for c in table.columns):
            continue  # a real column of that name: SQLite means the column too
        if table.rowid_column is None:
            raise D1Unsupported(
                f"{tok.text} of table {table.name}, which has no INTEGER PRIMARY KEY: DuckDB's row numbers change "
                "when a row is updated; declare a column `id INTEGER PRIMARY KEY` (it is the rowid) and use it"
            )
        out[i] = Token("qident", '"' + table.rowid_column.replace('"', '""') + '"')
    return out


def _is_alias_or_call(toks: list[Token], i: int) -> bool:
    before = _previous_significant(toks, i)
    after = next_significant(toks, i + 1)
    return (before is not None and toks[before].is_word("AS")) or (after is not None and toks[after].text == "(")


def _previous_significant(toks: list[Token], i: int) -> int | None:
    i -= 1
    while i >= 0 and toks[i].trivia:
        i -= 1
    return i if i >= 0 else None


def referenced(toks: list[Token], schema: Schema) -> tuple[list[TableInfo], dict[str, TableInfo]]:
    """The schema's tables the statement names (not as `x.` qualifiers), and their aliases."""
    tables: list[TableInfo] = []
    aliases: dict[str, TableInfo] = {}
    for i, tok in enumerate(toks):
        if tok.kind not in ("word", "qident"):
            continue
        table = schema.table(tok.name)
        if table is None:
            continue
        after = next_significant(toks, i + 1)
        if after is not None and toks[after].text == ".":
            continue
        before = _previous_significant(toks, i)
        if before is not None and toks[before].text == ".":
            continue  # a column that happens to share a table's name
        if table not in tables:
            tables.append(table)
        aliases[table.name.lower()] = table
        if after is not None and toks[after].is_word("AS"):
            after = next_significant(toks, after + 1)
        if after is not None and toks[after].kind in ("word", "qident") and toks[after].upper not in _NOT_ALIAS:
            aliases[toks[after].name.lower()] = table
    return tables, aliases


def _target(toks: list[Token], i: int, tables: list[TableInfo], aliases: dict[str, TableInfo]) -> TableInfo:
    word = toks[i].text
    dot = _previous_significant(toks, i)
    if dot is not None and toks[dot].text == ".":
        qualifier = _previous_significant(toks, dot)
        name = toks[qualifier].name if qualifier is not None else ""
        if name.lower() in aliases:
            return aliases[name.lower()]
        raise D1Unsupported(f"{name}.{word}: not a table of this database (rowid of a subquery or CTE); "
                            "select an INTEGER PRIMARY KEY column instead")
    if len(tables) == 1:
        return tables[0]
    if not tables:
        raise D1Unsupported(f"{word} outside a table of this database (a subquery or CTE); "
                            "select an INTEGER PRIMARY KEY column instead")
    raise D1Unsupported(f"{word} with several tables; qualify it with the table, e.g. {tables[0].name}.{word}")
