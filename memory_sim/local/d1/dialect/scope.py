"""The tables a statement names, and the columns its bare and qualified names refer to: the typed emitter's source
of a column's DuckDB type, SQLite affinity and collation. Resolution is by name across the statement (as
rowid.py finds tables); a name it cannot settle (a subquery's or CTE's column, an ambiguous one) is unknown,
and the emitter then keeps SQLite's meaning per row or refuses."""

from __future__ import annotations

from memory_sim.bindings.d1_sql import Token
from memory_sim.local.d1.dialect.rowid import referenced
from memory_sim.local.d1.dialect.schema import ColumnInfo, Schema, TableInfo


class Scope:
    def __init__(self, schema: Schema, toks: list[Token], insert_target: TableInfo | None = None) -> None:
        self.tables, self.aliases = referenced(toks, schema)
        if insert_target is not None:
            self.aliases.setdefault("excluded", insert_target)

    def resolve(self, names: tuple[str, ...]) -> ColumnInfo | None:
        column = names[-1]
        if len(names) >= 2:
            table = self.aliases.get(names[-2].lower())
            return table.column_info(column) if table is not None else None
        found = {info for table in self.tables if (info := table.column_info(column)) is not None}
        return found.pop() if len(found) == 1 else None
