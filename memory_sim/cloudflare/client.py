"""The official `cloudflare` SDK client, built once per Env: base URL, token, timeout, and our own retries.

The SDK's built-in retries sleep on the wall clock; they are switched off (`max_retries=0`) and `call` retries
429, 5xx, timeouts and connection failures with capped exponential backoff (retry.py's `Backoff`,
with injected `sleep` and a seeded `random.Random`). What is still failing after that is raised as the
binding's own transient error; a 4xx is raised at once as the binding's input error with Cloudflare's text.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from memory_sim.errors import ConfigError, MemorySimError
from memory_sim.retry import Backoff

T = TypeVar("T")
CLOUDFLARE_API = "https://api.cloudflare.com/client/v4"
DEADLINE_S = 60.0  # per request, all of it: connect, send, headers and body (bounded.py)
MAX_ANSWER_BYTES = 100_000_000  # the largest body Cloudflare's API takes (a Vectorize upload): answers stay below


@dataclass(frozen=True, slots=True)
class ApiFailure:
    """What Cloudflare answered: HTTP status (0 when none came back), first error's code, message, pointer."""

    status: int
    code: int | None
    message: str
    pointer: str | None = None
    final: bool = False  # an answer no retry would make readable (too large, not JSON, redirected away)

    @property
    def transient(self) -> bool:
        return not self.final and (self.status in (0, 408, 429) or self.status >= 500)


def failure_of(exc: Exception) -> ApiFailure | None:
    """The SDK's exception as an `ApiFailure`, or None when it is not an API/transport error."""
    import json

    import cloudflare

    from memory_sim.cloudflare.bounded import AnswerTooLarge, CrossOriginRedirect

    if isinstance(exc.__cause__, (AnswerTooLarge, CrossOriginRedirect)):
        return ApiFailure(0, None, str(exc.__cause__), final=True)
    if isinstance(exc, json.JSONDecodeError):  # orjson's is one too
        return ApiFailure(200, None, f"the answer is not JSON ({_one_line(str(exc))})", final=True)
    if isinstance(exc, cloudflare.APITimeoutError):
        return ApiFailure(0, None, f"no complete answer within the request's deadline from {exc.request.url}")

    if isinstance(exc, cloudflare.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        errors = body.get("errors") if isinstance(body.get("errors"), list) else []
        first = errors[0] if errors and isinstance(errors[0], dict) else {}
        pointer = (first.get("source") or {}).get("pointer") if isinstance(first.get("source"), dict) else None
        message = first.get("message") or f"HTTP {exc.status_code}"
        return ApiFailure(exc.status_code, first.get("code"), str(message), pointer)
    if isinstance(exc, cloudflare.APIConnectionError):
        cause = f": {_one_line(str(exc.__cause__))}" if exc.__cause__ is not None and str(exc.__cause__) else ""
        return ApiFailure(0, None, f"{type(exc).__name__}: {exc}{cause}")
    return None


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


@dataclass
class CloudflareClient:
    """One SDK client for an account; `call(fn, on_failure)` runs `fn(sdk)` with retries and error mapping."""

    account_id: str
    api_token: str
    base_url: str | None = None
    timeout_s: float = 30.0  # per read or write
    deadline_s: float = DEADLINE_S
    max_answer_bytes: int = MAX_ANSWER_BYTES
    backoff: Backoff = field(default_factory=lambda: Backoff(attempts=4, base_s=0.5, cap_s=8.0, deadline_s=60.0))
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    sdk: Any = None
    http: Any = None  # the httpx.Client under the SDK (one keep-alive pool); built here unless given

    def __post_init__(self) -> None:
        if not self.account_id or not self.api_token:
            raise ConfigError("the Cloudflare backend needs an account id and an API token "
                              "(CLOUDFLARE_ACCOUNT_ID, CLOUDFLARE_API_TOKEN)")
        if self.sdk is None:
            import cloudflare
            import httpx

            from memory_sim.cloudflare.bounded import BoundedTransport, refuse_cross_origin_redirects

            if self.http is None:  # the SDK's connection limits; bounded requests, redirects only within the origin
                transport = BoundedTransport(deadline_s=self.deadline_s, max_answer_bytes=self.max_answer_bytes)
                self.http = httpx.Client(timeout=self.timeout_s, follow_redirects=True, transport=transport,
                                         event_hooks={"response": [refuse_cross_origin_redirects]})
            self.sdk = cloudflare.Cloudflare(api_token=self.api_token, base_url=self.base_url or CLOUDFLARE_API,
                                             max_retries=0, timeout=self.timeout_s, http_client=self.http)
        self._url = str(self.sdk.base_url).rstrip("/")
        self._headers = {**self.sdk.auth_headers, "Content-Type": "application/json", "Accept": "application/json"}

    def post_json(self, path: str, content: bytes) -> bytes:
        """POST pre-encoded JSON on the SDK's connection pool and return the answer's bytes: for the hot query
        path, where the SDK's request building and response handling cost ~0.45 ms a call (docs/server.md).
        Failures are raised as the SDK's own exception types, so `call` retries and maps them as any SDK call.
        Without a shared `http` client (an injected `sdk`), it goes through the SDK's raw `post`."""
        import cloudflare
        import httpx

        if self.http is None:
            return bytes(self.sdk.post(path, content=content, cast_to=httpx.Response).content)
        try:
            response = self.http.post(self._url + path, content=content, headers=self._headers, timeout=self.timeout_s)
        except httpx.TimeoutException as exc:
            raise cloudflare.APITimeoutError(request=exc.request) from exc
        except httpx.TransportError as exc:
            raise cloudflare.APIConnectionError(request=exc.request) from exc
        if response.status_code >= 400:
            try:
                body: object = response.json()
            except ValueError:
                body = None
            raise cloudflare.APIStatusError(f"HTTP {response.status_code}", response=response, body=body)
        return response.content

    def call(self, fn: Callable[[Any], T], on_failure: Callable[[ApiFailure], Exception]) -> T:
        started = self.clock()
        for retry in range(self.backoff.attempts):
            try:
                return fn(self.sdk)
            except Exception as exc:  # the SDK's tree; anything else is re-raised untouched below
                if isinstance(exc.__cause__, MemorySimError):  # stopped before sending (a request hook of ours)
                    raise exc.__cause__ from None
                failure = failure_of(exc)
                if failure is None:
                    raise
                wait = self.backoff.delay(retry, self.rng)
                last = retry + 1 >= self.backoff.attempts
                late = self.backoff.deadline_s is not None and self.clock() - started + wait > self.backoff.deadline_s
                if not failure.transient or last or late:
                    raise on_failure(failure) from exc
                self.sleep(wait)
        raise AssertionError("unreachable: the loop returns or raises")

    def close(self) -> None:
        self.sdk.close()
