"""`memory-sim vectorize ...`: wrangler's Vectorize verbs over the local Chroma backend in `<data>/vectorize/`.

One verb, one library call. `--json` prints what wrangler prints: the API's result, and for insert and upsert
`{"index": NAME, "count": N}`. Writes go through the REST limits
(5,000 vectors per request); bigger NDJSON files are sent in several requests, as wrangler does.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_sim.cli.folder import owning_folder

Handler = Callable[[argparse.Namespace], int]


def _account(args: argparse.Namespace) -> Any:
    from memory_sim.bindings import limits
    from memory_sim.builder import open_vectorize_account
    from memory_sim.owner import settings_through

    route = getattr(args, "owner_route", None)
    if route is not None:  # another process owns the folder: its indexes through its API
        return open_vectorize_account(settings_through(route, args.settings))
    return open_vectorize_account(args.settings, max_batch=limits.VECTORIZE_MAX_BATCH_REST)


def _emit(args: argparse.Namespace, payload: Any, text: str) -> int:
    print(json.dumps(payload, indent=2, ensure_ascii=False) if args.json else text)
    return 0


def _with_account(body: Callable[[Any, argparse.Namespace], int]) -> Handler:
    def handler(args: argparse.Namespace) -> int:
        account = _account(args)
        try:
            return body(account, args)
        finally:
            account.close()

    return handler


def _create(account: Any, args: argparse.Namespace) -> int:
    made = account.create_index(args.name, args.dimensions, args.metric, args.description)
    return _emit(args, made.to_json(), f"Created index '{made.name}' ({made.dimensions} dimensions, {made.metric})")


def _get(account: Any, args: argparse.Namespace) -> int:
    found = account.get_index(args.name)
    return _emit(
        args, found.to_json(), f"{found.name}: {found.dimensions} dimensions, {found.metric}, '{found.description}'"
    )


def _list(account: Any, args: argparse.Namespace) -> int:
    found = account.list_indexes()
    lines = [f"{d.name}\t{d.dimensions}\t{d.metric}\t{d.description}" for d in found]
    return _emit(args, [d.to_json() for d in found], "\n".join(lines) or "No indexes.")


def _delete(account: Any, args: argparse.Namespace) -> int:
    account.delete_index(args.name)
    return _emit(args, None, f"Deleted index '{args.name}'")


def _info(account: Any, args: argparse.Namespace) -> int:
    info = account.index(args.name).describe()
    return _emit(args, info.to_json(), f"{args.name}: {info.vector_count} vectors, {info.dimensions} dimensions")


def _read_ndjson(path: str) -> list[Any]:
    from memory_sim.bindings.vectorize import Vector
    from memory_sim.errors import VectorizeInputError

    out = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise VectorizeInputError("VECTOR_INSERT", f"cannot read {path}: {exc.strerror}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(Vector.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError):
            raise VectorizeInputError(
                "VECTOR_INSERT", f"{path} line {number}: not a vector object with id and values"
            ) from None
    return out


def _writer(kind: str) -> Callable[[Any, argparse.Namespace], int]:
    def write(account: Any, args: argparse.Namespace) -> int:
        from memory_sim.bindings import limits

        index, data = account.index(args.name), _read_ndjson(args.file)
        step = limits.VECTORIZE_MAX_BATCH_REST
        mutations = [getattr(index, kind)(data[i : i + step]).mutation_id for i in range(0, len(data), step)]
        text = f"{kind.capitalize()}ed {len(data)} vectors into '{args.name}' (mutation {', '.join(mutations)})"
        return _emit(
            args, {"index": args.name, "count": len(data)}, text
        )  # wrangler's --json: vectors sent, no mutation id

    return write


def _query(account: Any, args: argparse.Namespace) -> int:
    index = account.index(args.name)
    options = dict(top_k=args.top_k, filter=args.filter, return_values=args.return_values,
                   return_metadata=args.return_metadata, namespace=args.namespace)
    if args.vector_id is not None:
        result = index.query_by_id(args.vector_id, **options)
    else:
        result = index.query(args.vector, **options)
    lines = [f"{m.id}\t{m.score:.6f}" + (f"\t{json.dumps(m.metadata)}" if m.metadata else "") for m in result.matches]
    return _emit(args, result.to_json(), "\n".join(lines) or "No matches.")


def _get_vectors(account: Any, args: argparse.Namespace) -> int:
    found = account.index(args.name).get_by_ids(args.ids)
    return _emit(args, [v.to_json() for v in found], "\n".join(json.dumps(v.to_json()) for v in found) or "No vectors.")


def _delete_vectors(account: Any, args: argparse.Namespace) -> int:
    mutation = account.index(args.name).delete_by_ids(args.ids)
    return _emit(args, mutation.to_json(), f"Deleted {len(args.ids)} ids from '{args.name}'")


def _list_vectors(account: Any, args: argparse.Namespace) -> int:
    page = account.index(args.name).list_vectors(args.count, args.cursor)
    more = f"\n(more: --cursor {page.next_cursor})" if page.is_truncated else ""
    return _emit(args, page.to_json(), "\n".join(page.ids) + more if page.ids else "No vectors.")


def _create_md(account: Any, args: argparse.Namespace) -> int:
    mutation = account.index(args.name).create_metadata_index(args.property_name, args.type)
    return _emit(args, mutation.to_json(), f"Created metadata index on '{args.property_name}' ({args.type})")


def _list_md(account: Any, args: argparse.Namespace) -> int:
    found = account.index(args.name).list_metadata_indexes()
    payload = {"metadataIndexes": [m.to_json() for m in found]}
    return _emit(
        args, payload, "\n".join(f"{m.property_name}\t{m.index_type}" for m in found) or "No metadata indexes."
    )


def _delete_md(account: Any, args: argparse.Namespace) -> int:
    from memory_sim.memory.writing.provision import refuse_deleting_declared

    if args.name == args.settings.index_name:  # the folder's memory index: what recall filters by stays
        refuse_deleting_declared(args.name, args.property_name)
    mutation = account.index(args.name).delete_metadata_index(args.property_name)
    return _emit(args, mutation.to_json(), f"Deleted metadata index on '{args.property_name}'")


def _verb(
    sub: Any, name: str, help: str, body: Callable[[Any, argparse.Namespace], int], with_name: bool = True
) -> Any:
    from memory_sim.cli import arguments

    parser = sub.add_parser(name, help=help, description=help)
    if with_name:
        parser.add_argument("name", type=arguments.index_name, help="index name")
    parser.add_argument("--json", action="store_true", help="print Cloudflare's JSON shape")
    parser.set_defaults(handler=owning_folder(_with_account(body), through_owner=True))
    return parser


def register(subparsers: Any) -> None:
    from memory_sim.bindings import limits
    from memory_sim.cli import arguments

    group = subparsers.add_parser("vectorize", help="Vectorize indexes, as wrangler manages them")
    sub = group.add_subparsers(dest="vectorize_command", metavar="VERB", required=True)
    create = _verb(sub, "create", "create an index", _create)
    create.add_argument(
        "--dimensions",
        type=arguments.whole("dimensions", 1, limits.VECTORIZE_MAX_DIMENSIONS),
        required=True,
        help="vector dimensions (1-1536)",
    )
    create.add_argument(
        "--metric", required=True, choices=["cosine", "euclidean", "dot-product"], help="distance metric"
    )
    create.add_argument("--description", default="", help="free text, e.g. the embedding model")
    _verb(sub, "get", "show an index's configuration", _get)
    _verb(sub, "list", "list indexes", _list, with_name=False)
    _verb(sub, "delete", "delete an index and its vectors", _delete)
    _verb(sub, "info", "vector count and last processed mutation", _info)
    for kind in ("insert", "upsert"):
        writer = _verb(
            sub,
            kind,
            f"{kind} vectors from an NDJSON file ({{id, values, metadata?, namespace?}} per line)",
            _writer(kind),
        )
        writer.add_argument("--file", type=arguments.input_file, required=True, help="NDJSON file")
    query = _verb(sub, "query", "query an index by vector or by a stored vector's id", _query)
    source = query.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--vector", type=arguments.vector_value, nargs="+", help="query vector, numbers separated by spaces"
    )
    source.add_argument("--vector-id", type=arguments.vector_id, help="query with a stored vector's values")
    query.add_argument("--top-k", type=arguments.query_top_k, default=5,
                       help="matches to return (default 5; at most 50 with --return-values or --return-metadata all)")
    query.add_argument(
        "--filter", type=arguments.metadata_filter, help='metadata filter as JSON, e.g. \'{"npcId": "margaret"}\''
    )
    query.add_argument(
        "--return-metadata", default="none", choices=["none", "indexed", "all"], help="metadata to return"
    )
    query.add_argument("--return-values", action="store_true", help="return the stored values")
    query.add_argument("--namespace", type=arguments.namespace, help="search only this namespace")
    for verb, help, body in (
        ("get-vectors", "fetch vectors by id", _get_vectors),
        ("delete-vectors", "delete vectors by id", _delete_vectors),
    ):
        _verb(sub, verb, help, body).add_argument(
            "--ids", type=arguments.vector_id, nargs="+", required=True, help="vector ids"
        )
    listing = _verb(sub, "list-vectors", "list vector ids, a page at a time", _list_vectors)
    listing.add_argument("--count", type=arguments.whole("count", 1, limits.VECTORIZE_LIST_MAX_COUNT), default=100,
                         help="ids per page (1-1000)")
    listing.add_argument("--cursor", help="cursor from the previous page")
    md = _verb(sub, "create-metadata-index", "index a metadata property for filtering", _create_md)
    md.add_argument(
        "--property-name",
        "--propertyName",
        dest="property_name",
        type=arguments.property_name,
        required=True,
        help="metadata property",
    )
    md.add_argument("--type", required=True, choices=["string", "number", "boolean"], help="value type")
    _verb(sub, "list-metadata-index", "list metadata indexes", _list_md)
    drop = _verb(sub, "delete-metadata-index", "delete a metadata index", _delete_md)
    drop.add_argument(
        "--property-name",
        "--propertyName",
        dest="property_name",
        type=arguments.property_name,
        required=True,
        help="metadata property",
    )
