"""A local HTTP emulator of Cloudflare's v4 REST API over the embedded backends (`create_app`)."""

from __future__ import annotations

__all__ = ["create_app"]


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    if name == "create_app":  # lazily: importing the package must not import FastAPI
        from memory_sim.server.app import create_app

        return create_app
    raise AttributeError(name)
