"""The tables a statement names, and the columns its bare and qualified names refer to: the typed emitter's source
of a column's DuckDB type, SQLite affinity and collation. Resolution is by name across the statement (as
rowid.py finds tables); a name it cannot settle (a subquery's or CTE's column, an ambiguous one) is unknown,
and the emitter then keeps SQLite's meaning per row or refuses. json_each() and json_tree() calls count as
tables (json_table.py)."""

from __future__ import annotations

from memory_sim.bindings.d1_sql import Token
from memory_sim.local.d1.dialect import json_table
from memory_sim.local.d1.dialect.rowid import referenced
from memory_sim.local.d1.dialect.schema import ColumnInfo, Schema, TableInfo


class Scope:
    def __init__(self, schema: Schema, toks: list[Token], insert_target: TableInfo | None = None) -> None:
        self.tables, self.aliases = referenced(toks, schema)
        if insert_target is not None:
            self.aliases.setdefault("excluded", insert_target)
        self.json_calls: dict[str, str] = {}  # the name a json_each/json_tree call goes by -> the function
        for name, alias in json_table.calls(toks):
            table = json_table.table_info(name)
            self.tables.append(table)
            self.aliases[(alias or name).lower()] = table
            self.json_calls[(alias or name).lower()] = name
        # Columns of a recursive CTE whose anchor gives them no affinity ("x" and "c.x"): see clauses.Walker.
        self.derived: dict[str, ColumnInfo] = {}

    def resolve(self, names: tuple[str, ...]) -> ColumnInfo | None:
        found = self._resolve(names)
        if found is None:
            return self.derived.get(".".join(names[-2:]).lower())
        return found

    def _resolve(self, names: tuple[str, ...]) -> ColumnInfo | None:
        column = names[-1]
        if len(names) >= 2:
            qualifier = names[-2].lower()
            if qualifier in self.json_calls and column.lower() in json_table.HIDDEN:
                json_table.refuse_hidden(self.json_calls[qualifier], column)
            table = self.aliases.get(qualifier)
            return table.column_info(column) if table is not None else None
        found = {info for table in self.tables if (info := table.column_info(column)) is not None}
        if not found and self.json_calls and column.lower() in json_table.HIDDEN:
            json_table.refuse_hidden(next(iter(self.json_calls.values())), column)
        return found.pop() if len(found) == 1 else None
