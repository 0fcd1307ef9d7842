"""One account cannot starve the others (server/fairness.py): with account X keeping 60 legal requests in flight,
account Y's query and /health are answered while X's work is still running, on a real server on loopback.

How X fills the pool without burning CPU: one long query (a recursive count, ~2 s alone on a 2-core machine; at
3.5M rows it took 0.8 s there, as long as the test's own sleeps, so Y's answer raced it) holds X's database, and 60
cheap queries to the same database wait for it. Before, each of those waited on a worker thread, the 40 workers
were all X's, and Y's query (and /health, a sync route) waited until X's long query had finished and its queue had
drained. The verdict is an order, not a time: Y's answer (and /health's) comes before X's long query ends."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from memory_sim.testing import TEST_TOKEN, ServerForTests

AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}
LONG = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 8000000) SELECT count(*) AS n FROM c"
CHEAP = "SELECT 1 AS one"
FLOOD = 60


def _database(running: ServerForTests, account: str) -> str:
    made = httpx.post(f"{running.base_url}/accounts/{account}/d1/database", headers=AUTH, json={"name": "db"})
    return f"{running.base_url}/accounts/{account}/d1/database/{made.json()['result']['uuid']}/query"


def test_another_account_and_health_are_answered_while_one_account_floods(tmp_path: Path) -> None:
    with ServerForTests(tmp_path, d1_engine="sqlite") as running:
        x_query, y_query = (_database(running, running.fresh_account_id()) for _ in range(2))
        finished: dict[str, float] = {}
        statuses: list[int] = []

        def post(url: str, sql: str, name: str | None = None) -> None:
            answer = httpx.post(url, headers=AUTH, json={"sql": sql}, timeout=120)
            statuses.append(answer.status_code)
            if name is not None:
                finished[name] = time.monotonic()

        long = threading.Thread(target=post, args=(x_query, LONG, "x_long"))
        long.start()
        time.sleep(0.3)  # X's long query holds X's database
        flood = [threading.Thread(target=post, args=(x_query, CHEAP)) for _ in range(FLOOD)]
        for thread in flood:
            thread.start()
        time.sleep(0.5)  # X's cheap queries are all in: before, each held a worker, waiting on X's database
        post(y_query, CHEAP, "y")
        health = httpx.get(running.base_url.removesuffix("/client/v4") + "/health", timeout=120)
        finished["health"] = time.monotonic()
        long.join(timeout=120)
        for thread in flood:
            thread.join(timeout=120)
    assert health.status_code == 200
    assert statuses.count(200) == FLOOD + 2, statuses  # X's work is all done, none refused
    assert finished["y"] < finished["x_long"], finished  # Y did not wait for X
    assert finished["health"] < finished["x_long"], finished


def test_an_accounts_queue_is_bounded_and_strangers_cannot_fill_it() -> None:
    """FairShare alone, over an app that holds each request until told: the account's share runs, `max_waiting`
    more wait, the next is 429 (971); a request whose token does not open the account never takes a place."""
    import asyncio

    from memory_sim.server.auth import parse_tokens
    from memory_sim.server.fairness import FairShare

    entered: list[str] = []
    release = asyncio.Event()

    async def held(scope: dict[str, object], receive: object, send: object) -> None:
        entered.append(str(scope["who"]))
        await release.wait()

    fair = FairShare(held, parse_tokens("good:acct"), share=1, max_waiting=1)
    sent: list[dict[str, object]] = []

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    def request(who: str, token: str) -> dict[str, object]:
        return {"type": "http", "path": "/client/v4/accounts/acct/d1/database", "who": who, "query_string": b"",
                "headers": [(b"authorization", f"Bearer {token}".encode())]}

    async def scenario() -> None:
        calls = [asyncio.create_task(fair(request(f"own{n}", "good"), None, send)) for n in range(2)]
        strangers = [asyncio.create_task(fair(request(f"stranger{n}", "bad"), None, send)) for n in range(5)]
        await asyncio.sleep(0.05)
        await fair(request("own-extra", "good"), None, send)  # share 1 running, 1 waiting: refused at once
        assert [m["status"] for m in sent if m["type"] == "http.response.start"] == [429]
        assert entered[0] == "own0" and "own1" not in entered  # the second waits for the first
        assert sorted(e for e in entered if e.startswith("stranger")) == [f"stranger{n}" for n in range(5)]
        release.set()
        await asyncio.gather(*calls, *strangers)
        assert "own1" in entered

    asyncio.run(scenario())
