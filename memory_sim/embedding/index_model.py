"""Binds a vector index to the embedder it was built with, through the index's `description`.

Vectors of two models (or of one model with two poolings) live in different spaces: querying one with the
other returns confident nonsense. So the memory system writes `describe_model(embedder)` into the index's
description when it creates the index, and `check_index_model` refuses a mismatched embedder later.
"""

from __future__ import annotations

import re

from memory_sim.bindings.ai import Embedder
from memory_sim.errors import ConfigError

_TAG = "memory_sim embeddings:"
_FIELD = re.compile(r"(model|dimensions|pooling)=(\S+)")


def describe_model(embedder: Embedder) -> str:
    """e.g. "memory_sim embeddings: model=@cf/baai/bge-base-en-v1.5 dimensions=768 pooling=cls"."""
    text = f"{_TAG} model={embedder.model} dimensions={embedder.dimensions}"
    pooling = getattr(embedder, "pooling", None)
    return f"{text} pooling={pooling}" if pooling else text


def parse_description(description: str | None) -> dict[str, str]:
    """The fields of a description written by `describe_model`; empty for any other description."""
    if not description or _TAG not in description:
        return {}
    return dict(_FIELD.findall(description.split(_TAG, 1)[1]))


def check_index_model(description: str, embedder: Embedder) -> None:
    """Raise ConfigError when the index was built with another model, width or pooling than `embedder`.

    An index whose description memory_sim did not write is accepted: nothing says which model built it."""
    recorded = parse_description(description)
    if not recorded:
        return
    current = parse_description(describe_model(embedder))
    differing = [
        k for k in ("model", "dimensions", "pooling") if k in recorded and k in current and recorded[k] != current[k]
    ]
    if differing:
        raise ConfigError(
            f"this index was built with {_summary(recorded)} but the embedder is {_summary(current)}; "
            "their vectors are not comparable. Re-embed the memories with `memory-sim reembed` "
            "(or choose the index's model with MEMORY_SIM_MODEL)"
        )


def _summary(fields: dict[str, str]) -> str:
    text = f"{fields.get('model', '?')} ({fields.get('dimensions', '?')}-d"
    return text + (f", {fields['pooling']} pooling)" if "pooling" in fields else ")")
