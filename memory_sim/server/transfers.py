"""Signed URLs for D1 imports and exports, served by the same loopback server that hands them out.

Cloudflare hands wrangler a presigned R2 URL: wrangler PUTs the SQL file of `d1 execute --file` there, and GETs
the dump of `d1 export` from one, without the API token. Here the URL is `http://<the address the request came
in on>/transfers/<secret>`: the random secret is the signature (unguessable, valid for an hour, bound to one
account and database), so these two routes sit outside `/client/v4` and its token check, as R2 does.

    PUT /transfers/{secret}   the upload; answers 200 with the body's MD5 as ETag (as R2 does)
    GET /transfers/{secret}   the download
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response

from memory_sim.server.envelope import CODE_BAD_REQUEST, ApiError, ok

VALID_S = 3600.0
MAX_UPLOAD_BYTES = 5 * 1024**3  # D1's largest database
CODE_NO_TRANSFER = 7404

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

    def __init__(self) -> None:
        self._folder: Path | None = None  # made on first use: most servers never see an import or export
        self._by_secret: dict[str, Transfer] = {}
        self._lock = threading.Lock()

    @property
    def folder(self) -> Path:
        with self._lock:
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix="memory-sim-transfers-"))
            return self._folder

    def _add(self, transfer: Transfer) -> str:
        secret = secrets.token_urlsafe(32)
        with self._lock:
            self._drop_expired()
            self._by_secret[secret] = transfer
        return secret

    def expect_upload(self, account_id: str, database_id: str, filename: str) -> str:
        path = self.folder / f"up-{secrets.token_hex(8)}.sql"
        return self._add(Transfer(account_id, database_id, filename, path, True, time.time() + VALID_S))

    def offer_download(self, account_id: str, database_id: str, filename: str, text: str) -> str:
        path = self.folder / f"down-{secrets.token_hex(8)}.sql"
        path.write_text(text, "utf-8")
        return self._add(Transfer(account_id, database_id, filename, path, False, time.time() + VALID_S))

    def get(self, secret: str, *, upload: bool) -> Transfer:
        with self._lock:
            transfer = self._by_secret.get(secret)
        if transfer is None or transfer.upload != upload or transfer.expires < time.time():
            raise ApiError(404, CODE_NO_TRANSFER, "This transfer URL is unknown or has expired (valid for one hour)")
        return transfer

    def uploaded(self, account_id: str, database_id: str, filename: str) -> Transfer | None:
        """The received upload of `filename` for this database, if any."""
        with self._lock:
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
        now = time.time()
        for secret in [s for s, t in self._by_secret.items() if t.expires < now]:
            self._by_secret.pop(secret).path.unlink(missing_ok=True)

    def close(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def url_for(request: Request, secret: str) -> str:
    """The transfer URL on the address this request came in on (the socket's, not the Host header's)."""
    server = request.scope.get("server")
    host, port = server if server else (request.url.hostname, request.url.port)
    host = f"[{host}]" if ":" in str(host) else host
    return f"http://{host}:{port}/transfers/{secret}"


@router.put("/transfers/{secret}")
async def receive_upload(request: Request, secret: str) -> Response:
    transfer = request.app.state.transfers.get(secret, upload=True)
    digest = hashlib.md5(usedforsecurity=False)
    size = 0
    partial = transfer.path.with_suffix(".partial")
    with open(partial, "wb") as sink:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_UPLOAD_BYTES:
                partial.unlink(missing_ok=True)
                raise ApiError(413, CODE_BAD_REQUEST, f"the upload is over {MAX_UPLOAD_BYTES} bytes")
            digest.update(chunk)
            sink.write(chunk)
    partial.replace(transfer.path)
    transfer.etag = digest.hexdigest()
    answer = ok(None)
    answer.headers["ETag"] = f'"{transfer.etag}"'
    return answer


@router.get("/transfers/{secret}")
def send_download(request: Request, secret: str) -> Response:
    transfer = request.app.state.transfers.get(secret, upload=False)
    return FileResponse(transfer.path, media_type="application/sql", filename=transfer.filename)
