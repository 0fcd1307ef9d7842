"""One account cannot starve the others: each account's requests run at most `share` at a time.

The routes' blocking work runs on one shared pool of worker threads (anyio's, 40). Without a bound, one account
keeping 60 legal requests in flight held every worker, and another account's query waited 18.7 s behind them
(/health 17.3 s). Here each account has its own queue in front of the app: a request waits there (a coroutine,
no thread) until fewer than `share` of its account's requests are running, so any one account holds at most
`share` workers and every other account finds workers free. An account with `max_waiting` requests already
queued is answered 429 (Cloudflare's 971, "Please wait and consider throttling your request speed"), so its
queue is bounded too. Only requests whose token opens the account are queued in its name (a stranger cannot fill
another account's queue); the others, and requests that name no account (`/health`, the inspector, uploads),
pass straight on to be answered (refused) without a worker.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import parse_qs

from memory_sim.server.auth import TokenTable, authorization
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

    def __init__(self, app: Any, tokens: TokenTable, share: int = DEFAULT_SHARE,
                 max_waiting: int = DEFAULT_MAX_WAITING) -> None:
        self.app, self.tokens, self.share, self.max_waiting = app, tokens, max(1, share), max_waiting
        self._queues: dict[str, AccountQueue] = {}

    def running(self, account: str) -> int:
        """How many of the account's requests are admitted now (for tests and logs)."""
        queue = self._queues.get(account)
        return 0 if queue is None else queue.running

    def _opens(self, scope: Any, account: str) -> bool:
        """Whether the request's token (its Authorization header, or a remote-proxy URL's `token`) opens `account`."""
        header = authorization(scope["headers"])
        if not header:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
            header = f"Bearer {query[0]}" if query else ""
        return self.tokens.refusal(header, account) is None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        matched = ACCOUNT_PATH.match(scope["path"]) if scope["type"] == "http" else None
        if matched is None or not self._opens(scope, matched[1]):
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
