"""D1 Time Travel over REST, as `wrangler d1 time-travel info | restore` drive it (time_travel.py keeps the states):

    GET  .../d1/database/{id}/time_travel/bookmark[?timestamp=T]       {bookmark}: now, or the state at T
    POST .../d1/database/{id}/time_travel/restore?bookmark=B|timestamp=T
                                                    {bookmark, previous_bookmark, message}

A restore is atomic: the kept state is copied beside the database and checked (it opens, its rows per table are
those kept) before the database's file is swapped for it by renames; a failure at any step leaves the database as
it was. The state before the restore is kept first, as `previous_bookmark`, so a restore can be undone. All of it
runs under the gate statement requests hold (`DatabaseHistory.restoring`): the request in flight ends first, so
`previous_bookmark` holds every write acknowledged before the restore; one that comes meanwhile gets a retryable
503. As on D1, a database takes at most 10 restores per 10 minutes; one more is refused with 429.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from memory_sim.server.envelope import CODE_BAD_REQUEST, ApiError, ok
from memory_sim.server.time_travel import Bookmark, DatabaseHistory, iso, parse_time

router = APIRouter(prefix="/client/v4/accounts/{account_id}/d1/database", tags=["d1"])


def _target(history: DatabaseHistory, database: Any, bookmark: str | None, timestamp: str | None) -> Bookmark:
    if bookmark and timestamp:
        raise ApiError(400, CODE_BAD_REQUEST, "Provide either a timestamp, or a bookmark - not both.")
    if bookmark:
        return history.find(bookmark)
    if timestamp:
        return history.at_time(parse_time(timestamp), database)
    raise ApiError(400, CODE_BAD_REQUEST, "Provide either a timestamp or a bookmark")


@router.get("/{database_id}/time_travel/bookmark")
def get_bookmark(request: Request, account_id: str, database_id: str, timestamp: str | None = None) -> JSONResponse:
    account = request.app.state.accounts.get(account_id)
    history = account.history(database_id)
    with history.serving():
        return _bookmark(history, account.database(database_id), timestamp)


def _bookmark(history: DatabaseHistory, database: Any, timestamp: str | None) -> JSONResponse:
    found = history.at_time(parse_time(timestamp), database) if timestamp else history.current(database)
    return ok({"bookmark": found.bookmark})


@router.post("/{database_id}/time_travel/restore")
def restore(request: Request, account_id: str, database_id: str, bookmark: str | None = None,
            timestamp: str | None = None) -> JSONResponse:
    account = request.app.state.accounts.get(account_id)
    history = account.history(database_id)
    with history.restoring():
        database = account.database(database_id)
        target = _target(history, database, bookmark, timestamp)
        history.admit_restore()
        previous = history.current(database)
        staged = history.staged(target)
        history.forget_pending()
        try:
            account.replace_database_file(database_id, staged)
        finally:
            history.discard_staging()
        now = history.keep(account.database(database_id), at=None)
        history.count_restore()
    return ok({"bookmark": now.bookmark, "previous_bookmark": previous.bookmark,
               "message": f"Restored database {history.name} to its state at {iso(target.at)} "
                          f"(bookmark {target.bookmark})"})
