"""OpenAI embeddings through the official `openai` SDK, exposed as an `Ai`: `run(model, {"text": [...]})`.

Limits honoured before sending: at most 2,048 inputs per request and 8,192 tokens per input (a text over it is
refused as `AiError`, as OpenAI would refuse it), and at most 300,000 tokens per request (larger runs are split
into several requests). Tokens are estimated cheaply as ceil(UTF-8 bytes / 4), about cl100k's average for English
text; a text the estimate lets through but the API still refuses comes back as `AiError` with OpenAI's message.
The SDK's own retries are off: our `Retrier` retries 429, 5xx, timeouts and connection errors, then raises
`EmbeddingUnavailable`. `pooling` means nothing to OpenAI; it is echoed so the answer keeps the Workers AI shape.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from memory_sim.bindings.limits import OPENAI_MAX_INPUTS, OPENAI_MAX_TOKENS_PER_INPUT, OPENAI_MAX_TOKENS_PER_REQUEST
from memory_sim.errors import AiError
from memory_sim.retry import Retrier, parse_retry_after, unavailable

OPENAI_WIDTHS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text.encode("utf-8")) / 4))


class OpenAiAi:
    """`Ai` over OpenAI's embeddings endpoint; `base_url` points it at any server that speaks that API."""

    is_local = False

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        dimensions: int | None = None,
        timeout_s: float = 30.0,
        retrier: Retrier | None = None,
    ) -> None:
        import openai

        self.dimensions = dimensions
        self.retrier = retrier or Retrier()
        self._client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)

    def model_dimensions(self, model: str) -> int | None:
        return self.dimensions or OPENAI_WIDTHS.get(model)

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        texts = _texts(inputs)
        data: list[list[float]] = []
        for request in split_requests(texts):
            data.extend(self.retrier.call(partial(self._embed, model, request)))
        width = len(data[0]) if data else 0
        return {"shape": [len(data), width], "data": data, "pooling": inputs.get("pooling", "mean")}

    def _embed(self, model: str, texts: list[str]) -> list[list[float]]:
        import openai

        extra: dict[str, Any] = {} if self.dimensions is None else {"dimensions": self.dimensions}
        try:
            response = self._client.embeddings.create(model=model, input=texts, encoding_format="float", **extra)
        except openai.APIConnectionError as exc:  # includes APITimeoutError
            raise unavailable(f"OpenAI unreachable or timed out: {exc}") from exc
        except openai.APIStatusError as exc:
            if exc.status_code == 429 or exc.status_code >= 500:
                raise unavailable(f"OpenAI answered {exc.status_code}: {exc.message}", _retry_after(exc)) from exc
            raise AiError(f"OpenAI refused the request ({exc.status_code}): {exc.message}") from exc
        rows = sorted(response.data, key=lambda item: item.index)
        return [list(item.embedding) for item in rows]

    def close(self) -> None:
        self._client.close()


def _texts(inputs: dict[str, Any]) -> list[str]:
    value = inputs.get("text") if isinstance(inputs, dict) else None
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise AiError("OpenAI embeddings need 'text': a non-empty string or a non-empty list of strings")
    if len(texts) > OPENAI_MAX_INPUTS:
        raise AiError(f"OpenAI embeddings take at most {OPENAI_MAX_INPUTS} inputs per request, got {len(texts)}")
    for position, text in enumerate(texts):
        if not text:
            raise AiError(f"OpenAI embeddings refuse empty input (text {position})")
        if estimate_tokens(text) > OPENAI_MAX_TOKENS_PER_INPUT:
            raise AiError(
                f"text {position} is about {estimate_tokens(text)} tokens; OpenAI embeddings take at most "
                f"{OPENAI_MAX_TOKENS_PER_INPUT} tokens per input"
            )
    return texts


def split_requests(texts: list[str], budget: int = OPENAI_MAX_TOKENS_PER_REQUEST) -> list[list[str]]:
    """Consecutive groups whose estimated tokens stay within one request's budget."""
    groups: list[list[str]] = [[]]
    used = 0
    for text in texts:
        cost = estimate_tokens(text)
        if groups[-1] and used + cost > budget:
            groups.append([])
            used = 0
        groups[-1].append(text)
        used += cost
    return groups


def _retry_after(exc: Any) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return parse_retry_after(headers.get("retry-after")) if headers is not None else None
