"""What every test shares: HTTP clients that wait like a hang bound, not like a speed claim.

httpx's own default timeout is 5 s. On a loaded machine (CI shares its cores) a first request can wait longer
than that for a server thread, so a test that did not set a timeout would fail for the machine's load, not for
the code. Here a request made with httpx's module functions or a new `httpx.Client` that names no timeout gets
`HANG_S`; a test that sets one (to test a timeout) keeps its own."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

HANG_S = 600.0
FUNCTIONS = ("request", "stream", "get", "options", "head", "post", "put", "patch", "delete")


def _with_timeout(call: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(call)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", HANG_S)
        return call(*args, **kwargs)

    return wrapper


class _Client(httpx.Client):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("timeout", HANG_S)
        super().__init__(*args, **kwargs)


@pytest.fixture(scope="session", autouse=True)
def http_timeouts_are_hang_bounds() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for name in FUNCTIONS:
            patch.setattr(httpx, name, _with_timeout(getattr(httpx, name)))
        patch.setattr(httpx, "Client", _Client)
        yield
