"""SQLite's dialect on DuckDB: one SQLite statement in, DuckDB SQL with SQLite's meaning out, or a refusal."""
