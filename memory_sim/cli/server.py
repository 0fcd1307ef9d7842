"""`memory-sim serve`: the local Cloudflare v4 REST API over the data folder (see docs/server.md).

Listens on 127.0.0.1 unless `--host` says otherwise. A token is required: `--token` or MEMORY_SIM_API_TOKEN, as
entries `TOKEN:ACCOUNT[+ACCOUNT...]` separated by commas (each token opens only its accounts), or one bare
`TOKEN` that opens every account; clients send `Authorization: Bearer TOKEN`. The folder's own data (what `Env.local`
opens) is the account `local`, beside the accounts under `<data>/accounts/`; other processes on this machine
work through the server with the token in `<data>/owner.token` (memory_sim/owner.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_sim.server.auth import TokenTable

TOKEN_HELP = (
    "who may use which account: TOKEN:ACCOUNT[+ACCOUNT...], entries separated by ',' or given as repeated --token "
    "(e.g. --token 'tok1:acctA+acctB,tok2:acctC'); a token opens only its accounts (403 elsewhere). One bare "
    "TOKEN, alone, opens every account id. Tokens are printable ASCII without spaces, ',' or ':'. "
    "Default $MEMORY_SIM_API_TOKEN, same form"
)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from memory_sim import owner
    from memory_sim.agent_memory import AgentMemoryService
    from memory_sim.builder import build_local_env
    from memory_sim.builder.server import build_server_app
    from memory_sim.errors import ConfigError
    from memory_sim.folder_lock import FolderLock
    from memory_sim.server.auth import parse_tokens
    from memory_sim.server.slow_requests import uvicorn_options

    given = args.token or args.settings.server_tokens or ""
    tokens = parse_tokens(given)  # a malformed value is refused first, in one line of its own
    if args.token:  # a command line is every local user's to read (`ps`): the environment is this user's only
        print("memory-sim: warning: --token is visible to other users of this machine (ps, /proc/<pid>/cmdline); "
              "set MEMORY_SIM_API_TOKEN instead", file=sys.stderr, flush=True)
    if not tokens:
        raise ConfigError("the server needs at least one API token (--token or MEMORY_SIM_API_TOKEN)")
    address = f"http://{args.host}:{args.port}/client/v4"
    with FolderLock.acquire(Path(args.data)) as owned:  # the server owns the folder while it runs
        settings = args.settings.replace(backend="local")  # the folder's own data, whatever the backend
        # the folder's own data, its Chroma in a child process as every account's is (builder/server.py) ...
        with build_local_env(settings, folder_lock=owned, serve=False, chroma_own_process=True) as env:
            own_token = owner.new_token()  # ... for other local processes, besides the users' tokens
            served = tokens.with_token(
                own_token, frozenset({owner.LOCAL_ACCOUNT})
            )  # the owner token opens `local` only
            app = build_server_app(Path(args.data), served, d1_engine=settings.d1_engine,
                                   visibility_lag_s=args.visibility_lag, ai=env.AI,
                                   agent_memory=AgentMemoryService.over(env),  # on the folder's own memory
                                   models=owner.configured_models(env))
            owner.serve_env(app, env)  # ... as the account `local`
            ui = _mount_inspector(app, env, args.host, args.port, served)
            server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level,
                                                   **uvicorn_options()))
            # Listening before the address is published: a process that reads owner.json and connects at once
            # waits in the backlog while the server starts, instead of being refused.
            sock = server.config.bind_socket()
            sock.listen(server.config.backlog)
            owned.publish(owner.published_address(args.host, args.port), own_token,
                          **owner.served_fields(settings))
            print(f"memory-sim: Cloudflare API on {address} (data {args.data}); {tokens.describe()}; the folder's "
                  f"own data is account '{owner.LOCAL_ACCOUNT}'; OpenAPI at /docs, health at /health{ui}", flush=True)
            _unwind_on_sigterm()
            server.run(sockets=[sock])
    return 0


def _mount_inspector(app: object, env: object, host: str, port: int, tokens: TokenTable) -> str:
    """The inspector's pages at /ui, on loopback only (docs/inspector.md): they open with a token of their own,
    printed here in a URL, or with an API token that opens the account `local`."""
    import ipaddress

    from memory_sim import owner

    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        return "; the inspector (/ui) is served on loopback hosts only"
    from memory_sim.inspector import PREFIX, Access, Folder, mount

    access = Access(also=lambda token: tokens.refusal(f"Bearer {token}", owner.LOCAL_ACCOUNT) is None)
    mount(app, Folder.of_env(env), access)  # type: ignore[arg-type]
    return f"; the inspector at {access.url(host, port, PREFIX)}"


def _unwind_on_sigterm() -> None:
    """uvicorn raises the signal that stopped it again once it has shut down. SIGTERM's default action would end
    the process there, leaving the owner record behind; as SystemExit it unwinds through the lock, like Ctrl-C."""
    import signal
    import sys
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from memory_sim.cli import arguments

    parser = subparsers.add_parser("serve", help="serve Cloudflare's REST API (Vectorize, D1, Workers AI) locally")
    parser.add_argument("--host", type=arguments.host, default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1, loopback only)")
    parser.add_argument("--port", type=arguments.whole("port", 1, 65535), default=8787, help="port (default 8787)")
    parser.add_argument("--token", action="append", metavar="TOKEN:ACCOUNT[+ACCOUNT...]", help=TOKEN_HELP)
    parser.add_argument("--visibility-lag", type=arguments.number("visibility_lag", 0.0), default=0.0,
                        help="seconds before Vectorize writes become visible, as on Cloudflare (default 0)")
    parser.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))
    parser.set_defaults(handler=_serve)
