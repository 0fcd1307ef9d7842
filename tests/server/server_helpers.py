"""Helpers shared by the server tests."""

from __future__ import annotations

from typing import Any


def vectors_ndjson(rows: list[dict[str, Any]]) -> bytes:
    import json

    return "".join(json.dumps(r) + "\n" for r in rows).encode()
