"""Which embedder an index opens with, wherever its storage lives: storage and embeddings are chosen apart.

An index records the model, width and pooling that filled it (memory_sim/embedding/index_model.py). Opening it
picks that model and runs it where it can (`embed_provider = auto`):

    @cf/... models          Workers AI on the cloudflare backend; here (local weights) on the local one
    text-embedding-3-*      OpenAI ($OPENAI_API_KEY)
    anything else           here: the bundled MiniLM, a sentence-transformers folder, BGE weights on disk

Workers AI has no MiniLM, so an index filled with MiniLM is queried with MiniLM run here, whatever the storage.
A recorded model that cannot run anywhere it may is refused in one line naming it and the two ways forward.
`embed_provider` = local | workers-ai | openai pins where embeddings run instead.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_sim.bindings.ai import BGE_BASE, DEFAULT_MODEL, Ai, Embedder
from memory_sim.bindings.vectorize import VectorizeAccount
from memory_sim.errors import AiError, ConfigError, EmbeddingUnavailable
from memory_sim.settings import HASHING_MODEL, Settings

log = logging.getLogger(__name__)

Closers = list[Callable[[], None]]


def model_to_open(setting: str, index_description: str | None) -> str:
    """The model a data folder opens with: the one its index records (`reembed --model` changed it) when the
    setting is the unchosen default; a model named in the settings otherwise (checked against the index)."""
    from memory_sim.embedding.index_model import parse_description

    recorded = parse_description(index_description).get("model")
    return recorded if setting == DEFAULT_MODEL and recorded else setting


def provider_for(settings: Settings, model: str) -> str:
    """Where `model` runs: the `embed_provider` setting, or (auto) where that model exists."""
    from memory_sim.local.ai.models import canonical

    if settings.embed_provider != "auto":
        return settings.embed_provider
    name = canonical(model)
    if name.startswith("text-embedding-"):
        return "openai"
    if settings.backend == "cloudflare" and (name == DEFAULT_MODEL or name.startswith("@cf/")):
        return "workers-ai"
    return "local"


def embedder_for_index(
    settings: Settings, account: VectorizeAccount, binding_ai: Ai, closers: Closers, *,
    shared_cache: bool = True, new_index: bool = False, through_owner: bool = False,
) -> Embedder:
    """The embedder for the settings' index: the model it records where that can run, else the settings' model
    (checked against the index afterwards). `new_index`: the settings' model for an index about to be filled
    (`reembed --model`), whatever the current one records. `through_owner`: `binding_ai` is a folder owner's, which
    runs whatever model it has the index open with, so the visitor loads none. What must be closed with the Env
    goes to `closers`."""
    from memory_sim.builder.models import load_embedder
    from memory_sim.embedding.index_model import parse_description
    from memory_sim.local.ai.models import canonical

    cache = Path(settings.data_dir) / "embeddings.sqlite" if shared_cache else None
    described = None if new_index else {d.name: d.description for d in account.list_indexes()}.get(settings.index_name)
    recorded = parse_description(described)
    model = model_to_open(settings.embed_model, described)
    if model == HASHING_MODEL:  # an index built by the test embedder (crash trials, fast tests) opens with it
        from memory_sim.embedding.fake import HashingEmbedder

        return HashingEmbedder(int(recorded.get("dimensions", 64)))
    is_recorded = bool(recorded) and canonical(model) == canonical(recorded.get("model", ""))
    pooling: Any = recorded.get("pooling") if is_recorded else None
    if through_owner and is_recorded:
        return load_embedder(model, cache_path=cache, ai=binding_ai, pooling=pooling)
    try:
        provider = provider_for(settings, model)
        refused = workers_ai_refuses(model) if provider == "workers-ai" else None
        if refused:
            raise ConfigError(refused)
        ai = ai_for(provider, settings, binding_ai, closers)
        if provider == "workers-ai" and described is None and canonical(model) == DEFAULT_MODEL:
            return _default_on_workers_ai(settings, ai, cache, closers)
        embedder = load_embedder(model, cache_path=cache, ai=ai, pooling=pooling)
        if described is None and canonical(model) == DEFAULT_MODEL and embedder.model != BGE_BASE:
            from memory_sim.local.ai.models import note_fallback

            note_fallback()  # a new index gets the fallback model: said once, here (and in `memory-sim models`)
        return embedder
    except ConfigError as exc:
        if is_recorded:
            raise ConfigError(index_needs(settings.index_name, recorded, str(exc))) from None
        raise


def ai_for(provider: str, settings: Settings, binding_ai: Ai, closers: Closers) -> Ai:
    """The `Ai` that runs embeddings for `provider`: the Env's own binding where it is that provider."""
    binding_is_local = getattr(binding_ai, "is_local", False) is True
    if provider == "local":
        if binding_is_local:
            return binding_ai
        from memory_sim.builder.models import local_ai

        return local_ai(runtime=settings.embed_runtime, threads=settings.embed_threads)
    if provider == "workers-ai":
        if settings.backend == "cloudflare" and not binding_is_local:
            return binding_ai
        if not settings.account_id or not settings.api_token:
            raise ConfigError("embed_provider 'workers-ai' needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN")
        from memory_sim.cloudflare.workers_ai import WorkersAi

        workers = WorkersAi(settings.account_id, settings.api_token, base_url=settings.base_url)
        closers.append(workers.close)
        return workers
    if provider == "openai":
        if not os.environ.get("OPENAI_API_KEY"):
            raise ConfigError("embed_provider 'openai' needs $OPENAI_API_KEY (and $OPENAI_BASE_URL for another "
                              "server speaking OpenAI's API)")
        if importlib.util.find_spec("openai") is None:  # the one provider whose SDK is optional
            raise ConfigError("embed_provider 'openai' needs the openai package: pip install 'memory_sim[openai]'")
        from memory_sim.providers.openai_ai import OpenAiAi

        return OpenAiAi(os.environ["OPENAI_API_KEY"], base_url=os.environ.get("OPENAI_BASE_URL"))
    raise ConfigError(f"unknown embed_provider {provider!r}: expected auto, local, workers-ai or openai")


def hosted_model(name: str) -> bool:
    """A model a hosted provider runs (Workers AI's BGE base, OpenAI's text-embedding-3): it may still run here."""
    from memory_sim.local.ai.models import canonical

    return canonical(name) in (BGE_BASE, "text-embedding-3-small", "text-embedding-3-large")


def workers_ai_refuses(model: str) -> str | None:
    """Why Workers AI cannot embed with `model`, or None where it can (its catalogue: `@cf/...` names)."""
    from memory_sim.local.ai.models import canonical

    name = canonical(model)
    if name == DEFAULT_MODEL or name.startswith("@cf/"):
        return None
    return f"Workers AI has no model {model!r} (its embedding models are named @cf/..., e.g. {BGE_BASE})"


def index_needs(index: str, recorded: dict[str, str], why: str) -> str:
    """One line: which model the index needs, why it cannot run here, and the two ways forward."""
    model = recorded.get("model", "?")
    pooling = f", {recorded['pooling']} pooling" if "pooling" in recorded else ""
    shape = f"{recorded.get('dimensions', '?')}-d{pooling}"
    reason = why.split(". ")[0].rstrip(".")
    return (f"index {index!r} was filled with {model} ({shape}), which cannot run here: {reason}. Either provide "
            f"that model (MEMORY_SIM_BGE_PATH or a model folder for local weights; MEMORY_SIM_EMBED_PROVIDER="
            f"workers-ai or openai for a hosted one) or re-embed the memories from D1 with another: "
            f"memory-sim reembed --model MODEL")


def _default_on_workers_ai(settings: Settings, ai: Ai, cache: Path | None, closers: Closers) -> Embedder:
    """A new index with the default model: BGE base on Workers AI, production's default. Where that Workers AI
    cannot run it (a local server without BGE's weights), the bundled MiniLM run here, as `default` does locally."""
    from memory_sim.builder.models import MINILM, load_embedder

    try:
        ai.run(BGE_BASE, {"text": ["dimension probe"], "pooling": "cls"})  # asked, not cached: can it run there?
        return load_embedder(BGE_BASE, cache_path=cache, ai=ai)
    except EmbeddingUnavailable:
        raise
    except AiError as exc:
        log.warning("embedding model 'default': Workers AI cannot run %s here (%s); using the bundled %s, run on "
                    "this machine", BGE_BASE, str(exc).split(". ")[0], MINILM)
    local = ai_for("local", settings, ai, closers)
    return load_embedder(MINILM, cache_path=cache, ai=local)
