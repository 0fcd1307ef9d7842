"""The local Cloudflare API server on this machine's backends. The server (memory_sim/server/) opens nothing
itself: `create_app` is handed the factories of each account's Vectorize and D1 and an `Ai`, and this is where
they are chosen, as the rest of the builder chooses an Env's.

    build_server_app(data_dir, tokens)   `memory-sim serve`, a folder's owner, the test server (memory_sim/testing.py)
    local_factories(d1_engine)            Chroma with REST's batch limit, D1 files on the engine, per account folder
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_sim.bindings import limits
from memory_sim.bindings.ai import Ai

if TYPE_CHECKING:
    from fastapi import FastAPI

    from memory_sim.server.accounts import D1Factory, VectorizeFactory
    from memory_sim.server.auth import TokenTable


def local_factories(
    d1_engine: str = "duckdb", visibility_lag_s: float = 0.0, chroma_own_process: bool = True
) -> tuple[VectorizeFactory, D1Factory]:
    """Per account folder: Chroma (REST's batch limit, 5000, instead of the binding's 1000) and D1 on `d1_engine`.
    Each account's Chroma runs in a process of its own: its calls hold the GIL throughout, and one account's large
    overwrite would otherwise stall every other account and `/health` (local/vectorize/chroma_process.py);
    `chroma_own_process=False` keeps it in this process (for comparisons)."""
    from memory_sim.builder import local_d1_account, local_vectorize_account

    def vectorize(folder: Path) -> Any:
        return local_vectorize_account(folder, visibility_lag_s=visibility_lag_s,
                                       max_batch=limits.VECTORIZE_MAX_BATCH_REST, own_process=chroma_own_process)

    def d1(folder: Path) -> Any:
        return local_d1_account(folder, d1_engine)

    return vectorize, d1


def build_server_app(
    data_dir: str | Path, tokens: str | Sequence[str] | TokenTable, *, d1_engine: str = "duckdb",
    visibility_lag_s: float = 0.0, ai: Ai | None = None, chroma_own_process: bool = True, **options: Any,
) -> FastAPI:
    """The app over `<data_dir>/accounts/<account_id>/...` on local backends; `ai` answers `/ai/run` (default:
    local models, loaded on first use); `options` go to `create_app`."""
    from memory_sim.builder.models import local_ai
    from memory_sim.server.app import create_app

    vectorize, d1 = local_factories(d1_engine, visibility_lag_s, chroma_own_process)
    return create_app(data_dir, tokens, vectorize_factory=vectorize, d1_factory=d1,
                      ai=ai if ai is not None else local_ai(), **options)
