"""Helpers shared by the server tests."""

from __future__ import annotations

from typing import Any


def vectors_ndjson(rows: list[dict[str, Any]]) -> bytes:
    import json

    return "".join(json.dumps(r) + "\n" for r in rows).encode()


# --- every route of the app, with a body each accepts ----------------------------------------------------------
ROUTE_BODIES: dict[str, Any] = {  # by the route's last path segment(s); others get `{}`
    "/vectorize/v2/indexes": {"name": "made", "config": {"dimensions": 2, "metric": "cosine"}},
    "/d1/database": {"name": "made"},
    "/query": {"vector": [1, 0]},
    "/{database_id}/query": {"sql": "SELECT 1 AS one"},
    "/raw": {"sql": "SELECT 1 AS one"},
    "/get_by_ids": {"ids": ["v"]},
    "/delete_by_ids": {"ids": ["v"]},
    "/metadata_index/create": {"propertyName": "k", "indexType": "string"},
    "/metadata_index/delete": {"propertyName": "k"},
}
NDJSON_ROUTES = ("/insert", "/upsert")
VECTOR_ROW = b'{"id": "v", "values": [1, 0], "metadata": {"k": "x"}}\n'


def api_routes(app: Any) -> list[tuple[str, str]]:
    """(method, path template) of every `/client/v4` route in the app's OpenAPI description, deletions last."""
    paths = app.openapi()["paths"]
    found = [(method.upper(), path) for path, methods in paths.items() if path.startswith("/client/v4") for method in methods]
    return sorted(found, key=lambda pair: pair[0] == "DELETE")


def route_request(method: str, template: str, account_id: str, database_id: str, name: str = "idx") -> dict[str, Any]:
    """httpx.request(**this) for one route on `account_id`: path filled in, and a body the route accepts."""
    path = (template.replace("/client/v4", "").replace("{account_id}", account_id).replace("{name}", name)
            .replace("{database_id}", database_id).replace("{model}", "@cf/baai/bge-base-en-v1.5"))
    request: dict[str, Any] = {"method": method, "url": path}
    if method != "POST":
        return request
    if template.endswith(NDJSON_ROUTES):
        return {**request, "content": VECTOR_ROW, "headers": {"Content-Type": "application/x-ndjson"}}
    key = next((k for k in sorted(ROUTE_BODIES, key=len, reverse=True) if template.endswith(k)), None)
    return {**request, "json": ROUTE_BODIES[key] if key else {}}
