"""Workers AI over Cloudflare's REST API: `POST {base}/accounts/{id}/ai/run/{model}` with a bearer token.

The response envelope `{"result": {...}, "success", "errors": [{"code", "message"}], "messages"}` is unwrapped
to the binding's `result`. Rate limits (429), server errors (5xx), timeouts and connection failures are retried
with backoff and then raised as `EmbeddingUnavailable`; other 4xx answers are `AiError` with Cloudflare's message.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from memory_sim.bindings.ai_validation import parse_inputs
from memory_sim.errors import AiError
from memory_sim.retry import Retrier, parse_retry_after, unavailable

CLOUDFLARE_API = "https://api.cloudflare.com/client/v4"


class WorkersAi:
    """`env.AI` over REST. `transport` is httpx's seam: tests pass a real local server's URL as `base_url`."""

    is_local = False

    def __init__(
        self,
        account_id: str,
        api_token: str,
        *,
        base_url: str | None = None,
        timeout_s: float = 30.0,
        retrier: Retrier | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.account_id = account_id
        self.base_url = (base_url or CLOUDFLARE_API).rstrip("/")
        self.retrier = retrier or Retrier()
        self._client = httpx.Client(
            headers={"Authorization": f"Bearer {api_token}"}, timeout=timeout_s, transport=transport
        )

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        parse_inputs(inputs)  # refuse bad input here, as the binding would, before spending a request
        # Deliberate difference from Workers AI's default (mean): we send CLS unless told otherwise, the pooling
        # BGE was trained with and the one the local model uses, so local and production vectors agree.
        body = {**inputs, "pooling": inputs.get("pooling", "cls")}
        url = f"{self.base_url}/accounts/{quote(self.account_id)}/ai/run/{quote(model, safe='@/')}"
        return self.retrier.call(lambda: self._post(url, body))

    def _post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self._client.post(url, json=body)
        except httpx.TimeoutException as exc:
            raise unavailable(f"Workers AI timed out: {exc}") from exc
        except httpx.TransportError as exc:
            raise unavailable(f"Workers AI unreachable: {exc}") from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise unavailable(
                f"Workers AI answered {response.status_code}: {_message(response)}",
                parse_retry_after(response.headers.get("retry-after")),
            )
        if response.status_code >= 400:
            raise AiError(_message(response))
        try:
            result = response.json()["result"]
        except (ValueError, KeyError, TypeError) as exc:
            raise unavailable(f"Workers AI sent an unreadable answer: {response.text[:200]}") from exc
        if not isinstance(result, dict):
            raise unavailable(f"Workers AI sent an unreadable answer: {response.text[:200]}")
        return result

    def close(self) -> None:
        self._client.close()


def _message(response: httpx.Response) -> str:
    """Cloudflare's own error text: `errors[0].message` (also `errors.message`, seen on AI errors)."""
    try:
        errors = response.json().get("errors")
    except ValueError:
        return response.text[:200] or f"HTTP {response.status_code}"
    first = errors[0] if isinstance(errors, list) and errors else errors
    if isinstance(first, dict) and first.get("message"):
        code = first.get("code")
        return f"{first['message']}" + (f" (code {code})" if code is not None else "")
    return f"HTTP {response.status_code}"
