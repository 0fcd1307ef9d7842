"""DuckDB's errors in D1's words: `D1_ERROR: <SQLite's message>: SQLITE_<CODE>` where the meaning is SQLite's
(a constraint, an integer overflow in sum(), an error sqlite3 itself raised inside a delegated function), a
refusal naming the construct where DuckDB failed on something SQLite would have run, and never DuckDB's own text
(its error classes, suggestions of its catalog, names of the engine's helpers).

Statements SQLite itself cannot compile never reach DuckDB: the schema mirror compiles each one first and its
error, SQLite's own, is the answer (duckdb_engine.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memory_sim.errors import D1Error, D1Unsupported
from memory_sim.local.d1.dialect.schema import TableInfo

_MARKED_REFUSAL = re.compile(r"\[\[d1-unsupported:(.*?)\]\]", re.S)
_MARKED_FAILURE = re.compile(r"\[\[d1:(SQLITE_[A-Z]+)\|(.*?)\]\]", re.S)
_DUPLICATE = re.compile(r'Duplicate key "(.*)" violates (?:unique|primary key) constraint', re.S)
_NOT_NULL = re.compile(r"NOT NULL constraint failed: ([^\n]+)")
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')  # DuckDB quotes some names (npcs."name"); SQLite never does here
_CHECK = re.compile(r'CHECK constraint failed on table "?([^"\s]+)"? with expression CHECK\((.*)\)', re.S)
_OVERFLOW = re.compile(r"Overflow in (addition|subtraction|multiplication|division|negation)")
_NO_TABLE = re.compile(r"Table with name (\S+) does not exist")
_RECURSIVE_CLAUSE = re.compile(r"(LIMIT or OFFSET|ORDER BY) in a recursive query is not allowed")
_BARE_COLUMN = re.compile(r'column "([^"]+)" must appear in the GROUP BY clause')


def d1_error(exc: Exception, table: TableInfo | None, checks: Callable[[str], list[str]]) -> D1Error:
    """The D1 error for a DuckDB error raised by a statement writing `table` (if any); `checks` gives a table's
    CHECK constraints as SQLite reports them (name, or expression as written)."""
    text = str(exc)
    found = _MARKED_REFUSAL.search(text)
    if found:
        return D1Unsupported(found.group(1))
    found = _MARKED_FAILURE.search(text)
    if found:
        return D1Error(f"{found.group(2)}: {found.group(1)}")
    return _constraint(text, table, checks) or _known(text) or _generic(exc)


def _constraint(text: str, table: TableInfo | None, checks: Callable[[str], list[str]]) -> D1Error | None:
    found = _DUPLICATE.search(text)
    if found and table is not None:
        columns = _key_columns(found.group(1), table)
        return D1Error(
            f"UNIQUE constraint failed: {', '.join(f'{table.name}.{c}' for c in columns)}: SQLITE_CONSTRAINT"
        )
    found = _NOT_NULL.search(text)
    if found:
        column = _QUOTED.sub(lambda m: m.group(1).replace('""', '"'), found.group(1).strip())
        return D1Error(f"NOT NULL constraint failed: {column}: SQLITE_CONSTRAINT")
    found = _CHECK.search(text)
    if found:
        text = _check_text(found.group(2), checks(found.group(1)))
        return D1Error(f"CHECK constraint failed: {text}: SQLITE_CONSTRAINT")
    return None


def _key_columns(key: str, table: TableInfo) -> list[str]:
    """The unique key a duplicate names ("a: x, b: y" in DuckDB's words), as the table declares it."""
    for columns in table.unique_keys:
        if key.lower().startswith(f"{columns[0].lower()}: ") and all(
            f", {c.lower()}: " in key.lower() for c in columns[1:]
        ):
            return list(columns)
    return [key.split(":")[0]]


def _check_text(expression: str, declared: list[str]) -> str:
    if len(declared) == 1:
        return declared[0]
    plain = _normal(expression)
    return next((d for d in declared if _normal(d) == plain), declared[0] if declared else expression)


def _normal(text: str) -> str:
    return re.sub(r"[\s()\"'`]|CAST|AS BIGINT|AS DOUBLE|AS VARCHAR", "", text, flags=re.I).lower()


def _known(text: str) -> D1Error | None:
    found = _OVERFLOW.search(text)
    if found:
        return D1Unsupported(
            f"integer overflow in {found.group(1)}: SQLite turns the result into a REAL, which an INTEGER expression "
            "on the DuckDB engine cannot become; CAST an operand AS REAL"
        )
    if "Overflow on abs" in text or "Overflow in" in text:
        return D1Error("integer overflow: SQLITE_ERROR")
    if "More than one row returned by a subquery" in text:
        return D1Unsupported(
            "a subquery used as a value returned more than one row: SQLite takes the first row, in an order the "
            "DuckDB engine cannot reproduce; add ORDER BY ... LIMIT 1 to the subquery"
        )
    found = _BARE_COLUMN.search(text)
    if found:
        column = found.group(1)
        return D1Unsupported(
            f"bare column {column} next to an aggregate outside GROUP BY: SQLite takes it from an arbitrary (or the "
            f"max()/min()) row, which DuckDB cannot reproduce; add {column} to GROUP BY or wrap it in an aggregate "
            f"such as max({column})"
        )
    found = _RECURSIVE_CLAUSE.search(text)
    if found:
        return D1Unsupported(
            f"{found.group(1)} in a recursive CTE on the DuckDB engine, which runs the recursion without them; bound "
            "it with a WHERE on the CTE's columns and LIMIT or ORDER BY the query that reads the CTE"
        )
    found = _NO_TABLE.search(text)
    if found:
        return D1Error(f"no such table: {found.group(1).strip('!')}: SQLITE_ERROR")
    if "Invalid type for index key" in text:
        return D1Unsupported(
            "an index or UNIQUE/PRIMARY KEY on a NUMERIC column on the DuckDB engine (such columns hold INTEGERs, "
            "REALs and text together); declare the column INTEGER, REAL or TEXT"
        )
    return None


def _generic(exc: Exception) -> D1Error:
    """A failure DuckDB has and SQLite would not: refused, in our words only. A failed read or write of the file
    (disk full, file too large) is SQLite's I/O error, with the system's reason."""
    kind = type(exc).__name__
    if kind == "IOException" or (kind == "TransactionException" and "Could not write" in str(exc)):
        reason = str(exc).rstrip().rsplit(": ", 1)[-1]  # e.g. "File too large", "No space left on device"
        return D1Error(f"disk I/O error ({reason}): SQLITE_IOERR")
    why = {
        "BinderException": "it combines values whose types DuckDB cannot reconcile as SQLite does",
        "ConversionException": "a value converts differently in DuckDB",
        "ParserException": "DuckDB reads its SQL differently",
        "InvalidInputException": "DuckDB rejects one of its values",
        "NotImplementedException": "DuckDB lacks the operation",
    }.get(kind, "DuckDB cannot run it")
    return D1Unsupported(
        f"this statement cannot run on the DuckDB engine with SQLite's meaning ({why}); CAST the values involved "
        "to one type, or use the sqlite engine (--d1-engine sqlite)"
    )
