"""D1 on this machine: the binding object both engines share (core), sqlite3 (the reference) and DuckDB through
the SQLite dialect layer (dialect/), SQLite's authorizer and the DuckDB sandbox, named databases in a folder."""
