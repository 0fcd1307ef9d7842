"""A counting fake `Ai` that speaks the Workers AI contract without a model."""

from __future__ import annotations

from typing import Any

from memory_sim.embedding.contract import output, parse_inputs
from memory_sim.embedding.fake import HashingEmbedder


class CountingAi:
    """An `Ai` over HashingEmbedder: validates like Workers AI and counts calls and texts."""

    def __init__(self, dimensions: int = 16) -> None:
        self.hashing = HashingEmbedder(dimensions)
        self.calls: list[list[str]] = []

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        texts, pooling = parse_inputs(inputs)
        self.calls.append(texts)
        scale = 2.0 if pooling == "mean" else 3.0  # not unit length: the embedder must normalise
        return output(self.hashing.embed(texts) * scale, self.hashing.dimensions, pooling)
