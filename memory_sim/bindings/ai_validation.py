"""The Workers AI text-embedding contract, validated once: what `run(model, inputs)` accepts and returns.

Input `{"text": str | list[str], "pooling"?: "cls" | "mean"}`: 1..100 texts, none empty; pooling defaults to
"mean" as on Workers AI. Output `{"shape": [n, d], "data": [[...]], "pooling": ...}`.

Error wording: Workers AI answers bad input with code 5006 and a message "AiError: Bad input: Error: <schema
errors>", and an unknown model with 5007 "No such model <model> or task" (developers.cloudflare.com/workers-ai/
workers-ai-errors, and error bodies quoted in public issues). The schema-error detail after "Error: " below is
UNCONFIRMED: no first-hand sample for these exact violations was found, so it is worded in the validator's style.
"""

from __future__ import annotations

from typing import Any

from memory_sim.bindings.ai import Pooling
from memory_sim.bindings.limits import AI_MAX_TEXTS_PER_CALL
from memory_sim.errors import AiError

BAD_INPUT_CODE = 5006
NO_SUCH_MODEL_CODE = 5007
POOLINGS: tuple[Pooling, ...] = ("mean", "cls")
DEFAULT_POOLING: Pooling = "mean"  # Workers AI's default when `pooling` is omitted


def bad_input(detail: str) -> AiError:
    return AiError(f"AiError: Bad input: Error: {detail}")


def no_such_model(model: str) -> AiError:
    return AiError(f"AiError: No such model {model} or task")


def parse_inputs(inputs: Any) -> tuple[list[str], Pooling]:
    """The texts and pooling of a run request, or the AiError Workers AI would answer."""
    if not isinstance(inputs, dict) or "text" not in inputs:
        raise bad_input("required properties at '/' are 'text'")
    texts = text_list(inputs["text"])
    pooling = inputs.get("pooling", DEFAULT_POOLING)
    if pooling not in POOLINGS:
        raise bad_input(f"Value at '/pooling' is not one of 'mean', 'cls' (got {pooling!r})")  # UNCONFIRMED
    return texts, pooling


def text_list(value: Any, pointer: str = "/text", max_items: int = AI_MAX_TEXTS_PER_CALL) -> list[str]:
    """A string or a non-empty list of non-empty strings at `pointer`, at most `max_items` of them, as a list."""
    found = [value] if isinstance(value, str) else value
    if not isinstance(found, list) or not all(isinstance(t, str) for t in found):
        raise bad_input(f"Type mismatch of '{pointer}', expected 'string' or 'array' of 'string'")  # UNCONFIRMED
    if not found:
        raise bad_input(f"Array at '{pointer}' has too few items (0 < 1)")  # UNCONFIRMED
    if len(found) > max_items:
        raise bad_input(f"Array at '{pointer}' has too many items ({len(found)} > {max_items})")  # UNCONFIRMED
    for position, text in enumerate(found):
        if not text:
            raise bad_input(f"String at '{pointer}/{position}' is too short (0 < 1)")  # UNCONFIRMED
    return found


def output(vectors: Any, dimensions: int, pooling: Pooling) -> dict[str, Any]:
    """The response shape; `vectors` is a float array of (n, dimensions) or a list of rows."""
    data = vectors.tolist() if hasattr(vectors, "tolist") else [list(map(float, v)) for v in vectors]
    return {"shape": [len(data), dimensions], "data": data, "pooling": pooling}
