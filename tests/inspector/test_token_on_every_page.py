"""`?token=` opens every page and `/ui/api/` route of the inspector, not only `/ui/`: each answers 303 to the same
address without the token and sets the cookie, which then opens it (a script follows with a cookie jar); and
docs/inspector.md says so, with the command a script runs."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from fastapi.routing import APIRoute
from inspector_helpers import Inspector

from memory_sim.inspector import PREFIX, api, pages

DOC = Path(__file__).resolve().parents[2] / "docs" / "inspector.md"
EXAMPLES = {"npc_id": "margaret", "a": "margaret", "b": "tom"}
QUERIES = {"/ui/recall": "npc=margaret&q=bread", "/ui/api/recall": "npc=margaret&q=bread"}


def _every_get_route() -> list[str]:
    """Every GET path of the inspector's routers under /ui, path parameters filled with the village's names."""
    routes = [*api.router.routes, *pages.router.routes]
    paths = sorted({PREFIX + r.path for r in routes if isinstance(r, APIRoute) and "GET" in r.methods})
    return [re.sub(r"\{(\w+)(:path)?\}", lambda m: EXAMPLES.get(m.group(1), "{memory}"), p) for p in paths]


def test_the_token_in_the_address_opens_every_page_and_route(ui: Inspector) -> None:
    memory_id = ui.json("/ui/api/npcs/margaret")["memories"][0]["id"]
    paths = [p.replace("{memory}", memory_id) for p in _every_get_route()]
    assert {"/ui/", "/ui/api/village", "/ui/api/health/check", "/ui/relationships"} <= set(paths)
    for path in paths:
        query = QUERIES.get(path, "")
        with httpx.Client(base_url=ui.base, timeout=60) as script:  # a fresh cookie jar each time
            traded = script.get(f"{path}?{query + '&' if query else ''}token={ui.token}")
            assert traded.status_code == 303, (path, traded.text)
            assert traded.headers["location"] == (f"{path}?{query}" if query else path)
            opened = script.get(traded.headers["location"])
            assert opened.status_code == 200, (path, opened.text)


def test_the_doc_says_every_page_takes_the_token() -> None:
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    assert "`?token=` works on every page and `/ui/api/` route" in text
    assert "curl -sL -c jar -b jar" in text
