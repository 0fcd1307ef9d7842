"""The memory inspector: a read-only web app over a data folder (`memory-sim inspect`, and `/ui` of
`memory-sim serve`). Pages: the village, one NPC's memories over time, one memory's full record, a recall
playground that takes each score apart, relationships over time, and the folder's health (docs/inspector.md).

    access = Access()                                             # a fresh token; print access.url(host, port, PREFIX)
    app = create_app(Folder.from_settings(settings), access)      # the inspector alone, at /ui
    mount(server_app, Folder.of_env(env), access)                 # beside the Cloudflare API of `memory-sim serve`

Every request under /ui needs the token (or the cookie it is traded for), a loopback Host and no cross-site
origin (access.py).

FastAPI and Jinja2 are imported here; import this package only where the app is built.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse

from memory_sim.inspector.access import Access, Gate
from memory_sim.inspector.folder import Folder

__all__ = ["PREFIX", "Access", "Folder", "create_app", "mount"]

PREFIX = "/ui"


def mount(app: FastAPI, folder: Folder, access: Access, prefix: str = PREFIX) -> None:
    """Adds the inspector's pages and `/ui/api/...` routes to `app` under `prefix`, behind `access`'s gate."""
    from memory_sim.inspector import api, pages

    app.state.inspector_folder = folder
    app.state.inspector_prefix = prefix
    app.include_router(api.router, prefix=prefix)
    app.include_router(pages.router, prefix=prefix)

    def to_ui() -> Any:
        return RedirectResponse(f"{prefix}/")

    app.add_api_route(prefix, to_ui, methods=["GET"], include_in_schema=False)
    app.add_middleware(Gate, access=access, prefix=prefix)


def create_app(folder: Folder, access: Access) -> FastAPI:
    """The inspector on its own (`memory-sim inspect`): `/` leads to `/ui/` (with its query: the token)."""
    app = FastAPI(title="memory-sim inspector", docs_url=None, redoc_url=None, openapi_url=None)
    mount(app, folder, access)

    def to_ui(request: Request) -> Any:
        query = request.url.query
        return RedirectResponse(f"{PREFIX}/?{query}" if query else f"{PREFIX}/")

    app.add_api_route("/", to_ui, methods=["GET"], include_in_schema=False)
    return app
