"""`env.AI.run(model, inputs, {rejectIfBusy: true})` through the Worker binding route, and `options` in a REST
body: while another run of the same model is under way on the server it is refused at once with Workers AI's
capacity error (429, 3040, its wording); without the option, or for another model, it waits its turn and answers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_sim.testing import TEST_TOKEN, ServerForTests, scratch_folder

SLOW, OTHER = "@cf/test/slow", "@cf/test/other"


class HeldAi:
    """An Ai whose runs of SLOW wait until released (so a run is under way when the next one comes)."""

    def __init__(self) -> None:
        self.started, self.release = threading.Event(), threading.Event()

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        if model == SLOW:
            self.started.set()
            assert self.release.wait(60)
        return {"shape": [1, 2], "data": [[0.6, 0.8]], "pooling": "mean"}


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[ServerForTests, HeldAi]]:
    ai = HeldAi()
    with scratch_folder(tmp_path) as folder, ServerForTests(folder, ai=ai) as server:
        yield server, ai


def _run(server: ServerForTests, model: str, options: dict[str, Any]) -> httpx.Response:
    url = f"{server.base_url.removesuffix('/client/v4')}/remote-proxy/{server.fresh_account_id()}/ai"
    headers = {"Authorization": f"Bearer {TEST_TOKEN}", "MF-URL": "https://workers-binding.ai/run?version=3",
               "MF-Binding": "AI", "MF-Header-cf-consn-model-id": model}
    body = json.dumps({"inputs": {"text": ["x"]}, "options": options}).encode()
    return httpx.post(url, content=body, headers=headers, timeout=60)


def test_reject_if_busy_is_refused_while_the_model_runs(held: tuple[ServerForTests, HeldAi]) -> None:
    server, ai = held
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(_run, server, SLOW, {})
        assert ai.started.wait(60)
        refused = _run(server, SLOW, {"rejectIfBusy": True})
        assert refused.status_code == 429
        assert refused.json()["errors"][0] == {"code": 3040,
                                               "message": "Capacity temporarily exceeded, please try again."}
        assert _run(server, OTHER, {"rejectIfBusy": True}).status_code == 200  # another model is not busy
        rest = httpx.post(f"{server.base_url}/accounts/{server.fresh_account_id()}/ai/run/{SLOW}", timeout=60,
                          json={"text": ["x"], "options": {"rejectIfBusy": True}},
                          headers={"Authorization": f"Bearer {TEST_TOKEN}"})
        assert rest.status_code == 429 and rest.json()["errors"][0]["code"] == 3040  # REST: `options` in the body
        waiting = pool.submit(_run, server, SLOW, {"rejectIfBusy": False})  # waits its turn
        ai.release.set()
        assert first.result(60).status_code == 200 and waiting.result(60).status_code == 200
    assert _run(server, SLOW, {"rejectIfBusy": True}).status_code == 200  # nothing under way now
