"""schemathesis against the local server's OpenAPI description (over loopback, with a valid token): no 5xx,
every rejection a 4xx in Cloudflare's envelope. Bounded: a few examples per route."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402

from memory_sim.server.testing import TEST_TOKEN, ServerForTests  # noqa: E402

SERVED = {"requests": 0, "rejected": 0}


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerForTests]:
    with ServerForTests(tmp_path_factory.mktemp("fuzz-server")) as server:
        yield server


def _schema(server: ServerForTests) -> Any:
    return schemathesis.openapi.from_url(server.base_url.replace("/client/v4", "") + "/openapi.json")


@pytest.mark.slow
def test_openapi_routes_answer_4xx_in_the_envelope_never_5xx(fuzz_server: ServerForTests) -> None:
    import requests  # schemathesis' own dependency

    schema = _schema(fuzz_server)
    failures: list[str] = []
    session = requests.Session()
    for result in schema.get_all_operations():
        operation = result.ok()
        if "/ai/run/" in operation.path:
            continue  # would load the sentence-transformers model; its bad input is covered in test_bad_input.py
        strategy = operation.as_strategy()

        @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
        @schemathesis_given(strategy)
        def run(case: Any) -> None:
            response = case.call(session=session, headers={"Authorization": f"Bearer {TEST_TOKEN}"})
            SERVED["requests"] += 1
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:200]}")
            elif response.status_code >= 400:
                SERVED["rejected"] += 1
                body = response.json()
                if body.get("success") is not False or not body.get("errors") or "code" not in body["errors"][0]:
                    failures.append(f"{case.method} {case.formatted_path}: {response.status_code} not in the envelope: {response.text[:200]}")

        run()
    print(f"schemathesis: {SERVED['requests']} requests, {SERVED['rejected']} rejected with 4xx")
    assert SERVED["requests"] > 50 and not failures, failures[:5]


def schemathesis_given(strategy: Any) -> Any:
    from hypothesis import given

    return given(case=strategy)
