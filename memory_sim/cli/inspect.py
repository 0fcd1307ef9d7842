"""`memory-sim inspect`: the memory inspector in the browser, read-only, on loopback (docs/inspector.md).

A folder that `memory-sim run` (or any owner) is advancing is read through that owner, so a reload shows where
the run has got to; a stopped folder is opened for each look and let go between them.
"""

from __future__ import annotations

import argparse


def _inspect(args: argparse.Namespace) -> int:
    import uvicorn

    from memory_sim.inspector import PREFIX, Access, Folder, create_app
    from memory_sim.server.slow_requests import uvicorn_options

    folder = Folder.from_settings(args.settings)
    with folder.env():  # opened once now (the libraries load: seconds), so the first page is as quick as the rest
        pass
    access = Access()  # a new token each start: the URL below carries it, the browser trades it for a cookie
    app = create_app(folder, access)
    print(f"memory-sim: the inspector of {args.data} (read-only); open {access.url('127.0.0.1', args.port, PREFIX)}"
          " ; Ctrl-C stops", flush=True)
    try:
        # bounded as `serve` is: a half-sent request head or a stalled body does not hold a connection
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level=args.log_level, **uvicorn_options())
    finally:
        folder.close()
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from memory_sim.cli import arguments

    parser = subparsers.add_parser("inspect", help="look at the NPCs' memories in the browser (read-only)")
    parser.add_argument("--port", type=arguments.whole("port", 1, 65535), default=8790,
                        help="loopback port (default 8790)")
    parser.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"))
    parser.set_defaults(handler=_inspect)
