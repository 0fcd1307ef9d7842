"""Signed URLs for D1 imports and exports, served by the same loopback server that hands them out.

Cloudflare hands wrangler a presigned R2 URL: wrangler PUTs the SQL file of `d1 execute --file` there, and GETs
the dump of `d1 export` from one, without the API token. Here the URL is `http://<the address the request came
in on>/transfers/<secret>`: the random secret is the signature (unguessable, valid for an hour, bound to one
account and database), so these two routes sit outside `/client/v4` and its token check, as R2 does.

    PUT /transfers/{secret}   the upload; answers 200 with the body's MD5 as ETag (as R2 does)
    GET /transfers/{secret}   the download

Bounded: an upload is at most `max_upload_bytes` (1 GiB; over it, 413 before or while it is read), an account
has at most `max_pending` (4) uploads waiting to be ingested (the next `init` answers 429) and as many exports
waiting to be fetched (a new export replaces the oldest), an upload not
ingested within 10 minutes goes (swept on every use, and its partial file when the PUT breaks off), and the
folders of servers that died without cleaning up are removed when a new one is made.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response

from memory_sim.server.envelope import CODE_BAD_REQUEST, ApiError, ok

VALID_S = 3600.0  # a download
UPLOAD_VALID_S = 600.0  # an upload, until it is ingested
MAX_UPLOAD_BYTES = 1024**3
MAX_PENDING_UPLOADS = 4  # per account
CODE_NO_TRANSFER = 7404
CODE_TOO_MANY = 971  # Cloudflare's "Please wait and consider throttling your request speed"
_PREFIX = "memory-sim-transfers-"

router = APIRouter(tags=["d1"])


@dataclass
class Transfer:
    account_id: str
    database_id: str
    filename: str
    path: Path
    upload: bool
    expires: float
    etag: str | None = None  # an upload's MD5, once received


class Transfers:
    """Files waiting to be uploaded or downloaded, each under a secret, in a private temporary folder."""

    def __init__(self, *, max_upload_bytes: int = MAX_UPLOAD_BYTES, max_pending: int = MAX_PENDING_UPLOADS,
                 upload_valid_s: float = UPLOAD_VALID_S, clock: Callable[[], float] = time.time) -> None:
        self._folder: Path | None = None  # made on first use: most servers never see an import or export
        self._by_secret: dict[str, Transfer] = {}
        self._lock = threading.Lock()
        self.max_upload_bytes, self.max_pending, self.upload_valid_s = max_upload_bytes, max_pending, upload_valid_s
        self._clock = clock

    @property
    def folder(self) -> Path:
        with self._lock:
            if self._folder is None:
                _remove_folders_of_dead_servers()
                self._folder = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
            return self._folder

    def _add(self, transfer: Transfer) -> str:
        secret = secrets.token_urlsafe(32)
        with self._lock:
            self._drop_expired()
            if transfer.upload and self._pending(transfer.account_id) >= self.max_pending:
                raise ApiError(429, CODE_TOO_MANY, f"the account already has {self.max_pending} uploads waiting to "
                               f"be ingested: ingest them, or wait {self.upload_valid_s / 60:g} minutes for them "
                               "to expire")
            self._by_secret[secret] = transfer
        return secret

    def _pending(self, account_id: str) -> int:
        return sum(1 for t in self._by_secret.values() if t.upload and t.account_id == account_id)

    def expect_upload(self, account_id: str, database_id: str, filename: str) -> str:
        path = self.folder / f"up-{secrets.token_hex(8)}.sql"
        expires = self._clock() + self.upload_valid_s
        return self._add(Transfer(account_id, database_id, filename, path, True, expires))

    def offer_download(self, account_id: str, database_id: str, filename: str, text: str) -> str:
        """The download's secret. An account keeps at most `max_pending` downloads, as uploads: a new export
        replaces the account's oldest one still waiting (its URL then answers 7404), so exports nobody fetches
        hold at most that many files for their hour."""
        path = self.folder / f"down-{secrets.token_hex(8)}.sql"
        path.write_text(text, "utf-8")
        with self._lock:
            waiting = [t for t in self._by_secret.values() if not t.upload and t.account_id == account_id]
        for oldest in sorted(waiting, key=lambda t: t.expires)[: max(0, len(waiting) - self.max_pending + 1)]:
            self.discard(oldest)
        return self._add(Transfer(account_id, database_id, filename, path, False, self._clock() + VALID_S))

    def get(self, secret: str, *, upload: bool) -> Transfer:
        with self._lock:
            self._drop_expired()
            transfer = self._by_secret.get(secret)
        if transfer is None or transfer.upload != upload:
            raise ApiError(404, CODE_NO_TRANSFER, "This transfer URL is unknown or has expired (valid for one hour)")
        return transfer

    def uploaded(self, account_id: str, database_id: str, filename: str) -> Transfer | None:
        """The received upload of `filename` for this database, if any."""
        with self._lock:
            self._drop_expired()
            found = [t for t in self._by_secret.values() if t.upload and t.etag is not None and
                     (t.account_id, t.database_id, t.filename) == (account_id, database_id, filename)]
        return found[-1] if found else None

    def discard(self, transfer: Transfer) -> None:
        """A transfer that is done: its URL stops working and its file goes."""
        with self._lock:
            for secret in [s for s, t in self._by_secret.items() if t is transfer]:
                del self._by_secret[secret]
        transfer.path.unlink(missing_ok=True)

    def _drop_expired(self) -> None:
        now = self._clock()
        for secret in [s for s, t in self._by_secret.items() if t.expires < now]:
            gone = self._by_secret.pop(secret)
            gone.path.unlink(missing_ok=True)
            gone.path.with_suffix(".partial").unlink(missing_ok=True)

    def files(self) -> list[Path]:
        """The files the transfers keep now (uploads, partial uploads, downloads)."""
        return sorted(self._folder.iterdir()) if self._folder is not None and self._folder.exists() else []

    def close(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def url_for(request: Request, secret: str) -> str:
    """The transfer URL on the address this request came in on (the socket's, not the Host header's)."""
    server = request.scope.get("server")
    host, port = server if server else (request.url.hostname, request.url.port)
    host = f"[{host}]" if ":" in str(host) else host
    return f"http://{host}:{port}/transfers/{secret}"


def _remove_folders_of_dead_servers() -> None:
    """Transfer folders left by servers of this user that were killed (named after their process id)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        pid = folder.name[len(_PREFIX):].split("-")[0]
        if not pid.isdigit() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            continue  # alive, another user's


@router.put("/transfers/{secret}")
async def receive_upload(request: Request, secret: str) -> Response:
    transfers = request.app.state.transfers
    transfer = transfers.get(secret, upload=True)
    cap = transfers.max_upload_bytes
    too_large = ApiError(413, CODE_BAD_REQUEST, f"the upload is over {cap:,} bytes")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise too_large
    digest = hashlib.md5(usedforsecurity=False)
    size = 0
    partial = transfer.path.with_suffix(".partial")
    try:
        with open(partial, "wb") as sink:
            async for chunk in request.stream():
                size += len(chunk)
                if size > cap:
                    raise too_large
                digest.update(chunk)
                sink.write(chunk)
        partial.replace(transfer.path)
    finally:
        partial.unlink(missing_ok=True)  # a refused or broken-off upload leaves nothing behind
    transfer.etag = digest.hexdigest()
    answer = ok(None)
    answer.headers["ETag"] = f'"{transfer.etag}"'
    return answer


@router.get("/transfers/{secret}")
def send_download(request: Request, secret: str) -> Response:
    transfer = request.app.state.transfers.get(secret, upload=False)
    return FileResponse(transfer.path, media_type="application/sql", filename=transfer.filename)
