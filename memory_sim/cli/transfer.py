"""`memory-sim export` and `memory-sim push`: local memory to files wrangler takes, or to a Cloudflare account.

    memory-sim export --vectorize-ndjson memories.ndjson --d1-sql memory.sql
    memory-sim push [--progress FILE]     # target from CLOUDFLARE_ACCOUNT_ID / CLOUDFLARE_API_TOKEN /
                                          # MEMORY_SIM_D1_DATABASE_ID / CLOUDFLARE_BASE_URL, or the flags
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from memory_sim.cli.folder import owning_folder
from memory_sim.errors import ConfigError


def _local(args: argparse.Namespace) -> tuple[Any, Any]:
    from memory_sim.bindings import limits
    from memory_sim.builder import open_d1_account, open_vectorize_account
    settings = args.settings.replace(backend="local")
    account = open_vectorize_account(settings, max_batch=limits.VECTORIZE_MAX_BATCH_REST)
    database = open_d1_account(settings).get(args.database)
    return account, database


def _export(args: argparse.Namespace) -> int:
    from memory_sim.transfer import export_sql, export_vectors

    if not args.vectorize_ndjson and not args.d1_sql:
        raise ConfigError("nothing to export: give --vectorize-ndjson FILE and/or --d1-sql FILE")
    account, database = _local(args)
    try:
        if args.vectorize_ndjson:
            n = export_vectors(account.index(args.index), args.vectorize_ndjson)
            print(f"wrote {n} vectors to {args.vectorize_ndjson} (wrangler vectorize insert {args.index} --file ...)")
        if args.d1_sql:
            n = export_sql(database, args.d1_sql)
            print(f"wrote the schema and {n} rows to {args.d1_sql} (wrangler d1 execute <db> --remote --file ...)")
    finally:
        database.close()
        account.close()
    return 0


def _push(args: argparse.Namespace) -> int:
    from memory_sim.builder import cloudflare_client, open_cloudflare_storage
    from memory_sim.transfer import push

    settings = args.settings.replace(
        backend="cloudflare", account_id=args.account_id, api_token=args.api_token, base_url=args.base_url,
        database_id=args.database_id, index_name=args.index, database_name=args.database,
    )
    client = cloudflare_client(settings)
    target_vectorize, open_target_db = open_cloudflare_storage(settings, client)
    target_db = open_target_db()
    account, database = _local(args)
    progress = Path(args.progress or Path(args.data) / "push-progress.json")
    try:
        report = push(account, database, target_vectorize, target_db, args.index, progress,
                      on_batch=lambda n: print(f"  {n} vectors sent", flush=True))
    finally:
        database.close()
        account.close()
        client.close()
    print(f"pushed {report.vectors} vectors and {report.rows} rows (progress in {progress}; delete it to push again)")
    return 0


def _common(parser: argparse.ArgumentParser) -> None:
    from memory_sim.cli import arguments

    parser.add_argument("--index", type=arguments.index_name, default=os.environ.get("MEMORY_SIM_INDEX", "memories"),
                        help="Vectorize index name")
    parser.add_argument(
        "--database",
        type=arguments.database_name,
        default=os.environ.get("MEMORY_SIM_DATABASE", "memory"),
        help="local D1 database name",
    )


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from memory_sim.cli import arguments

    export = subparsers.add_parser(
        "export", help="write the local index as NDJSON and the database as SQL, for wrangler"
    )
    export.add_argument("--vectorize-ndjson", metavar="FILE", type=arguments.output_file,
                        help="NDJSON for `wrangler vectorize insert --file`")
    export.add_argument(
        "--d1-sql", metavar="FILE", type=arguments.output_file, help="SQL for `wrangler d1 execute --file`"
    )
    _common(export)
    export.set_defaults(handler=owning_folder(_export))

    push = subparsers.add_parser("push", help="send the local index and database to a Cloudflare account (resumable)")
    _common(push)
    push.add_argument("--account-id", help="default $CLOUDFLARE_ACCOUNT_ID")
    push.add_argument("--api-token", help="default $CLOUDFLARE_API_TOKEN")
    push.add_argument("--database-id", help="target D1 database id (default $MEMORY_SIM_D1_DATABASE_ID, else by name)")
    push.add_argument(
        "--base-url", type=arguments.url, help="API base URL (default $CLOUDFLARE_BASE_URL or api.cloudflare.com)"
    )
    push.add_argument("--progress", metavar="FILE", type=arguments.output_file,
                      help="progress record (default <data>/push-progress.json)")
    push.set_defaults(handler=owning_folder(_push))
