"""`Env` holds the bindings, as a Worker's `env` does: `env.VECTORIZE`, `env.DB`, `env.AI` (plus the
`Embedder` built over the AI binding). One small function builds it from typed settings; the memory system
only ever sees `Env`, so moving from local to Cloudflare changes settings, not code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from memory_sim.bindings.ai import DEFAULT_MODEL, Ai, Embedder
from memory_sim.bindings.d1 import D1Database
from memory_sim.bindings.vectorize import VectorizeAccount, VectorizeIndex
from memory_sim.errors import ConfigError

Backend = Literal["local", "cloudflare"]
D1Engine = Literal["duckdb", "sqlite"]
VectorBackend = Literal["chroma", "memory"]
EmbedRuntime = Literal["onnx", "torch"]  # what runs a local embedding model


@dataclass(frozen=True)
class Settings:
    """Where the bindings live. `from_environ()` reads the same from `MEMORY_SIM_*` variables."""

    backend: Backend = "local"
    data_dir: Path = Path("./.memory_sim")
    index_name: str = "memories"
    database_name: str = "memory"
    embed_model: str = DEFAULT_MODEL
    embed_runtime: EmbedRuntime = "onnx"
    d1_engine: D1Engine = "duckdb"
    vector_backend: VectorBackend = "chroma"
    chroma_url: str | None = None  # e.g. http://127.0.0.1:8000 for a Chroma server
    # Cloudflare
    account_id: str | None = None
    api_token: str | None = None
    database_id: str | None = None
    base_url: str | None = None

    @staticmethod
    def from_environ(environ: dict[str, str] | None = None, **overrides: Any) -> "Settings":
        env = dict(os.environ if environ is None else environ)
        values: dict[str, Any] = {
            "backend": env.get("MEMORY_SIM_BACKEND", "local"),
            "data_dir": Path(env.get("MEMORY_SIM_DATA", "./.memory_sim")),
            "index_name": env.get("MEMORY_SIM_INDEX", "memories"),
            "database_name": env.get("MEMORY_SIM_DATABASE", "memory"),
            "embed_model": env.get("MEMORY_SIM_MODEL", DEFAULT_MODEL),
            "embed_runtime": env.get("MEMORY_SIM_EMBED_RUNTIME", "onnx"),
            "d1_engine": env.get("MEMORY_SIM_D1_ENGINE", "duckdb"),
            "vector_backend": env.get("MEMORY_SIM_VECTOR_BACKEND", "chroma"),
            "chroma_url": env.get("MEMORY_SIM_CHROMA_URL"),
            "account_id": env.get("CLOUDFLARE_ACCOUNT_ID"),
            "api_token": env.get("CLOUDFLARE_API_TOKEN"),
            "database_id": env.get("MEMORY_SIM_D1_DATABASE_ID"),
            "base_url": env.get("CLOUDFLARE_BASE_URL"),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Settings(**values)


@dataclass
class Env:
    """The bindings a memory system runs on. Build with `Env.local(...)` or `build_env(settings)`."""

    VECTORIZE: VectorizeIndex
    DB: D1Database
    AI: Ai
    embedder: Embedder
    vectorize_account: VectorizeAccount | None = None
    settings: Settings = field(default_factory=Settings)
    close_hooks: list[Callable[[], None]] = field(default_factory=list)

    @staticmethod
    def local(data_dir: str | Path = "./.memory_sim", **overrides: Any) -> "Env":
        return build_env(Settings(data_dir=Path(data_dir), **overrides))

    @staticmethod
    def cloudflare(
        account_id: str, api_token: str, index: str, database_id: str | None = None, base_url: str | None = None, **overrides: Any
    ) -> "Env":
        """The same bindings on a Cloudflare account (or any server speaking its REST API, via `base_url`)."""
        return build_env(Settings(backend="cloudflare", account_id=account_id, api_token=api_token, index_name=index,
                                  database_id=database_id, base_url=base_url, **overrides))

    def close(self) -> None:
        for hook in reversed(self.close_hooks):
            hook()
        self.close_hooks.clear()

    def __enter__(self) -> "Env":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def build_env(settings: Settings) -> Env:
    """The one place that picks backends from settings."""
    if settings.backend == "local":
        from memory_sim.local.env import build_local_env

        return build_local_env(settings)
    if settings.backend == "cloudflare":
        try:
            from memory_sim.cloudflare.env import build_cloudflare_env
        except ModuleNotFoundError as exc:
            raise ConfigError("the Cloudflare backend is not available in this build") from exc
        return build_cloudflare_env(settings)
    raise ConfigError(f"unknown backend {settings.backend!r}: expected 'local' or 'cloudflare'")
