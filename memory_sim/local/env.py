"""Builds the local `Env` from settings: Vectorize on Chroma (or the exact oracle), D1 on DuckDB (or sqlite3),
embeddings from a local model. Everything lives under one data folder:

    <data>/vectorize/   Chroma's files and the index state beside them
    <data>/d1/          one database file per D1 database
    <data>/embeddings.sqlite   the persistent embedding cache
"""

from __future__ import annotations

from pathlib import Path

from memory_sim.bindings.ai import Embedder
from memory_sim.bindings.vectorize import MetadataIndexType, VectorizeAccount, VectorizeIndex
from memory_sim.env import Env, Settings


def open_vectorize_account(settings: Settings) -> VectorizeAccount:
    if settings.vector_backend == "memory":
        from memory_sim.local.vectorize_memory import MemoryAccount

        return MemoryAccount()
    from memory_sim.local.vectorize_chroma import ChromaAccount

    if settings.chroma_url:
        from urllib.parse import urlparse

        url = urlparse(settings.chroma_url)
        return ChromaAccount(host=url.hostname or "127.0.0.1", port=url.port or 8000)
    return ChromaAccount(Path(settings.data_dir) / "vectorize")


# What the memory system filters by; metadata indexes must exist before vectors are written (as on Cloudflare).
MEMORY_METADATA_INDEXES: tuple[tuple[str, MetadataIndexType], ...] = (
    ("npcId", "string"),
    ("type", "string"),
    ("day", "number"),
    ("importance", "number"),
)


def ensure_index(account: VectorizeAccount, name: str, embedder: Embedder) -> VectorizeIndex:
    """Like `wrangler vectorize create` + `create-metadata-index`, once; later opens check the model matches."""
    from memory_sim.embedding.index_model import check_index_model

    existing = {d.name: d for d in account.list_indexes()}
    if name in existing:
        check_index_model(existing[name].description, embedder)
        return account.index(name)
    return _create_index(account, name, embedder)


def recreate_index(account: VectorizeAccount, name: str, embedder: Embedder) -> VectorizeIndex:
    """Drops the index (if any) and creates it for `embedder`: its dimensions, its model in the description,
    the metadata indexes. For `memory-sim reembed --model`: the vectors are rebuilt from D1 afterwards."""
    if name in {d.name for d in account.list_indexes()}:
        account.delete_index(name)
    return _create_index(account, name, embedder)


def _create_index(account: VectorizeAccount, name: str, embedder: Embedder) -> VectorizeIndex:
    from memory_sim.embedding.index_model import describe_model

    account.create_index(name, embedder.dimensions, "cosine", describe_model(embedder))
    index = account.index(name)
    for prop, kind in MEMORY_METADATA_INDEXES:
        index.create_metadata_index(prop, kind)
    return index


def model_to_open(setting: str, index_description: str | None) -> str:
    """The model a data folder opens with: the one its index records (`reembed --model` changed it) when the
    setting is the unchosen default; a model named in the settings otherwise (checked against the index)."""
    from memory_sim.bindings.ai import DEFAULT_MODEL
    from memory_sim.embedding.index_model import parse_description

    recorded = parse_description(index_description).get("model")
    return recorded if setting == DEFAULT_MODEL and recorded else setting


def _load_embedder(settings: Settings, account: VectorizeAccount, ai: object) -> Embedder:
    from memory_sim.embedding.embedder import load_embedder
    from memory_sim.errors import ConfigError

    cache = Path(settings.data_dir) / "embeddings.sqlite"
    existing = {d.name: d.description for d in account.list_indexes()}
    model = model_to_open(settings.embed_model, existing.get(settings.index_name))
    if model != settings.embed_model:
        try:
            return load_embedder(model, cache_path=cache, ai=ai)  # type: ignore[arg-type]
        except ConfigError:
            pass  # not loadable here (e.g. a test's fake model): the default, and the check says why it differs
    return load_embedder(settings.embed_model, cache_path=cache, ai=ai)  # type: ignore[arg-type]


def build_local_env(settings: Settings, *, embedder: Embedder | None = None, rebuild_index: bool = False) -> Env:
    """`embedder` replaces the one the settings name (tests, other models); `rebuild_index` drops and recreates
    the index for it instead of refusing a different model (the caller re-embeds from D1: `rebuild.reembed`)."""
    from memory_sim.local.ai import LocalAi
    from memory_sim.local.d1_account import D1Account

    data = Path(settings.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    ai = LocalAi(runtime=settings.embed_runtime)
    account = open_vectorize_account(settings)
    if embedder is None:
        embedder = _load_embedder(settings, account, ai)
    d1 = D1Account(data, engine=settings.d1_engine)
    db = d1.get(settings.database_name) if settings.database_name in d1.list() else d1.create(settings.database_name)
    opener = recreate_index if rebuild_index else ensure_index
    index = opener(account, settings.index_name, embedder)
    env = Env(VECTORIZE=index, DB=db, AI=ai, embedder=embedder, vectorize_account=account, settings=settings)
    for closable in (db, account):
        close = getattr(closable, "close", None)
        if close is not None:
            env.close_hooks.append(close)
    return env
