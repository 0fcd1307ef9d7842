"""The memory inspector: a read-only web app over a data folder (`memory-sim inspect`, and `/ui` of
`memory-sim serve`). Pages: the village, one NPC's memories over time, one memory's full record, a recall
playground that takes each score apart, relationships over time, and the folder's health (docs/inspector.md).

    app = create_app(Folder.from_settings(settings))     # the inspector alone, at /ui
    mount(server_app, Folder.of_env(env))                # beside the Cloudflare API of `memory-sim serve`

FastAPI and Jinja2 are imported here; import this package only where the app is built.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import RedirectResponse

from memory_sim.inspector.folder import Folder

__all__ = ["PREFIX", "Folder", "create_app", "mount"]

PREFIX = "/ui"


def mount(app: FastAPI, folder: Folder, prefix: str = PREFIX) -> None:
    """Adds the inspector's pages and `/ui/api/...` routes to `app` under `prefix`."""
    from memory_sim.inspector import api, pages

    app.state.inspector_folder = folder
    app.state.inspector_prefix = prefix
    app.include_router(api.router, prefix=prefix)
    app.include_router(pages.router, prefix=prefix)

    def to_ui() -> Any:
        return RedirectResponse(f"{prefix}/")

    app.add_api_route(prefix, to_ui, methods=["GET"], include_in_schema=False)


def create_app(folder: Folder) -> FastAPI:
    """The inspector on its own (`memory-sim inspect`): `/` leads to `/ui/`."""
    app = FastAPI(title="memory-sim inspector", docs_url=None, redoc_url=None)
    mount(app, folder)
    app.add_api_route("/", lambda: RedirectResponse(f"{PREFIX}/"), methods=["GET"], include_in_schema=False)
    return app
