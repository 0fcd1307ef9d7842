"""`memory-sim serve`: the local Cloudflare v4 REST API over the data folder (see docs/server.md).

Listens on 127.0.0.1 unless `--host` says otherwise. A token is required: `--token T` or MEMORY_SIM_API_TOKEN
(several separated by commas); clients send `Authorization: Bearer T`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from memory_sim.server.app import create_app, parse_tokens

    tokens = parse_tokens(args.token or os.environ.get("MEMORY_SIM_API_TOKEN"))
    app = create_app(Path(args.data), tokens, d1_engine=args.d1_engine, visibility_lag_s=args.visibility_lag)
    print(f"memory-sim: Cloudflare API on http://{args.host}:{args.port}/client/v4 (data {args.data}, "
          f"{len(tokens)} token(s)); OpenAPI at /docs, health at /health", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("serve", help="serve Cloudflare's REST API (Vectorize, D1, Workers AI) locally")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, loopback only)")
    parser.add_argument("--port", type=int, default=8787, help="port (default 8787)")
    parser.add_argument("--token", help="API token(s) clients must send, comma-separated (default $MEMORY_SIM_API_TOKEN)")
    parser.add_argument("--d1-engine", choices=("duckdb", "sqlite"), default="duckdb", help="local D1 engine")
    parser.add_argument("--visibility-lag", type=float, default=0.0,
                        help="seconds before Vectorize writes become visible, as on Cloudflare (default 0)")
    parser.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))
    parser.set_defaults(handler=_serve)
