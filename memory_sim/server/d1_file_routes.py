"""D1 imports and exports over REST, as `wrangler d1 execute --remote --file` and `wrangler d1 export --remote`
drive them (`/accounts/{account_id}/d1/database/{database_id}/import|export`).

Import, four steps: `{action: "init", etag}` (the file's MD5) answers `upload_url` and `filename`; wrangler PUTs
the file there (transfers.py: answered with the MD5 as ETag); `{action: "ingest", filename, etag}` runs every
statement of the file in one transaction and answers `status: "complete"` with `num_queries`, `meta` and
`final_bookmark` (a Time Travel bookmark of the database right after it); `{action: "poll", current_bookmark}`
answers that again. The file is read a piece at a time (sql_stream.py) and each statement runs under D1's time
limit, so neither the file nor its statements are held in memory; a server told to stop (SIGTERM) stops between
two statements, rolls the import back and answers 503. A statement that fails rolls the whole file back and
answers `status: "error"` with `error`: the database is as it was. Export: `{output_format: "polling",
dump_options: {no_schema, no_data, tables}}` answers `status: "complete"` and `result.signed_url`, where the SQL
dump (d1_dump.py) of the database as it stands (`at_bookmark`, or a later write) waits for an hour.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from memory_sim.errors import D1Error, D1StatementError
from memory_sim.server import body_schemas as schemas
from memory_sim.server.bodies import json_object
from memory_sim.server.d1_dump import dump
from memory_sim.server.envelope import CODE_BAD_REQUEST, CODE_UNAVAILABLE, ApiError, ok
from memory_sim.server.sql_stream import bound_statements, file_statements
from memory_sim.server.transfers import url_for

router = APIRouter(prefix="/client/v4/accounts/{account_id}/d1/database", tags=["d1"])
Json = dict[str, Any]
ETAG = re.compile(r"^[0-9a-f]{32}$")
IMPORT_BODY: Any = schemas.json_body({"type": "object", "required": ["action"], "properties": {
    "action": {"enum": ["init", "ingest", "poll"]}, "etag": schemas.STRING, "filename": schemas.STRING,
    "current_bookmark": schemas.STRING}})
EXPORT_BODY: Any = schemas.json_body({"type": "object", "properties": {
    "output_format": {"enum": ["polling"]}, "current_bookmark": schemas.STRING,
    "dump_options": {"type": "object", "properties": {"no_schema": {"type": "boolean"},
                                                      "no_data": {"type": "boolean"}, "tables": schemas.STRINGS}}}})


def _bad(message: str) -> ApiError:
    return ApiError(400, CODE_BAD_REQUEST, message)


def _etag(body: Json) -> str:
    etag = body.get("etag")
    if not isinstance(etag, str) or not ETAG.match(etag):
        raise _bad("invalid request: `etag` must be the file's MD5 as 32 lower-case hex digits")
    return etag


@router.post("/{database_id}/import", openapi_extra=IMPORT_BODY)
def import_sql(request: Request, account_id: str, database_id: str, body: Json = Depends(json_object)) -> JSONResponse:
    account = request.app.state.accounts.get(account_id)
    name = account.describe_database(database_id)["name"]  # 7404 before anything else
    action = body.get("action")
    if action == "init":
        filename = f"{database_id}-{_etag(body)}.sql"
        secret = request.app.state.transfers.expect_upload(account_id, database_id, filename)
        return ok({"success": True, "type": "import", "filename": filename, "upload_url": url_for(request, secret)})
    if action == "ingest":
        with account.history(database_id).serving():  # a Time Travel restore waits for the import, or refuses it
            return ok(_ingest(request, account, account_id, database_id, name, body))
    if action == "poll":
        done = request.app.state.imports.get((account_id, database_id))
        if done is None or done.get("at_bookmark") != body.get("current_bookmark"):
            raise _bad(f"no import of database {name} is running or has finished at bookmark "
                       f"{body.get('current_bookmark')!r}")
        return ok({**done, "messages": []})
    raise _bad(f"invalid request: `action` must be 'init', 'ingest' or 'poll', not {action!r}")


def _ingest(request: Request, account: Any, account_id: str, database_id: str, name: str, body: Json) -> Json:
    filename, etag = body.get("filename"), _etag(body)
    upload = request.app.state.transfers.uploaded(account_id, database_id, filename)
    if upload is None:
        raise _bad(f"the file {filename!r} has not been uploaded; start with action 'init' and PUT it to upload_url")
    if upload.etag != etag:
        raise _bad(f"the uploaded file's MD5 is {upload.etag}, not {etag}: upload it again")
    database = account.database(database_id)
    history = account.history(database_id)
    before = history.current(database).bookmark
    answer: Json = {"success": True, "type": "import", "at_bookmark": before}
    stopping = request.app.state.stopping
    try:  # ingested or failed, the upload's slot and file are freed: a retry uploads it again
        _import(database, history, str(upload.path), str(filename), answer, stopping)
    finally:
        request.app.state.transfers.discard(upload)
    request.app.state.imports[(account_id, database_id)] = answer
    return answer


def _import(database: Any, history: Any, path: str, filename: str, answer: Json, stopping: Any) -> None:
    """The uploaded file run into the database in one transaction; `answer` says how it went."""
    try:
        statements = bound_statements(file_statements(path))
        totals = database.run_script(statements, stop=stopping.is_set)
        if totals.statements == 0:
            raise D1Error("the file holds no SQL statement")
    except (D1Error, UnicodeDecodeError) as exc:
        where = f" (statement {exc.index + 1})" if isinstance(exc, D1StatementError) else ""
        error = f"{exc}{where}" if not isinstance(exc, UnicodeDecodeError) else f"the file is not UTF-8 text: {exc}"
        answer.update(success=False, status="error", error=error, errors=[error],
                      messages=["The import was rolled back: the database is as it was before it."])
        if stopping.is_set():
            raise ApiError(503, CODE_UNAVAILABLE, f"{error}: the import was rolled back; run it again") from exc
        return
    meta = {"duration": totals.duration, "rows_read": totals.rows_read, "rows_written": totals.rows_written,
            "changes": totals.changes, "changed_db": totals.changed_db, "size_after": totals.size_after,
            "last_row_id": totals.last_row_id}
    final = history.keep(database).bookmark
    answer.update(status="complete", messages=[f"Executed {totals.statements} queries from {filename}"],
                  result={"num_queries": totals.statements, "final_bookmark": final, "meta": meta})


@router.post("/{database_id}/export", openapi_extra=EXPORT_BODY)
def export_sql(request: Request, account_id: str, database_id: str, body: Json = Depends(json_object)) -> JSONResponse:
    account = request.app.state.accounts.get(account_id)
    name = account.describe_database(database_id)["name"]
    if body.get("output_format", "polling") != "polling":
        raise _bad(f"invalid request: `output_format` must be 'polling', not {body.get('output_format')!r}")
    options = body.get("dump_options") or {}
    if not isinstance(options, dict):
        raise _bad("invalid request: `dump_options` must be an object {no_schema?, no_data?, tables?}")
    tables = options.get("tables") or []
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
        raise _bad("invalid request: `dump_options.tables` must be an array of table names")
    if options.get("no_schema") and options.get("no_data"):
        raise _bad("You cannot specify both no_schema and no_data")
    with account.history(database_id).serving():  # the state a restore would swap out stays whole while read
        database = account.database(database_id)
        bookmark = account.history(database_id).current(database).bookmark
        text = dump(database, tables, schema=not options.get("no_schema"), data=not options.get("no_data"))
    filename = f"{name}-{bookmark.split('-')[0]}.sql"
    secret = request.app.state.transfers.offer_download(account_id, database_id, filename, text)
    return ok({"success": True, "type": "export", "at_bookmark": bookmark, "status": "complete",
               "messages": [f"Generated {filename}", "Uploaded part 1"],
               "result": {"filename": filename, "signed_url": url_for(request, secret)}})
