"""`memory-sim d1 ...`, as wrangler has it: execute (--command or --file, --json, --local/--remote), list, create,
delete. `--json` prints what wrangler prints: the API's result (for execute, an error too: `{"error": {...}}` on
stdout, code 7500 for a failed statement), and the API's description of databases for list and create.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from memory_sim.cli.folder import owning_folder

JSON_HELP = "print JSON (the shape wrangler prints)"
D1_SQL_CODE = 7500  # D1's code for a failed statement, as the REST API answers it (server/envelope.py)


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
    execute.add_argument(
        "--json", action="store_true", help="print D1's JSON result shape (and an error as JSON on stdout)"
    )
    where = execute.add_mutually_exclusive_group()  # wrangler's flags, as a per-call --backend
    where.add_argument("--local", dest="backend", action="store_const", const="local", default=argparse.SUPPRESS,
                       help="run on the data folder's database (the default unless the settings choose cloudflare)")
    where.add_argument("--remote", dest="backend", action="store_const", const="cloudflare", default=argparse.SUPPRESS,
                       help="run on the configured Cloudflare account (CLOUDFLARE_ACCOUNT_ID, CLOUDFLARE_API_TOKEN)")
    execute.set_defaults(handler=owning_folder(_execute, through_owner=True))
    listing = verbs.add_parser("list", help="list databases")
    listing.add_argument("--json", action="store_true", help=JSON_HELP)
    listing.set_defaults(handler=owning_folder(_list, through_owner=True))
    create = verbs.add_parser("create", help="create a database")
    create.add_argument("name", type=arguments.database_name)
    create.add_argument("--json", action="store_true", help=JSON_HELP)
    create.set_defaults(handler=owning_folder(_create, through_owner=True))
    delete = verbs.add_parser("delete", help="delete a database and its data")
    delete.add_argument("name", type=arguments.database_name)
    delete.add_argument("--json", action="store_true", help="print the result as JSON")
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
    from memory_sim.errors import D1Error, MemorySimError

    sql = args.command if args.command is not None else _import_text(args.file)
    running = False
    try:
        db = _account(args).get(args.database)
        try:  # like wrangler: the statements run as one batch (one transaction)
            running = True
            results = db.batch([db.prepare(s) for s in split_statements(sql)])
        finally:
            db.close()
    except MemorySimError as exc:
        if args.json:  # wrangler --json: the error on stdout; the one line on stderr still follows
            print(json.dumps({"error": _error_json(exc, running and isinstance(exc, D1Error))}, indent=2))
        raise
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
        return 0
    for result in results:
        _print_table(result.results)
        print(f"-- {result.meta.changes} changes, {result.meta.duration:.2f} ms")
    return 0


def _import_text(path: Path) -> str:
    """The file's SQL, refused (D1's 5 GB import limit) before any of it is read."""
    from memory_sim.bindings.d1_account_limits import check_import_size

    check_import_size(path.stat().st_size)
    return path.read_text()


def _error_json(exc: Exception, from_d1: bool) -> dict[str, Any]:
    """An error as wrangler prints it under --json: its API error (notes carry `[code: N]`, D1 answers a failed
    statement with 7500), or `{"text": ...}` for what went wrong before any SQL ran."""
    if not from_d1:
        return {"text": str(exc)}
    return {"text": str(exc), "notes": [{"text": f"{exc} [code: {D1_SQL_CODE}]"}], "kind": "error", "name": "APIError",
            "code": D1_SQL_CODE}


def _print_table(rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    columns = list(rows[0])
    print(" | ".join(columns))
    for row in rows:
        print(" | ".join("NULL" if row[c] is None else str(row[c]) for c in columns))


def _described(account: Any, name: str | None = None) -> list[dict[str, Any]]:
    """The databases as the API describes them; a folder's own under the stable uuid and creation time that
    `memory-sim serve` lists for them (folder_lock.database_id_for, the file's time)."""
    from memory_sim.folder_lock import database_id_for
    from memory_sim.server.env_account import file_created_at

    describe = getattr(account, "describe", None)
    if describe is not None:
        return [d for d in describe() if name is None or d.get("name") == name]
    names = account.list() if name is None else [name]
    return [{"uuid": database_id_for(n), "name": n, "created_at": file_created_at(account.path(n)),
             "version": "production", "num_tables": None, "file_size": account.path(n).stat().st_size}
            for n in names]


def _list(args: argparse.Namespace) -> int:
    account = _account(args)
    if args.json:
        print(json.dumps(_described(account), indent=2))
        return 0
    for name in account.list():
        print(name)
    return 0


def _create(args: argparse.Namespace) -> int:
    account = _account(args)
    account.create(args.name).close()
    if args.json:
        print(json.dumps(_described(account, args.name)[0], indent=2))
        return 0
    where = "cloudflare" if args.settings.backend == "cloudflare" else args.settings.d1_engine
    print(f"created D1 database {args.name!r} ({where})")
    return 0


def _delete(args: argparse.Namespace) -> int:
    from memory_sim.cli.output import say

    _account(args).delete(args.name)
    say(args, f"deleted D1 database {args.name!r}", {"deleted": args.name})
    return 0
