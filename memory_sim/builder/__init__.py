"""The one place that turns `Settings` into bindings: the only module that imports a backend.

    build_env(settings)                  the Env for the settings' backend (local or cloudflare)
    build_in_memory_env(clock, embedder)  the oracle index, sqlite3 in memory, the hashing embedder (tests)
    open_vectorize_account(settings)     the Vectorize account alone (`memory-sim vectorize ...`)
    open_d1_account(settings)            the D1 databases alone (`memory-sim d1 ...`)
    open_ai(settings)                    the AI binding alone (`memory-sim ai run`)
    local_vectorize_account(folder)      Chroma in a folder; local_d1_account(folder, engine): D1 files in one
    models.load_embedder(name)           the embedder for a model name (builder/models.py)
    server.build_server_app(data, tokens) the local Cloudflare API on these backends (builder/server.py)

Local data lives under one folder:

    <data>/vectorize/          Chroma's files and the index state beside them
    <data>/d1/                 one database file per D1 database
    <data>/embeddings.sqlite   the persistent embedding cache
    <data>/.lock, owner.json   the folder lock a local Env holds until it is closed (folder_lock.py)
    <data>/owner.token         the token of the owner's API, while the owner serves the folder (owner.py)

A folder another process owns opens through that owner when it serves (memory_sim/owner.py): the Cloudflare
Env pointed at the owner's loopback API, transparently.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_sim.bindings.ai import Ai, Embedder
from memory_sim.bindings.vectorize import VectorizeAccount
from memory_sim.builder.embedding import model_to_open as model_to_open  # re-exported: where a folder opens
from memory_sim.env import Env
from memory_sim.errors import ConfigError, MemorySimError
from memory_sim.folder_lock import FolderLock
from memory_sim.memory.writing.provision import ensure_index, recreate_index
from memory_sim.settings import HASHING_MODEL, Settings

if TYPE_CHECKING:
    from memory_sim.bindings.d1 import D1Database
    from memory_sim.local.d1.account import D1Account
    from memory_sim.local.vectorize.chroma import ChromaAccount

BeforeRebuild = Callable[["D1Database"], object]
log = logging.getLogger(__name__)


def build_env(
    settings: Settings, *, embedder: Embedder | None = None, rebuild_index: bool = False,
    before_rebuild: BeforeRebuild | None = None, new_index: bool = False,
) -> Env:
    """`embedder` replaces the one the settings name; `rebuild_index` drops and recreates the index for it
    instead of refusing a different model (the caller then re-embeds from D1: `memory.rebuild.reembed`), after
    `before_rebuild(db)` (`rebuild.queue_for_reindex`: a crash mid-way leaves the work queued in D1).
    `new_index`: the embedder of the settings' model, not the index's, and the index opened unchecked, for
    re-embedding D1 into a staged index that replaces it when complete (memory/jobs/staged_reembed.py)."""
    if settings.backend == "local":
        return build_local_env(settings, embedder=embedder, rebuild_index=rebuild_index, before_rebuild=before_rebuild,
                               new_index=new_index)
    if settings.backend == "cloudflare":
        return build_cloudflare_env(settings, embedder=embedder, rebuild_index=rebuild_index,
                                    before_rebuild=before_rebuild, new_index=new_index)
    raise ConfigError(f"unknown backend {settings.backend!r}: expected 'local' or 'cloudflare'")


# --- local -----------------------------------------------------------------------------------------------------


def open_vectorize_account(
    settings: Settings, *, max_batch: int | None = None, chroma_own_process: bool = False
) -> VectorizeAccount:
    """The settings' Vectorize account: Chroma in `<data>/vectorize` (or a Chroma server at `chroma_url`), the
    in-memory oracle, or the Cloudflare account's over REST. `chroma_own_process`: embedded Chroma runs in a child
    process (local/vectorize/chroma_process.py), as a server wants it: its calls hold the GIL throughout."""
    if settings.backend == "cloudflare":
        from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount

        return CloudflareVectorizeAccount(cloudflare_client(settings))
    if settings.vector_backend == "memory":
        from memory_sim.local.vectorize.oracle import OracleAccount

        return OracleAccount()
    options: dict[str, Any] = {} if max_batch is None else {"max_batch": max_batch}
    if settings.chroma_url:
        from urllib.parse import urlparse

        from memory_sim.local.vectorize.chroma import ChromaAccount

        url = urlparse(settings.chroma_url)
        return ChromaAccount(host=url.hostname or "127.0.0.1", port=url.port or 8000, **options)
    return local_vectorize_account(Path(settings.data_dir) / "vectorize", own_process=chroma_own_process, **options)


def local_vectorize_account(folder: str | Path, **options: Any) -> ChromaAccount:
    """Embedded Chroma in `folder` (`options`: visibility_lag_s, max_batch, ...), with its arrays beside it."""
    from memory_sim.local.vectorize.chroma import ChromaAccount

    return ChromaAccount(Path(folder), **options)


def open_d1_account(settings: Settings) -> Any:
    """The settings' D1 databases by name: the data folder's on its engine, or the Cloudflare account's."""
    if settings.backend == "cloudflare":
        from memory_sim.cloudflare.d1 import CloudflareD1Account

        return CloudflareD1Account(cloudflare_client(settings))
    return local_d1_account(settings.data_dir, settings.d1_engine, sqlite_synchronous=settings.d1_sqlite_synchronous)


def local_d1_account(folder: str | Path, engine: str, *, sqlite_synchronous: str = "normal") -> D1Account:
    """The D1 databases kept in `<folder>/d1/`, one file each, on `engine` ('duckdb' or 'sqlite')."""
    from memory_sim.local.d1.account import D1Account

    return D1Account(Path(folder), engine=engine,  # type: ignore[arg-type]  # D1Account checks the name
                     sqlite_synchronous=sqlite_synchronous)


def build_local_env(
    settings: Settings, *, embedder: Embedder | None = None, rebuild_index: bool = False,
    before_rebuild: BeforeRebuild | None = None, folder_lock: FolderLock | None = None, serve: bool | None = None,
    preload_model: bool = False, new_index: bool = False, chroma_own_process: bool = False,
) -> Env:
    """The Env holds the data folder's lock until closed; `folder_lock`, already held by the caller, is handed over.
    A folder another process owns and serves opens through that owner. This Env serves its folder to other
    processes when `serve` says so (None: `owner.serving(...)`, else the `serve_owner` setting). `preload_model`
    loads the configured model in the background while the rest opens (for callers that will embed).
    `chroma_own_process`: the folder's embedded Chroma runs in a child process (`memory-sim serve` asks for it, so
    a large write to the folder's own account stalls no other request)."""
    from memory_sim import owner
    from memory_sim.builder.models import local_ai, preload
    from memory_sim.embedding.embedder import AiEmbedder

    held = folder_lock or _lock_or_route(settings, rebuild_index or new_index)
    if not isinstance(held, FolderLock):
        try:
            return owner.open_through(held, settings, embedder)
        except MemorySimError:
            if held.owner.alive():
                raise
            held = FolderLock.acquire(settings.data_dir)  # the owner died meanwhile: the folder is free
    ai = local_ai(runtime=settings.embed_runtime, threads=settings.embed_threads)
    env = Env(VECTORIZE=None, DB=None, AI=ai, embedder=embedder,  # type: ignore[arg-type]
              vectorize_account=None, settings=settings)
    env.close_hooks.append(held.release)  # hooks run in reverse: the lock goes last, after the files close
    service = owner.OwnerService.open(held, settings) if _serves(settings, serve) else None
    try:
        account = env.vectorize_account = open_vectorize_account(settings, chroma_own_process=chroma_own_process)
        _close_with(env, account)
        if embedder is None:
            env.embedder = _embedder_for_index(settings, env, account, new_index=new_index)
            _close_with(env, getattr(env.embedder, "cache", None))  # ours to close: its file is the folder's
            if preload_model and isinstance(env.embedder, AiEmbedder):  # the model the index needs, while D1 opens
                env.close_hooks.append(preload(ai, env.embedder.model))
        d1 = open_d1_account(settings)
        env.DB = (
            d1.get(settings.database_name) if settings.database_name in d1.list() else d1.create(settings.database_name)
        )
        _close_with(env, env.DB)
        _compact_with(env, account, env.DB)
        if not new_index:
            _warn_unfinished_reembed(env.DB)
        if rebuild_index and before_rebuild is not None:
            before_rebuild(env.DB)
        env.VECTORIZE = _open_index(account, settings.index_name, env.embedder, rebuild_index, new_index)
    except BaseException:
        if service is not None:
            service.close()
        env.close()
        raise
    if service is not None:
        service.attach(env)
        env.close_hooks.append(service.close)  # first: requests in flight finish before the files close
    return env


def _compact_with(env: Env, account: VectorizeAccount, db: D1Database) -> None:
    """What `env.compact()` compacts: the index's files, then D1's; and a compaction at close when something was
    erased and no scheduled job has compacted since (the hook runs after the server's, before the files close)."""
    for part in (account, db):
        compact = getattr(part, "compact", None)
        if compact is not None:
            env.compact_hooks.append(compact)
    env.close_hooks.append(lambda: _compact_at_close(env))


def _compact_at_close(env: Env) -> None:
    try:
        env.compact_if_pending()
    except Exception as exc:  # noqa: BLE001  # the data is safe; only the erasure waits for `memory-sim compact`
        log.warning("erased text may stay on disk until `memory-sim compact`: %s", exc)


def _open_index(account: VectorizeAccount, name: str, embedder: Embedder, rebuild: bool, new_index: bool) -> Any:
    if rebuild:
        return recreate_index(account, name, embedder)
    return ensure_index(account, name, embedder, check_model=not new_index)


def open_ai(settings: Settings) -> Ai:
    """The settings' AI binding: local models here, or Workers AI of the Cloudflare account."""
    if settings.backend == "cloudflare":
        from memory_sim.cloudflare.workers_ai import WorkersAi

        client = cloudflare_client(settings)
        return WorkersAi(client.account_id, settings.api_token or "", base_url=client.base_url)
    from memory_sim.builder.models import local_ai

    return local_ai(runtime=settings.embed_runtime, threads=settings.embed_threads)


BRIEF_HOLDER = "memory-sim inspect"  # a holder that keeps a folder for one request only (memory_sim/inspector)
BRIEF_WAIT_S = 10.0  # how long an opener waits for such a holder to let go before it is refused


def _lock_or_route(settings: Settings, rebuild_index: bool) -> Any:
    """The folder's lock, or the route through the live owner that serves it (owner.Route). A folder held by a
    brief holder (the inspector, for the one request it answers) is waited for, up to BRIEF_WAIT_S."""
    from memory_sim.folder_lock import wait_for_brief_holder

    # the inspector lets go as soon as its request is answered
    return wait_for_brief_holder(lambda: _lock_or_route_once(settings, rebuild_index),
                                 lambda holder: holder.verb == BRIEF_HOLDER, BRIEF_WAIT_S, 0.02)


def _lock_or_route_once(settings: Settings, rebuild_index: bool) -> Any:
    from memory_sim import owner
    from memory_sim.errors import DataInUseError

    try:
        return FolderLock.acquire(settings.data_dir)
    except DataInUseError:
        route = owner.find_route(settings.data_dir)
        if route is None:
            raise
        if rebuild_index:  # the owner keeps working on the index: it cannot be dropped under it
            raise DataInUseError(f"{settings.data_dir} is in use by pid {route.owner.pid} ({route.owner.verb}); "
                                 "stop it first: rebuilding the index needs the folder to itself") from None
        return route


def _serves(settings: Settings, serve: bool | None) -> bool:
    from memory_sim import owner

    if serve is None:
        return owner.should_serve(settings)
    with owner.serving(serve):
        return owner.should_serve(settings)


# --- Cloudflare ------------------------------------------------------------------------------------------------


def build_cloudflare_env(
    settings: Settings, *, embedder: Embedder | None = None, rebuild_index: bool = False,
    before_rebuild: BeforeRebuild | None = None, client: Any = None, shared_cache: bool = True,
    new_index: bool = False, before_request: Callable[[], None] | None = None, through_owner: bool = False,
) -> Env:
    """Vectorize, D1 and Workers AI over the REST API of one account (api.cloudflare.com, or any server that
    speaks it, such as `memory-sim serve`, through `base_url`). `client`: a `CloudflareClient` of your own
    (timeouts, retries, transport) instead of one built from the settings. `shared_cache=False` keeps the
    embedding cache in memory instead of the data folder's file (whose owner has it open). `before_request()` runs
    before every request (D1, Vectorize, Workers AI) and may stop it by raising (a folder's owner still there).
    `through_owner`: the server is a folder's owner, whose `/ai/run` runs the model its index records: nothing is
    loaded here."""
    from memory_sim.cloudflare.workers_ai import WorkersAi

    client = client or cloudflare_client(settings)
    transport = None
    if before_request is not None:
        transport = _checked_transport(before_request)
        client.http.event_hooks = {**client.http.event_hooks,
                                   "request": [*client.http.event_hooks["request"], lambda _: before_request()]}
    ai = WorkersAi(client.account_id, settings.api_token or "", base_url=client.base_url, transport=transport)
    account, _ = open_cloudflare_storage(settings, client)
    env = Env(VECTORIZE=None, DB=None, AI=ai, embedder=embedder, vectorize_account=account, settings=settings)  # type: ignore[arg-type]
    env.close_hooks.extend([client.close, ai.close])
    try:
        env.embedder = embedder or _embedder_for_index(settings, env, account, shared_cache=shared_cache,
                                                       new_index=new_index, through_owner=through_owner)
        env.DB = cloudflare_database(client, settings)
        if not new_index:
            _warn_unfinished_reembed(env.DB)
        if rebuild_index and before_rebuild is not None:
            before_rebuild(env.DB)
        env.VECTORIZE = _open_index(account, settings.index_name, env.embedder, rebuild_index, new_index)
    except BaseException:
        _close_quietly(env)
        raise
    return env


def _checked_transport(before_request: Callable[[], None]) -> Any:
    """httpx's own transport, with `before_request()` first."""
    import httpx

    class Checked(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            before_request()
            return super().handle_request(request)

    return Checked()


def cloudflare_client(settings: Settings, **options: Any) -> Any:
    """The REST client of the settings' account (`memory-sim push` and the Cloudflare Env share it); `options`:
    the client's own (timeouts, retries, transport)."""
    try:
        from memory_sim.cloudflare.client import CloudflareClient
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"the Cloudflare backend needs the {exc.name!r} package: pip install {exc.name}"
        ) from exc
    if not settings.account_id or not settings.api_token:
        raise ConfigError("backend 'cloudflare' needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN")
    return CloudflareClient(settings.account_id, settings.api_token, settings.base_url, **options)


def open_cloudflare_storage(settings: Settings, client: Any) -> tuple[VectorizeAccount, Callable[[], Any]]:
    """The account's Vectorize, and a function opening its D1 database (by id, else by name, created when missing)."""
    from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount

    return CloudflareVectorizeAccount(client), lambda: cloudflare_database(client, settings)


def cloudflare_database(client: Any, settings: Settings, *, create: bool = True) -> Any:
    """The settings' D1 database on the account: by id, else by name (created when missing, unless `create` is
    False: then a missing one is a ConfigError)."""
    from memory_sim.cloudflare.d1 import CloudflareD1Account, CloudflareD1Database

    if settings.database_id:
        return CloudflareD1Database(client, settings.database_id)
    account = CloudflareD1Account(client)
    if settings.database_name in account.list():
        return account.get(settings.database_name)
    if not create:
        raise ConfigError(f"the account has no D1 database {settings.database_name!r}; name it with --database "
                          "or --database-id")
    return account.create(settings.database_name)


# --- in memory (tests, notebooks) ------------------------------------------------------------------------------


def build_in_memory_env(
    clock: Callable[[], float] | None = None,
    embedder: Embedder | None = None,
    *,
    dimensions: int = 64,
    visibility_lag_s: float = 0.0,
    max_vectors: int | None = None,
    db: Any = None,
) -> Env:
    """Real, fast implementations of the three contracts with nothing on disk: the exact Vectorize oracle,
    sqlite3 D1 in memory (or `db`, any D1 database) and (unless given) the deterministic hashing embedder."""
    import time

    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.local.d1.sqlite_engine import SqliteDatabase
    from memory_sim.local.vectorize.oracle import OracleAccount

    options: dict[str, Any] = {} if max_vectors is None else {"max_vectors": max_vectors}
    account = OracleAccount(clock=clock or time.time, visibility_lag_s=visibility_lag_s, **options)
    embedder = embedder or HashingEmbedder(dimensions)
    settings = Settings.load(environ={}, vector_backend="memory", d1_engine="sqlite", embed_model=HASHING_MODEL)
    db = db if db is not None else SqliteDatabase()
    env = Env(VECTORIZE=ensure_index(account, settings.index_name, embedder), DB=db, AI=_NoAi(),
              embedder=embedder, vectorize_account=account, settings=settings)
    _close_with(env, db)
    return env


class _NoAi:
    """`env.AI` of an in-memory Env: embeddings come from the injected embedder, no model runs."""

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        raise ConfigError("this in-memory Env runs no model; embed with env.embedder")


# --- the embedder an index needs (builder/embedding.py) -------------------------------------------------------


def _embedder_for_index(
    settings: Settings, env: Env, account: VectorizeAccount, *, shared_cache: bool = True, new_index: bool = False,
    through_owner: bool = False,
) -> Embedder:
    from memory_sim.builder.embedding import embedder_for_index

    return embedder_for_index(settings, account, env.AI, env.close_hooks, shared_cache=shared_cache,
                              new_index=new_index, through_owner=through_owner)


def _warn_unfinished_reembed(db: D1Database) -> None:
    from memory_sim.memory.jobs.staged_reembed import unfinished_model

    model = unfinished_model(db)
    if model is not None:
        log.warning("a re-embedding with %s is unfinished (the live index is the old one, or being replaced); run "
                    "`memory-sim reembed --model %s` again to finish it", model, model)


def _close_quietly(env: Env) -> None:
    """Closes what a failed open had opened, latest first, without hiding the failure that stopped it."""
    for close in reversed(env.close_hooks):
        try:
            close()
        except Exception:  # noqa: BLE001 - the open's own error is the one to report
            continue
    env.close_hooks.clear()


def _close_with(env: Env, closable: object) -> None:
    close = getattr(closable, "close", None)
    if close is not None:
        env.close_hooks.append(close)


def open_agent_memory(settings: Settings) -> Any:
    """Agent Memory over the REST API of the settings' Cloudflare account (or of `memory-sim serve` at
    `base_url`): a `CloudflareAgentMemoryAccount`. The local service is `memory_sim.agent_memory`'s."""
    from memory_sim.cloudflare.agent_memory import CloudflareAgentMemoryAccount

    return CloudflareAgentMemoryAccount(cloudflare_client(settings))
