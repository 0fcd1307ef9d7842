"""One account cannot starve the others: each account's requests run at most `share` at a time.

The routes' blocking work runs on one shared pool of worker threads (anyio's, 40). Without a bound, one account
keeping 60 legal requests in flight held every worker, and another account's query waited 18.7 s behind them
(/health 17.3 s). Here each account has its own queue in front of the app: a request waits there (a coroutine,
no thread) until fewer than `share` of its account's requests are running, so any one account holds at most
`share` workers and every other account finds workers free. An account with `max_waiting` requests already
queued is answered 429 (Cloudflare's 971, "Please wait and consider throttling your request speed"), so its
queue is bounded too. Requests that name no account (`/health`, the inspector, uploads) are not queued here.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from memory_sim.server.envelope import fail

DEFAULT_SHARE = 8  # of the pool's 40 workers: five busy accounts at once still leave room
DEFAULT_MAX_WAITING = 256
CODE_TOO_MANY = 971
ACCOUNT_PATH = re.compile(r"^/(?:client/v4/accounts|remote-proxy)/([^/]+)/")


class AccountQueue:
    """The running count and the waiters of one account."""

    def __init__(self, share: int) -> None:
        self.slots = asyncio.Semaphore(share)
        self.waiting = 0
        self.running = 0


class FairShare:
    """Plain ASGI middleware: per-account admission, in front of every route that names an account."""

    def __init__(self, app: Any, share: int = DEFAULT_SHARE, max_waiting: int = DEFAULT_MAX_WAITING) -> None:
        self.app, self.share, self.max_waiting = app, max(1, share), max_waiting
        self._queues: dict[str, AccountQueue] = {}

    def running(self, account: str) -> int:
        """How many of the account's requests are admitted now (for tests and logs)."""
        queue = self._queues.get(account)
        return 0 if queue is None else queue.running

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        matched = ACCOUNT_PATH.match(scope["path"]) if scope["type"] == "http" else None
        if matched is None:
            await self.app(scope, receive, send)
            return
        queue = self._queues.setdefault(matched[1], AccountQueue(self.share))
        if queue.slots.locked() and queue.waiting >= self.max_waiting:
            await fail(429, CODE_TOO_MANY, f"this account already has {self.max_waiting} requests waiting: "
                       "Please wait and consider throttling your request speed")(scope, receive, send)
            return
        queue.waiting += 1
        try:
            await queue.slots.acquire()
        finally:
            queue.waiting -= 1
        queue.running += 1
        try:
            await self.app(scope, receive, send)
        finally:
            queue.running -= 1
            queue.slots.release()
