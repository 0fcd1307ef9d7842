"""`Env` holds the bindings, as a Worker's `env` does: `env.VECTORIZE`, `env.DB`, `env.AI` (plus the `Embedder`
built over the AI binding). The memory system only ever sees an `Env`, so moving from local to Cloudflare changes
settings, not code. Every way of opening one goes through `Settings` and the one builder (`memory_sim.builder`):

    Env.local("./data")                      local backends; MEMORY_SIM_* and memory_sim.toml are read too
    Env.cloudflare(account, token, index)    Cloudflare's REST API (or `memory-sim serve` through base_url)
    Env.from_settings(Settings.load(...))    whatever the settings say
    Env.in_memory()                          nothing on disk: the exact oracle, sqlite3 in memory, a test embedder
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_sim.bindings.ai import Ai, Embedder
from memory_sim.bindings.d1 import D1Database
from memory_sim.bindings.vectorize import VectorizeAccount, VectorizeIndex
from memory_sim.settings import Settings

__all__ = ["Env", "Settings", "build_env"]


@dataclass
class Env:
    """The bindings a memory system runs on. Close it (or use `with`) to release files and connections."""

    VECTORIZE: VectorizeIndex
    DB: D1Database
    AI: Ai
    embedder: Embedder
    vectorize_account: VectorizeAccount | None = None
    settings: Settings = field(default_factory=lambda: Settings.load(environ={}))
    close_hooks: list[Callable[[], None]] = field(default_factory=list)
    compact_hooks: list[Callable[[], None]] = field(default_factory=list)
    erasure_pending: bool = False  # something was forgotten or corrected since the last `compact()`

    @staticmethod
    def from_settings(
        settings: Settings, *, embedder: Embedder | None = None, rebuild_index: bool = False,
        before_rebuild: Callable[[D1Database], object] | None = None, new_index: bool = False,
    ) -> Env:
        """The Env the settings describe; `embedder` replaces the model they name; `rebuild_index` recreates the
        index for it, after `before_rebuild(db)`; `new_index` opens with the settings' model for re-embedding
        into a staged index (see `memory_sim.builder.build_env`)."""
        return build_env(settings, embedder=embedder, rebuild_index=rebuild_index, before_rebuild=before_rebuild,
                         new_index=new_index)

    @staticmethod
    def local(
        data_dir: str | Path | None = None, *, embedder: Embedder | None = None,
        environ: Mapping[str, str] | None = None, **overrides: Any,
    ) -> Env:
        """Local backends over a data folder. Settings not passed come from the environment (or `environ`),
        then `memory_sim.toml`, then the defaults; `embedder` replaces the model they name. While open, the Env
        serves the folder to other processes (`serve_owner=False` to not); a folder another process owns and
        serves opens through that owner instead (memory_sim/owner.py)."""
        settings = Settings.load(environ=environ, data_dir=data_dir, backend="local", **overrides)
        return build_env(settings, embedder=embedder)

    @staticmethod
    def cloudflare(
        account_id: str, api_token: str, index: str, database_id: str | None = None, base_url: str | None = None,
        *, embedder: Embedder | None = None, environ: Mapping[str, str] | None = None, **overrides: Any,
    ) -> Env:
        """The same bindings on a Cloudflare account (or any server speaking its REST API, via `base_url`)."""
        settings = Settings.load(environ=environ, backend="cloudflare", account_id=account_id, api_token=api_token,
                                 index_name=index, database_id=database_id, base_url=base_url, **overrides)
        return build_env(settings, embedder=embedder)

    @staticmethod
    def in_memory(clock: Callable[[], float] | None = None, embedder: Embedder | None = None, **options: Any) -> Env:
        """Nothing on disk: the exact Vectorize oracle, sqlite3 D1 in memory and (unless given) the hashing
        embedder. For tests and notebooks; `options`: dimensions, visibility_lag_s, max_vectors, db."""
        from memory_sim.builder import build_in_memory_env

        return build_in_memory_env(clock, embedder, **options)

    def compact(self) -> None:
        """Erased text leaves the files of the local backends: Chroma's log purged and its file vacuumed, D1's file
        rewritten (SQLite's VACUUM and WAL checkpoint, DuckDB's copy into a new file). Nothing to do on
        Cloudflare, whose services erase on their own schedule (docs/reliability.md, "Erasure")."""
        for hook in self.compact_hooks:
            hook()
        self.erasure_pending = False

    def compact_if_pending(self) -> bool:
        """`compact()` when something was erased since the last one; whether it ran."""
        if not self.erasure_pending:
            return False
        self.compact()
        return True

    def close(self) -> None:
        """Releases the files, connections and the folder's lock; `with Env.local(...) as env:` calls it. Every part
        is closed even when one fails (the first failure is raised after the rest closed)."""
        hooks = list(reversed(self.close_hooks))
        self.close_hooks.clear()
        failures: list[BaseException] = []
        for hook in hooks:
            try:
                hook()
            except Exception as exc:  # noqa: BLE001 - the others still close; the first is raised below
                failures.append(exc)
        if failures:
            raise failures[0]

    def __enter__(self) -> Env:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def build_env(settings: Settings, **options: Any) -> Env:
    """The Env for `settings` (see `memory_sim.builder.build_env` for the options)."""
    from memory_sim.builder import build_env as build

    return build(settings, **options)
