"""`memory-sim export`, `push` and `pull`: local memory to files wrangler takes, to a Cloudflare account and back.

    memory-sim export --vectorize-ndjson memories.ndjson --d1-sql memory.sql
    memory-sim push [--progress FILE]     # target from CLOUDFLARE_ACCOUNT_ID / CLOUDFLARE_API_TOKEN /
                                          # MEMORY_SIM_D1_DATABASE_ID / CLOUDFLARE_BASE_URL, or the flags
    memory-sim --data ./pulled pull       # the account's index and database into a local folder (resumable)
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from memory_sim.cli.folder import owning_folder
from memory_sim.cli.output import json_flag, progress, say
from memory_sim.errors import ConfigError


def _local(args: argparse.Namespace, *, create: bool = False) -> tuple[Any, Any]:
    from memory_sim.bindings import limits
    from memory_sim.builder import open_d1_account, open_vectorize_account
    settings = args.settings.replace(backend="local")
    account = open_vectorize_account(settings, max_batch=limits.VECTORIZE_MAX_BATCH_REST)
    databases = open_d1_account(settings)
    if create and args.database not in databases.list():
        return account, databases.create(args.database)
    return account, databases.get(args.database)


def _export(args: argparse.Namespace) -> int:
    from memory_sim.transfer import export_sql, export_vectors

    if not args.vectorize_ndjson and not args.d1_sql:
        raise ConfigError("nothing to export: give --vectorize-ndjson FILE and/or --d1-sql FILE")
    account, database = _local(args)
    try:
        written: dict[str, Any] = {}
        lines = []
        if args.vectorize_ndjson:
            n = export_vectors(account.index(args.index), args.vectorize_ndjson)
            written["vectors"] = {"file": str(args.vectorize_ndjson), "count": n}
            lines.append(f"wrote {n} vectors to {args.vectorize_ndjson} "
                         f"(wrangler vectorize insert {args.index} --file ...)")
        if args.d1_sql:
            n = export_sql(database, args.d1_sql)
            written["d1"] = {"file": str(args.d1_sql), "rows": n}
            lines.append(f"wrote the schema and {n} rows to {args.d1_sql} "
                         "(wrangler d1 execute <db> --remote --file ...)")
    finally:
        database.close()
        account.close()
    say(args, "\n".join(lines), written)
    return 0


def _remote(args: argparse.Namespace, *, create: bool) -> tuple[Any, Any, Any]:
    """The account's Vectorize, its D1 database (created when missing if `create`) and the client to close, from
    the flags over the settings."""
    from memory_sim.builder import cloudflare_client, cloudflare_database, open_cloudflare_storage

    settings = args.settings.replace(
        backend="cloudflare", account_id=args.account_id, api_token=args.api_token, base_url=args.base_url,
        database_id=args.database_id, index_name=args.index, database_name=args.database,
    )
    client = cloudflare_client(settings)
    try:
        vectorize, _ = open_cloudflare_storage(settings, client)
        return vectorize, cloudflare_database(client, settings, create=create), client
    except BaseException:
        client.close()
        raise


def _pull(args: argparse.Namespace) -> int:
    from memory_sim.transfer import pull

    record = Path(args.progress or Path(args.data) / "pull-progress.json")
    remote, remote_db, client = _remote(args, create=False)  # nothing is created on the account
    try:
        if args.index not in {d.name for d in remote.list_indexes()}:
            raise ConfigError(f"the account has no Vectorize index {args.index!r}; name it with --index")
        _refuse_a_folder_of_its_own(args, record)
        account, database = _local(args, create=True)
    except BaseException:
        client.close()
        raise
    try:
        report = pull(remote, remote_db, account, database, args.index, record,
                      on_batch=lambda n: progress(args, f"  {n} vectors received"))
    finally:
        database.close()
        account.close()
        client.close()
    say(args, f"pulled {report.vectors} vectors and {report.rows} rows into {args.data} (progress in {record})",
        {"vectors": report.vectors, "rows": report.rows, "data": args.data, "progress": str(record)})
    return 0


def _refuse_a_folder_of_its_own(args: argparse.Namespace, progress: Path) -> None:
    """A pull goes into a new folder (or resumes its own): it never mixes an account's memory into a folder's."""
    from memory_sim.builder import open_vectorize_account

    if progress.exists():
        return
    account: Any = open_vectorize_account(args.settings.replace(backend="local"))
    try:
        if args.index in {d.name for d in account.list_indexes()}:
            raise ConfigError(f"{args.data} already has an index {args.index!r}; pull into a new folder (--data)")
    finally:
        account.close()


def _push(args: argparse.Namespace) -> int:
    from memory_sim.transfer import push

    target_vectorize, target_db, client = _remote(args, create=True)
    account, database = _local(args)
    record = Path(args.progress or Path(args.data) / "push-progress.json")
    try:
        report = push(account, database, target_vectorize, target_db, args.index, record,
                      on_batch=lambda n: progress(args, f"  {n} vectors sent"))
    finally:
        database.close()
        account.close()
        client.close()
    say(args, f"pushed {report.vectors} vectors and {report.rows} rows (progress in {record}; delete it to push again)",
        {"vectors": report.vectors, "rows": report.rows, "progress": str(record)})
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
    json_flag(export)
    export.set_defaults(handler=owning_folder(_export))

    push = subparsers.add_parser("push", help="send the local index and database to a Cloudflare account (resumable)")
    _account_options(push, "target")
    json_flag(push)
    push.add_argument("--progress", metavar="FILE", type=arguments.output_file,
                      help="progress record (default <data>/push-progress.json)")
    push.set_defaults(handler=owning_folder(_push))

    pull = subparsers.add_parser("pull", help="bring a Cloudflare account's index and database into a local folder "
                                 "(resumable)")
    _account_options(pull, "source")
    json_flag(pull)
    pull.add_argument("--progress", metavar="FILE", type=arguments.output_file,
                      help="progress record (default <data>/pull-progress.json)")
    pull.set_defaults(handler=owning_folder(_pull))


def _account_options(parser: argparse.ArgumentParser, role: str) -> None:
    from memory_sim.cli import arguments

    _common(parser)
    parser.add_argument("--account-id", help="default $CLOUDFLARE_ACCOUNT_ID")
    parser.add_argument("--api-token", help="default $CLOUDFLARE_API_TOKEN")
    parser.add_argument("--database-id",
                        help=f"{role} D1 database id (default $MEMORY_SIM_D1_DATABASE_ID, else by name)")
    parser.add_argument(
        "--base-url", type=arguments.url, help="API base URL (default $CLOUDFLARE_BASE_URL or api.cloudflare.com)"
    )
