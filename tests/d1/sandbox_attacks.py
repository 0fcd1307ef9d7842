"""Attacks on the D1 sandbox, shared by the binding and server tests: a folder of bystanders (a victim SQLite
file in another folder, a Chroma-like metadata file, a second database beside the attacked one), a snapshot of
everything the attacked database must not touch, and statements mixing ATTACH, VACUUM INTO, load_extension,
PRAGMAs, the DuckDB engine's own tables and DuckDB's file functions with string literals and comments."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st


@dataclass(frozen=True)
class Bystanders:
    root: Path  # the sentinel root: nothing under it may appear or change but the attacked database's own files
    outside: Path  # an empty folder outside the database's, where attacks try to write
    victim: Path  # another folder's SQLite file, with a table to drop
    chroma: Path  # a Chroma-like metadata SQLite file in another folder

    def path_literals(self) -> list[str]:
        targets = [self.outside / "p.db", self.victim, self.chroma, self.outside / "x.csv", Path("relative.db")]
        literals = [quote(str(t)) for t in targets]
        return literals + [quote(f"file:{self.outside / 'uri.db'}?mode=rwc"), quote(str(self.outside) + "/")]


def quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def make_bystanders(root: Path) -> Bystanders:
    outside, other = root / "outside", root / "other-folder"
    outside.mkdir(parents=True)
    (other / "chroma").mkdir(parents=True)
    victim, chroma = other / "victim.sqlite", other / "chroma" / "chroma.sqlite3"
    for path, table in ((victim, "secret"), (chroma, "embedding_metadata")):
        with sqlite3.connect(path) as conn:
            conn.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, value TEXT)")
            conn.execute(f"INSERT INTO {table} (value) VALUES ('another account''s data')")
        conn.close()
    return Bystanders(root, outside, victim, chroma)


def snapshot(root: Path, own: Path) -> dict[str, str]:
    """Every file under root but the attacked database's own (its file, journal, WAL, temp dir), by content."""
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not (path.parent == own.parent and path.name.startswith(own.name)):
            files[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


INTERNAL = ["__sq_ddl", '"__SQ_DDL"', "main.__sq_ddl", "`__sq_ddl`", "[__sq_ddl]", "__sq_sequence", "'__sq_ddl'",
            "sqlite_master", "pg_class", "information_schema.tables", "duckdb_tables()", "query_table('__sq_ddl')"]
COMMENTS = ["", "/* ATTACH DATABASE 'x' AS y */", "-- VACUUM INTO 'x'\n", "--\r", "/* /* */", "-- '\n"]
LITERALS = ["'ATTACH DATABASE ''/tmp/x.db'' AS y'", "'; VACUUM INTO ''/tmp/v.db''; --'", "'__sq_ddl'", "'it''s'",
            "'SELECT * FROM __sq_ddl'", "'PRAGMA writable_schema=1'", "'/* */'", "'\\'"]
FRAGMENTS = [
    "ATTACH DATABASE {path} AS {alias}", "ATTACH {path} AS {alias}", "DETACH DATABASE {alias}",
    "VACUUM INTO {path}", "VACUUM", "SELECT load_extension({path})", "SELECT fts3_tokenizer('simple')",
    "PRAGMA writable_schema = 1", "PRAGMA writable_schema(1)", "PRAGMA temp_store_directory = {path}",
    "PRAGMA journal_mode = WAL", "PRAGMA database_list",
    "INSERT INTO {internal} VALUES (100000, {ddl})", "UPDATE {internal} SET sql = {ddl}", "DELETE FROM {internal}",
    "DROP TABLE {internal}", "SELECT * FROM {internal}", "CREATE TABLE {alias}.t AS SELECT 1 AS x",
    "CREATE TABLE evil{n} AS SELECT * FROM {internal}", "CREATE VIEW v{n} AS SELECT * FROM {internal}",
    "SELECT * FROM query({lit})", "SELECT * FROM read_csv({path})", "SELECT * FROM glob({path})",
    "COPY notes TO {path}", "EXPORT DATABASE {path}", "INSTALL sqlite", "LOAD sqlite",
    "SELECT * FROM json_execute_serialized_sql(json_serialize_sql({lit}))", "SELECT * FROM (SHOW TABLES)",
    "SELECT sql FROM sqlite_master {comment}", "SELECT * FROM pragma_table_info({lit})",
    "INSERT INTO notes (body) VALUES ({lit}) {comment}", "SELECT body FROM notes WHERE body = {lit}",
    "SELECT {lit} {comment}, (SELECT count(*) FROM {internal})", "SELECT E{lit}, (SELECT 1 FROM {internal}), {lit}",
    "SELECT $${lit}$$, (SELECT 1 FROM {internal})",
    "CREATE TABLE IF NOT EXISTS t{n} (id INTEGER PRIMARY KEY, body TEXT)",
    "DROP TABLE IF EXISTS t{n}", "ALTER TABLE notes ADD COLUMN c{n} TEXT", "SELECT 1 {comment}; {ddl_raw}",
]


def replayed_ddl(by: Bystanders) -> list[str]:
    """Statements an attacker would like the schema mirror to replay."""
    return [
        f"ATTACH DATABASE {quote(str(by.outside / 'q.db'))} AS pw", "CREATE TABLE pw.t AS SELECT 1 AS x",
        f"VACUUM INTO {quote(str(by.outside / 'v.db'))}", f"ATTACH {quote(str(by.victim))} AS v", "DROP TABLE v.secret",
        "PRAGMA writable_schema = 1", f"ATTACH {quote(str(by.chroma))} AS c",
        "CREATE TABLE leak AS SELECT * FROM c.embedding_metadata", "SELECT load_extension('x')",
    ]


def statements(by: Bystanders) -> st.SearchStrategy[list[str]]:
    """One to three statements, each a fragment with its holes filled."""
    ddl = replayed_ddl(by)
    fill = st.fixed_dictionaries({
        "path": st.sampled_from(by.path_literals()), "alias": st.sampled_from(["pw", "v", "main", "temp", '"x y"']),
        "internal": st.sampled_from(INTERNAL), "ddl": st.sampled_from([quote(d) for d in ddl]),
        "ddl_raw": st.sampled_from(ddl), "lit": st.sampled_from(LITERALS), "comment": st.sampled_from(COMMENTS),
        "n": st.integers(0, 3).map(str),
    })
    one = st.builds(lambda fragment, holes: fragment.format(**holes), st.sampled_from(FRAGMENTS), fill)
    return st.lists(one, min_size=1, max_size=3)
