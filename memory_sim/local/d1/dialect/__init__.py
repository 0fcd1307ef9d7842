"""SQLite's dialect on DuckDB: one SQLite statement in, DuckDB SQL with SQLite's meaning out, or a refusal.

Modules, each importing only those below it (no cycle; `lint-imports` checks it):

    statements   the entry point `translate`; CREATE, INSERT (rowids), result-column names, refusals
    replace      INSERT OR REPLACE / REPLACE INTO as a plan of statements
    rowid        SQLite's rowid words
    expressions  the Emitter: expression rewrites, token-structure helpers
    like         SQLite's LIKE (ASCII case folding)
    functions    SQLite's functions on DuckDB (macros, or asked of sqlite3)

The tokens come from the D1 binding's own lexicon, `memory_sim.bindings.d1_sql`: the leaf they all build on.
"""
