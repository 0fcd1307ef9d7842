"""Builds the Cloudflare `Env` from settings: Vectorize, D1 and Workers AI over the REST API of one account
(api.cloudflare.com, or any server that speaks it, such as `memory-sim serve`, through `base_url`).

The index is created with the memory system's metadata indexes when missing (as the local build does); the
database is `database_id` when given, else the one named `database_name`, created when missing.
"""

from __future__ import annotations

from memory_sim.cloudflare.client import CloudflareClient
from memory_sim.cloudflare.d1 import CloudflareD1Account, CloudflareD1Database
from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount
from memory_sim.env import Env, Settings
from memory_sim.errors import ConfigError


def client_of(settings: Settings) -> CloudflareClient:
    if not settings.account_id or not settings.api_token:
        raise ConfigError("backend 'cloudflare' needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN")
    return CloudflareClient(settings.account_id, settings.api_token, settings.base_url)


def open_database(client: CloudflareClient, settings: Settings) -> CloudflareD1Database:
    if settings.database_id:
        return CloudflareD1Database(client, settings.database_id)
    account = CloudflareD1Account(client)
    names = account.list()
    return account.get(settings.database_name) if settings.database_name in names else account.create(settings.database_name)


def build_cloudflare_env(settings: Settings) -> Env:
    from memory_sim.cloudflare.workers_ai import WorkersAi
    from memory_sim.embedding.embedder import load_embedder
    from memory_sim.local.env import ensure_index

    client = client_of(settings)
    ai = WorkersAi(settings.account_id or "", settings.api_token or "", base_url=client.base_url)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    embedder = load_embedder(settings.embed_model, cache_path=settings.data_dir / "embeddings.sqlite", ai=ai)
    account = CloudflareVectorizeAccount(client)
    index = ensure_index(account, settings.index_name, embedder)
    env = Env(VECTORIZE=index, DB=open_database(client, settings), AI=ai, embedder=embedder,
              vectorize_account=account, settings=settings)
    env.close_hooks.extend([client.close, ai.close])
    return env
