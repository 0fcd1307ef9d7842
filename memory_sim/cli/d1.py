"""`memory-sim d1 ...`, as wrangler has it: execute (--command or --file, --json), list, create, delete."""

from __future__ import annotations

import argparse
import json
from typing import Any

from memory_sim.cli.folder import owning_folder


def register(subparsers: Any) -> None:
    from memory_sim.cli import arguments

    d1 = subparsers.add_parser("d1", help="local D1 databases (DuckDB with SQLite semantics, or sqlite3)")
    d1.add_argument("--engine", dest="d1_engine", choices=("duckdb", "sqlite"), default=argparse.SUPPRESS,
                    help=argparse.SUPPRESS)  # the global --d1-engine's older name
    verbs = d1.add_subparsers(dest="d1_command", metavar="VERB", required=True)
    execute = verbs.add_parser("execute", help="run SQL against a database")
    execute.add_argument("database", type=arguments.database_name, help="database name")
    source = execute.add_mutually_exclusive_group(required=True)
    source.add_argument("--command", type=arguments.sql, help="SQL statements, separated by ';'")
    source.add_argument("--file", type=arguments.input_file, help="a .sql file, statements separated by ';'")
    execute.add_argument("--json", action="store_true", help="print D1's JSON result shape")
    execute.set_defaults(handler=owning_folder(_execute, through_owner=True))
    verbs.add_parser("list", help="list databases").set_defaults(handler=owning_folder(_list, through_owner=True))
    create = verbs.add_parser("create", help="create a database")
    create.add_argument("name", type=arguments.database_name)
    create.set_defaults(handler=owning_folder(_create, through_owner=True))
    delete = verbs.add_parser("delete", help="delete a database and its data")
    delete.add_argument("name", type=arguments.database_name)
    delete.set_defaults(handler=owning_folder(_delete, through_owner=True))


def _account(args: argparse.Namespace) -> Any:
    from memory_sim.builder import open_d1_account
    from memory_sim.owner import settings_through

    route = getattr(args, "owner_route", None)
    if route is not None:  # another process owns the folder: its databases through its API
        return open_d1_account(settings_through(route, args.settings))
    return open_d1_account(args.settings)


def _execute(args: argparse.Namespace) -> int:
    from memory_sim.bindings.d1_sql import split_statements

    sql = args.command if args.command is not None else args.file.read_text()
    db = _account(args).get(args.database)
    try:  # like wrangler: the statements run as one batch (one transaction)
        results = db.batch([db.prepare(s) for s in split_statements(sql)])
    finally:
        db.close()
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
        return 0
    for result in results:
        _print_table(result.results)
        print(f"-- {result.meta.changes} changes, {result.meta.duration:.2f} ms")
    return 0


def _print_table(rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    columns = list(rows[0])
    print(" | ".join(columns))
    for row in rows:
        print(" | ".join("NULL" if row[c] is None else str(row[c]) for c in columns))


def _list(args: argparse.Namespace) -> int:
    for name in _account(args).list():
        print(name)
    return 0


def _create(args: argparse.Namespace) -> int:
    _account(args).create(args.name).close()
    where = "cloudflare" if args.settings.backend == "cloudflare" else args.settings.d1_engine
    print(f"created D1 database {args.name!r} ({where})")
    return 0


def _delete(args: argparse.Namespace) -> int:
    _account(args).delete(args.name)
    print(f"deleted D1 database {args.name!r}")
    return 0
