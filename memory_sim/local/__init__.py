"""Embedded backends: Chroma-backed Vectorize (and a pure exact oracle), DuckDB- and sqlite3-backed D1,
sentence-transformers embeddings. Each implements a contract of bindings/."""
