"""Faults for the reliability tests, over the real bindings (not mocks: what is not failed reaches the backend)."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from typing import Any

from memory_faults import FlakyEmbedder


class ChaosEmbedder(FlakyEmbedder):
    """An `Embedder` failing a seeded share of calls at random, or every call while `down` (an outage)."""

    message = "injected: the embedding provider answered HTTP 503 (Service Unavailable)"

    def __init__(self, inner: Any, rng: random.Random, rate: float = 0.0) -> None:
        super().__init__(inner)
        self.rng, self.rate = rng, rate

    def fails(self) -> bool:
        return self.down or self.rng.random() < self.rate


@dataclass
class FaultPlan:
    """What the server middleware injects; its counters say what it did. Rates can change while it runs."""

    rng: random.Random
    error_rate: float = 0.0
    slow_rate: float = 0.0
    slow_s: float = 0.4
    errors: int = 0
    slow: int = 0
    requests: int = 0

    def draw(self) -> str:
        self.requests += 1
        value = self.rng.random()
        if value < self.error_rate:
            self.errors += 1
            return "error"
        if value < self.error_rate + self.slow_rate:
            self.slow += 1
            return "slow"
        return "pass"


_UNAVAILABLE = json.dumps({"success": False, "errors": [{"code": 10001, "message": "injected: service unavailable"}],
                           "messages": [], "result": None}).encode()


class ServerFaults:
    """ASGI middleware for the local server (`app.add_middleware(ServerFaults, plan=plan)` before it starts):
    answers a share of API calls 503 in Cloudflare's envelope, and holds another share past the client's
    timeout before serving it (so that write still lands, late)."""

    def __init__(self, app: Any, plan: FaultPlan) -> None:
        self.app, self.plan = app, plan

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/client/v4/"):
            return await self.app(scope, receive, send)
        outcome = self.plan.draw()
        if outcome == "error":
            await send({"type": "http.response.start", "status": 503, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": _UNAVAILABLE})
            return None
        if outcome == "slow":
            await asyncio.sleep(self.plan.slow_s)  # a slow server is the fault under test: the client times out
        return await self.app(scope, receive, send)
