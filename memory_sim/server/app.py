"""The local Cloudflare API server: `create_app(data_dir, tokens, vectorize_factory=, d1_factory=, ai=)` builds
the FastAPI app over the backends it is handed (`memory_sim.builder.server.build_server_app` hands it this
machine's: Chroma, D1 on DuckDB or sqlite3, local models).

Routes live under `/client/v4` exactly as on api.cloudflare.com, so the official SDK created with
`base_url="http://127.0.0.1:PORT/client/v4"` works unchanged. Every `/client/v4` route needs
`Authorization: Bearer <token>` with a token that opens the account in the path (`auth.parse_tokens`: entries
`TOKEN:ACCOUNT[+ACCOUNT...]`, or one bare token for every account); `/health` and the OpenAPI description are open.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException

from memory_sim.agent_memory.local import AgentMemoryService
from memory_sim.bindings.ai import Ai
from memory_sim.errors import ConfigError, MemorySimError
from memory_sim.server import (
    agent_memory_routes,
    ai_routes,
    d1_file_routes,
    d1_routes,
    d1_time_travel_routes,
    transfers,
    vectorize_routes,
)
from memory_sim.server.accounts import Accounts, D1Factory, VectorizeFactory
from memory_sim.server.ai_compat_routes import router as ai_compat_router
from memory_sim.server.ai_names import ModelNames
from memory_sim.server.auth import TokenGate, TokenTable, parse_tokens
from memory_sim.server.binding_routes import router as binding_router
from memory_sim.server.body_cap import MAX_BODY_BYTES, BodyCap
from memory_sim.server.envelope import (
    CODE_BAD_REQUEST,
    ApiError,
    EnvelopeResponse,
    InternalErrors,
    fail,
    handle_error,
    handle_http_error,
    ok,
)
from memory_sim.server.fairness import DEFAULT_SHARE, FairShare
from memory_sim.server.fast_query import QueryAnswerer, QueryRoute

__all__ = ["create_app", "parse_tokens"]


async def _invalid_request(request: Request, exc: RequestValidationError) -> Any:
    first = exc.errors()[0] if exc.errors() else {}
    where = "/".join(str(p) for p in first.get("loc", ()))
    return fail(400, CODE_BAD_REQUEST, f"invalid request: {where}: {first.get('msg', 'malformed body')}")


def _tell_on_stop_signals(stopping: threading.Event) -> None:
    """Chain onto the handlers the server installed for SIGTERM and SIGINT (uvicorn's, which stop accepting and
    then wait for the requests in flight): `stopping` is set first, so an import in flight rolls back and answers
    instead of running to its end. Only the main thread may set handlers (a loopback server in a thread has none)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for number in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(number)
        if not callable(previous):
            continue

        def chained(signum: int, frame: object, previous: object = previous) -> None:
            stopping.set()
            previous(signum, frame)  # type: ignore[operator]

        signal.signal(number, chained)


async def _health() -> EnvelopeResponse:
    """On the event loop, never behind the worker threads: it answers while every worker is busy."""
    return ok({"status": "ok"})


def create_app(
    data_dir: str | Path,
    tokens: str | Sequence[str] | TokenTable,
    *,
    vectorize_factory: VectorizeFactory,
    d1_factory: D1Factory,
    ai: Ai,
    fast_query: bool = True,
    time_travel: dict[str, Any] | None = None,
    agent_memory: AgentMemoryService | None = None,
    models: Sequence[str] = (),
    max_body_bytes: int = MAX_BODY_BYTES,
    account_share: int = DEFAULT_SHARE,
) -> FastAPI:
    """The app over `<data_dir>/accounts/<account_id>/...`, each account's Vectorize and D1 opened by the factories
    in its folder, `ai` answering `/ai/run`. This machine's backends wired in: `memory_sim.builder.server`.
    `fast_query`: answer the Vectorize query route before FastAPI's routing (fast_query.py; same answers).
    `time_travel`: options of D1 Time Travel (server/time_travel.py: interval_s, retention_s, max_kept, max_bytes,
    clock). `agent_memory`: the service answering `/agent-memory/...` (agent_memory_routes.py); None: not served.
    `models`: the operator's models (e.g. folders) that `/ai` routes accept beside the catalogue's names
    (ai_names.py). `max_body_bytes`: the largest request body any route reads (body_cap.py; uploads have their own).
    `account_share`: how many of one account's requests run at once (fairness.py); /health is never queued.
    """
    allowed = parse_tokens(tokens)
    if not allowed:
        raise ConfigError("the server needs at least one API token (--token or MEMORY_SIM_API_TOKEN)")
    accounts = Accounts(data_dir, vectorize_factory=vectorize_factory, d1_factory=d1_factory, time_travel=time_travel)
    uploads_and_downloads = transfers.Transfers()
    stopping = threading.Event()  # set on SIGTERM/SIGINT: long work (a D1 import) stops between two steps

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        _tell_on_stop_signals(stopping)
        yield
        stopping.set()
        accounts.close()  # applies queued Vectorize mutations and closes the D1 files
        uploads_and_downloads.close()

    app = FastAPI(title="memory-sim local Cloudflare API", version="4", description=__doc__, lifespan=lifespan)
    app.state.tokens = allowed
    app.state.accounts = accounts
    app.state.ai = ModelNames(ai, models)  # names only: no path reaches the model loader (ai_names.py)
    app.state.transfers = uploads_and_downloads  # D1 import uploads and export downloads (transfers.py)
    app.state.imports = {}  # (account, database) -> the last import's answer, for `poll`
    app.state.stopping = stopping
    app.state.agent_memory = agent_memory
    app.include_router(ai_compat_router)  # before ai_routes: `/ai/run/{model:path}` would take `proxy`
    app.include_router(binding_router)  # a Worker's bindings (wrangler dev, Miniflare)
    for router in (vectorize_routes.router, d1_routes.router, d1_file_routes.router, d1_time_travel_routes.router,
                   transfers.router, ai_routes.router, agent_memory_routes.router):
        app.include_router(router)
    app.add_middleware(TokenGate, tokens=allowed)
    app.add_middleware(InternalErrors)  # outside the gate: also catches what the gate might raise
    if fast_query:  # outermost of the app's own layers; middleware added later still sees every query
        app.add_middleware(QueryRoute, answer=QueryAnswerer(accounts, allowed))
    app.add_middleware(FairShare, tokens=allowed, share=account_share)  # outside the fast query route: it is queued too
    app.add_middleware(BodyCap, max_bytes=max_body_bytes)  # outermost: a 413 before any layer reads the body
    app.add_exception_handler(Exception, handle_error)
    app.add_exception_handler(ApiError, handle_error)
    app.add_exception_handler(MemorySimError, handle_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, handle_http_error)  # type: ignore[arg-type]  # no route, wrong method
    app.add_api_route("/health", _health, methods=["GET"], tags=["meta"])
    return app
