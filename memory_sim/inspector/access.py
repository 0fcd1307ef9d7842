"""Who may see the inspector: the same authority as the API, asked of every request under `/ui`.

- **A token.** The face that starts the inspector makes a random one and prints the URL that carries it
  (`http://127.0.0.1:PORT/ui/?token=...`), as Jupyter does. Opening that URL trades the token for a cookie
  (HttpOnly, SameSite=Strict, path `/ui`, named after the port so two servers on one host do not overwrite each
  other's) and redirects to the same page without the token, so it leaves the address bar and the history.
  Scripts send `Authorization: Bearer TOKEN` instead. Under `memory-sim serve`, an API token that opens the
  account `local` is accepted too. No token: 401.
- **A Host allow-list.** `127.0.0.1`, `localhost` and `[::1]`, each with the port the server listens on. A page
  that rebinds its own DNS name to 127.0.0.1 sends its own name as `Host`: 403.
- **No cross-site requests.** `Sec-Fetch-Site` other than `same-origin` or `none` (the user typed or pasted the
  address), or an `Origin` that is not one of the allowed hosts: 403. The pages only read, but what they show
  is private.

`Gate` is a plain ASGI middleware and checks only paths under its prefix; the rest of the app (the Cloudflare
API, with its bearer tokens) is left to its own gate.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
SAME_SITE = frozenset({"same-origin", "none"})  # `none`: typed, pasted, a bookmark, the terminal's link


@dataclass(frozen=True)
class Access:
    """The inspector's token, the cookie it is traded for, and any other token that opens it (`also`)."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    also: Callable[[str], bool] | None = None
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)

    def __repr__(self) -> str:  # never the secrets
        return "Access(...)"

    def opens(self, token: str) -> bool:
        """The inspector's own token (compared in constant time), or one `also` accepts."""
        if hmac.compare_digest(token.encode("latin-1", "replace"), self.token.encode("ascii")):
            return True
        return bool(token) and self.also is not None and self.also(token)

    def holds_session(self, value: str) -> bool:
        return hmac.compare_digest(value.encode("latin-1", "replace"), self.session.encode("ascii"))

    def url(self, host: str, port: int, prefix: str) -> str:
        """The URL to print at start: the one that opens the inspector in a browser."""
        host = f"[{host}]" if ":" in host and not host.startswith("[") else host
        return f"http://{host}:{port}{prefix}/?{urlencode({'token': self.token})}"


def cookie_name(port: int) -> str:
    return f"memory-sim-ui-{port}"


class Gate:
    """Refuses a request under `prefix` without the inspector's authority (see the module's docstring)."""

    def __init__(self, app: Any, access: Access, prefix: str) -> None:
        self.app, self.access, self.prefix = app, access, prefix

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path != self.prefix and not path.startswith(f"{self.prefix}/"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        port = _port(scope)
        why = _foreign(request, port)
        if why is not None:
            await _refuse(403, why, path, self.prefix)(scope, receive, send)
        elif "token" in request.query_params:
            await self._trade(request, port)(scope, receive, send)
        elif not self._admitted(request, port):
            await _refuse(401, "the inspector needs its token: open the URL printed at start (.../ui/?token=...), "
                               "or send Authorization: Bearer TOKEN", path, self.prefix)(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def _admitted(self, request: Request, port: int) -> bool:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.access.opens(token.strip()):
            return True
        held = request.cookies.get(cookie_name(port))
        return held is not None and self.access.holds_session(held)

    def _trade(self, request: Request, port: int) -> Response:
        """`?token=`: a good one becomes the cookie, and the same page without the token; a bad one is a 401."""
        if not self.access.opens(request.query_params["token"]):
            return _refuse(401, "this token does not open the inspector", request.url.path, self.prefix)
        rest = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
        path = request.url.path
        answer = RedirectResponse(f"{path}?{rest}" if rest else path, status_code=303,
                                  headers={"cache-control": "no-store"})
        answer.set_cookie(cookie_name(port), self.access.session, path=self.prefix, httponly=True, samesite="strict")
        return answer


def _port(scope: Any) -> int:
    server = scope.get("server") or ("", 0)
    return int(server[1] or 0)


def allowed_hosts(port: int) -> frozenset[str]:
    names = {f"{name}:{port}" for name in LOOPBACK_NAMES}
    return frozenset(names | (set(LOOPBACK_NAMES) if port == 80 else set()))


def _foreign(request: Request, port: int) -> str | None:
    """Why the request comes from elsewhere than this machine's own pages, or None."""
    hosts = allowed_hosts(port)
    host = request.headers.get("host", "").strip().lower()
    if host not in hosts:
        return f"the inspector answers only at {', '.join(sorted(hosts))}, not at Host {host!r}"
    site = request.headers.get("sec-fetch-site", "").strip().lower()
    if site and site not in SAME_SITE:
        return f"the inspector refuses {site} requests"
    origin = request.headers.get("origin", "").strip().lower()
    if origin and origin.removeprefix("http://") not in hosts:
        return f"the inspector refuses requests from {origin!r}"
    return None


def _refuse(status: int, message: str, path: str, prefix: str) -> Response:
    """One line: JSON under `/ui/api/`, else a short page."""
    if path.startswith(f"{prefix}/api/"):
        return JSONResponse({"error": message}, status_code=status)
    page = ("<!doctype html><meta charset=utf-8><title>memory-sim inspector</title><link rel=icon href=\"data:,\">"
            "<p id=error role=alert>")
    return HTMLResponse(page + escape(message), status_code=status)
