"""The server's AI routes take model names, never paths: `/ai/run/{model}`, `/ai/run/proxy`,
`/remote-proxy/{a}/ai` and `/ai/v1/embeddings` all reach the models through `ModelNames`.

A local `Ai` also loads a model from any folder its caller names (the library's own use: `--model ./my-model`).
Behind the server that would let any token probe which folders exist (the answers differ), load a model from any
readable folder, and export the same model again under every spelling of its path (`/x//m`, `/x/./m`), ~90 MB of
memory each. So the routes pass a model on only when its name, exactly as written, is in the catalogue the local
`Ai` lists (its known names and aliases, `default`) or is one the operator configured (the folder's model, the
`--model` of `serve`); anything else is Workers AI's 5007 "No such model", whatever exists on disk, before any
file is looked at. An `Ai` with no catalogue (Workers AI itself, over REST) is passed through: it decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memory_sim.bindings.ai import Ai
from memory_sim.bindings.ai_validation import no_such_model


class ModelNames:
    """`ai` as the routes see it: `run` refuses a name outside `allowed` (None: every name goes through)."""

    def __init__(self, ai: Ai, configured: Iterable[str] = ()) -> None:
        self.ai = ai
        catalogue = getattr(ai, "catalogue", None)
        self.allowed: frozenset[str] | None = (
            None if catalogue is None else frozenset(catalogue()) | frozenset(m for m in configured if m)
        )

    def check(self, model: str) -> None:
        if self.allowed is not None and model not in self.allowed:
            raise no_such_model(model)

    def run(self, model: str, inputs: dict[str, Any]) -> Any:
        self.check(model)
        return self.ai.run(model, inputs)

    def __getattr__(self, name: str) -> Any:  # model_dimensions, seconds, ...: the wrapped Ai's
        return getattr(self.ai, name)
