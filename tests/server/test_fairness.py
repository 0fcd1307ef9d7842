"""One account cannot starve the others (server/fairness.py): with account X keeping 60 legal requests in flight,
account Y's query and /health are answered while X's work is still running, on a real server on loopback.

How X fills the pool without burning CPU: one long query (a ~2-4 s recursive count) holds X's database, and 60
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
LONG = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 3500000) SELECT count(*) AS n FROM c"
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
