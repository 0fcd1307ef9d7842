"""The Cloudflare adapter (used by `push`, `pull` and `--backend cloudflare`) against servers on loopback that
misbehave on purpose (hostile.py): a total deadline per request, not per read; a cap on an answer's size; an
answer that is not JSON is one line and exit 2 on the CLI; a redirect to another origin is not followed, so the
token and the body never reach it. Each server misbehaves for ever, so without its bound a test would hang (its
pytest timeout) rather than pass: no verdict depends on the machine's speed."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import HostileServer, dribble, endless_chunks, huge_length, not_json, redirect_to

from memory_sim.cli import main
from memory_sim.cloudflare.client import CloudflareClient
from memory_sim.cloudflare.d1 import CloudflareD1Database
from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount
from memory_sim.errors import D1Error, MemorySimError, VectorizeUnavailable
from memory_sim.retry import Backoff

ONCE = Backoff(attempts=1, base_s=0.0, cap_s=0.0, deadline_s=None)


def _client(url: str, **bounds: float) -> CloudflareClient:
    return CloudflareClient("acct", "token", base_url=url, backoff=ONCE, **bounds)  # type: ignore[arg-type]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("behaviour", [dribble, endless_chunks], ids=["a-byte-at-a-time", "endless-chunked"])
def test_a_request_ends_at_its_deadline_however_the_server_trickles(behaviour: object) -> None:
    with HostileServer(behaviour) as server:  # type: ignore[arg-type]
        client = _client(server.url, deadline_s=1.0, timeout_s=0.5, max_answer_bytes=10**12)
        with pytest.raises(VectorizeUnavailable) as stopped:
            CloudflareVectorizeAccount(client).list_indexes()
        client.close()
    assert "no complete answer within the request's deadline" in str(stopped.value)
    assert "\n" not in str(stopped.value)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("behaviour", [endless_chunks, huge_length], ids=["endless-chunked", "announced-400MB"])
def test_an_answer_over_the_size_cap_is_not_read(behaviour: object) -> None:
    with HostileServer(behaviour) as server:  # type: ignore[arg-type]
        client = _client(server.url, deadline_s=30.0, max_answer_bytes=1_000_000)
        with pytest.raises(VectorizeUnavailable, match="the answer is larger than 1,000,000 bytes") as refused:
            CloudflareVectorizeAccount(client).list_indexes()
        client.close()
    assert "\n" not in str(refused.value)


@pytest.mark.timeout(60)
def test_an_answer_that_is_not_json_is_one_error_of_the_project() -> None:
    with HostileServer(not_json) as server:
        client = _client(server.url)
        with pytest.raises(VectorizeUnavailable, match="the answer is not JSON"):
            CloudflareVectorizeAccount(client).index("memories").query([0.0] * 4)
        with pytest.raises(D1Error, match="the answer is not JSON"):
            CloudflareD1Database(client, "db-id").prepare("SELECT 1").all()
        client.close()
        assert len(server.requests) == 2  # refused at once: not retried


@pytest.mark.timeout(120)
def test_pull_from_a_server_answering_garbage_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(not_json) as server:
        code = main(["--data", str(tmp_path / "pulled"), "pull", "--account-id", "acct", "--api-token", "token",
                     "--base-url", server.url])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "the answer is not JSON" in err, err


@pytest.mark.timeout(60)
def test_a_redirect_to_another_origin_is_not_followed_and_nothing_reaches_it() -> None:
    with HostileServer(not_json) as elsewhere, HostileServer(redirect_to(f"http://127.0.0.1:{elsewhere.port}")) as server:
        client = _client(server.url)
        with pytest.raises(MemorySimError, match="redirected to another origin") as refused:
            CloudflareD1Database(client, "db-id").prepare("INSERT INTO secrets VALUES (?)").bind("hunter2").run()
        client.close()
    assert elsewhere.requests == []
    assert b"hunter2" in server.requests[0]
    assert f"127.0.0.1:{elsewhere.port}" in str(refused.value) and "\n" not in str(refused.value)
