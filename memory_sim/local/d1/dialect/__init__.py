"""SQLite's dialect on DuckDB: one SQLite statement in, DuckDB SQL with SQLite's meaning out, or a refusal naming
the construct and the SQLite alternative.

Modules, from the entry point down (each imports only those below it; `lint-imports` checks there is no cycle):

    statements   the entry point `translate` (cached by SQL, schema and the classes of bound values)
    ddl          CREATE TABLE / ALTER TABLE / CREATE VIEW: affinities as DuckDB types, keys, stored DEFAULTs
    insert       INSERT with SQLite's rowids and stored values; replace: INSERT OR REPLACE as a plan
    names        result columns named as SQLite names them
    rowid        SQLite's rowid words; scope: the tables and columns a statement's names refer to
    expressions  the Emitter (what the engine binds) and token-structure helpers
    clauses      the statement walker, clause by clause; keywords: what each keyword opens
    store        values written into columns as their affinity keeps them; LIMIT/OFFSET counts
    typed        expressions written typed; calls (functions, CAST) and compare (comparisons, LIKE, IN)
    operands     a typed value (`Typed`) and SQLite's order of storage classes
    parser       SQLite's expression grammar and precedence, into the tree of ast
    functions    SQLite's functions on DuckDB (macros, or asked of sqlite3); like: SQLite's LIKE
    udfs         the Python functions DuckDB calls to ask sqlite3 itself, row by row
    values       SQLite's value rules in Python (affinity, conversions, CAST, comparison)
    schema       the tables as the schema mirror describes them; SQLite's declared types as DuckDB types

The tokens come from the D1 binding's own lexicon, `memory_sim.bindings.d1_sql`: the leaf they all build on.
"""
