"""The database's tables as the dialect sees them (from the schema mirror): each column's DuckDB type, SQLite
affinity and collation, rowid column and unique keys; SQLite's declared types as DuckDB types; names as DuckDB
reads them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from memory_sim.errors import D1Unsupported

_versions = itertools.count(1)
# Words DuckDB reserves that SQLite does not know at all: in SQLite text they can only be names, so quote them.
DUCKDB_ONLY_KEYWORDS = frozenset(
    "AT ASOF ANTI SEMI POSITIONAL PIVOT UNPIVOT PIVOT_LONGER PIVOT_WIDER LAMBDA QUALIFY SUMMARIZE SHOW DESCRIBE "
    "MAP STRUCT TUPLE UNPACK VARIADIC TRY_CAST COLUMNS SETOF FREEZE TABLESAMPLE".split()
)


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    duck: str  # the column's DuckDB type: BIGINT, DOUBLE, VARCHAR, BLOB, VARIANT
    aff: str  # its SQLite affinity: INTEGER, REAL, NUMERIC, TEXT, BLOB ("?" where unknown, as in a view)
    coll: str = ""  # its declared collation (NOCASE, RTRIM), "" for BINARY


@dataclass(frozen=True, slots=True)
class TableInfo:
    name: str
    columns: tuple[str, ...]
    rowid_column: str | None  # the INTEGER PRIMARY KEY column that aliases the rowid
    autoincrement: bool = False
    unique_keys: tuple[tuple[str, ...], ...] = ()  # PRIMARY KEY, UNIQUE constraints and unique indexes
    defaults: frozenset[str] = frozenset()  # columns with a DEFAULT clause
    self_referencing: bool = False  # has a foreign key to itself (rows of one INSERT may depend on each other)
    info: tuple[ColumnInfo, ...] = ()  # per column, in order
    not_null: frozenset[str] = frozenset()  # columns declared NOT NULL
    default_texts: tuple[tuple[str, str], ...] = ()  # (column, its DEFAULT as SQLite reports it)

    def default_text(self, column: str) -> str | None:
        return next((text for name, text in self.default_texts if name.lower() == column.lower()), None)

    def column_info(self, name: str) -> ColumnInfo | None:
        lower = name.lower()
        for column, info in zip(self.columns, self.info, strict=False):
            if column.lower() == lower:
                return info
        return None


class Schema:
    """The tables as the SQLite schema mirror sees them. Equal, and hashed alike, when they hold the same tables:
    the translation caches (`translate`, `bulk_insert`) are shared by every database of a process whose schema is
    the same (bounded by their own sizes). The content key is made once, so comparing stays cheap; `version`
    still tells one database's schema changes apart (its mirror's own caches)."""

    def __init__(self, tables: dict[str, TableInfo] | None = None) -> None:
        self.tables = {k.lower(): v for k, v in (tables or {}).items()}
        self.version = next(_versions)
        self._key = tuple(sorted(self.tables.items()))
        self._hash = hash(self._key)

    def table(self, name: str) -> TableInfo | None:
        return self.tables.get(name.lower())

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Schema):
            return False
        return other is self or (other._hash == self._hash and other._key == self._key)


def quote_name(name: str) -> str:
    """A name as a double-quoted identifier, whatever characters it holds."""
    return '"' + name.replace('"', '""') + '"'


def column_type(declared: str) -> str:
    """SQLite's affinity rules, as DuckDB types (64-bit integers, text for date-like types)."""
    upper = declared.upper()
    if "INT" in upper or "BOOL" in upper:
        return "BIGINT"
    if any(word in upper for word in ("CHAR", "CLOB", "TEXT", "DATE", "TIME", "JSON", "UUID")):
        return "VARCHAR"
    if "BLOB" in upper:
        return "BLOB"
    if any(word in upper for word in ("REAL", "FLOA", "DOUB")):
        return "DOUBLE"
    if "NUMERIC" in upper or "DECIMAL" in upper:
        return "VARIANT"  # NUMERIC affinity keeps 5 as an INTEGER and 5.5 as a REAL (and 'abc' as TEXT)
    raise D1Unsupported(
        f"column type '{declared or '(none)'}': SQLite's dynamic typing has no DuckDB equivalent; "
        "declare INTEGER, REAL, TEXT or BLOB"
    )
