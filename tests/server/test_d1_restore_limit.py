"""D1's Time Travel limit, as the D1 limits page states it: at most 10 restores per 10 minutes per database. The
eleventh within ten minutes is refused (429, saying when the next is allowed) and changes nothing; another
database is not held back; ten minutes after the first, restores are allowed again. A settable clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import cloudflare
import pytest

from memory_sim.testing import TEST_TOKEN, ServerForTests, scratch_folder


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 6, 1, tzinfo=UTC).timestamp()

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Iterator[ServerForTests]:
    options = {"interval_s": 60.0, "retention_s": 30 * 86400.0, "max_kept": 50, "clock": clock}
    with scratch_folder(tmp_path_factory.mktemp("restore-limit")) as folder, \
            ServerForTests(folder, d1_engine="sqlite", time_travel=options) as running:
        yield running


def test_ten_restores_per_ten_minutes_per_database(server: ServerForTests, clock: Clock) -> None:
    sdk = cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=server.base_url, max_retries=0)
    account = server.fresh_account_id()
    first, other = (sdk.d1.database.create(account_id=account, name=n).uuid for n in ("village", "town"))
    travel = sdk.d1.database.time_travel
    sdk.d1.database.query(first, account_id=account, sql="CREATE TABLE t (v INTEGER)")
    clock.now += 120
    start = travel.get_bookmark(first, account_id=account).bookmark
    started = clock.now
    for _ in range(10):
        clock.now += 30
        travel.restore(first, account_id=account, bookmark=start)
    clock.now += 30
    with pytest.raises(cloudflare.RateLimitError) as refused:
        travel.restore(first, account_id=account, bookmark=start)
    error = refused.value.body["errors"][0]
    assert "at most 10 restores per 10 minutes per database" in error["message"]
    assert datetime.fromtimestamp(started + 30 + 600, UTC).isoformat(timespec="milliseconds")[:19] in error["message"]
    other_start = travel.get_bookmark(other, account_id=account).bookmark
    travel.restore(other, account_id=account, bookmark=other_start)  # each database counts its own
    clock.now = started + 30 + 600  # the first restore leaves the window
    travel.restore(first, account_id=account, bookmark=start)
    sdk.close()
