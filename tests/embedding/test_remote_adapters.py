"""Workers AI (REST, httpx) and OpenAI (official SDK) adapters against a real HTTP server on loopback."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest
from http_fakes import FakeApi, Scripted, serve

from memory_sim.bindings.ai import BGE_BASE
from memory_sim.builder.models import load_embedder
from memory_sim.cloudflare.workers_ai import WorkersAi
from memory_sim.embedding.embedder import AiEmbedder
from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.errors import AiError, EmbeddingUnavailable
from memory_sim.providers.openai_ai import OpenAiAi, split_requests
from memory_sim.retry import Backoff, Retrier

HANG_S = 600.0  # the clients' timeout against the fake servers: a bound for a hang, not a speed claim


@pytest.fixture
def api() -> Iterator[tuple[FakeApi, str]]:
    fake = FakeApi()
    server, url = serve(fake)
    yield fake, url
    server.shutdown()
    server.server_close()


@pytest.fixture
def slept() -> list[float]:
    return []


@pytest.fixture
def retrier(slept: list[float]) -> Retrier:
    return Retrier(Backoff(attempts=3, base_s=0.5, cap_s=4.0), sleep=slept.append, clock=lambda: 0.0, rng=random.Random(7))


def workers_ai(url: str, retrier: Retrier) -> WorkersAi:
    return WorkersAi("acc-1", "tok-secret", base_url=f"{url}/client/v4", retrier=retrier, timeout_s=HANG_S)


def test_workers_ai_posts_to_the_run_endpoint_with_cls(api: tuple[FakeApi, str], retrier: Retrier) -> None:
    fake, url = api
    answer = workers_ai(url, retrier).run(BGE_BASE, {"text": ["a b", "c"]})
    path, headers, body = fake.requests[0]
    assert path == "/client/v4/accounts/acc-1/ai/run/@cf/baai/bge-base-en-v1.5"
    assert headers["authorization"] == "Bearer tok-secret"
    assert body == {"text": ["a b", "c"], "pooling": "cls"}
    assert answer["shape"] == [2, 8] and answer["pooling"] == "cls"


def test_workers_ai_retries_429_and_500_then_succeeds(
    api: tuple[FakeApi, str], retrier: Retrier, slept: list[float]
) -> None:
    fake, url = api
    fake.failures = [
        Scripted(429, {"errors": [{"message": "Too many requests", "code": 3040}]}, {"retry-after": "2"}),
        Scripted(500, {"errors": [{"message": "Internal error", "code": 3001}]}),
    ]
    embedder = AiEmbedder(workers_ai(url, retrier), BGE_BASE)
    vectors = embedder.embed(["x y"])
    assert len(fake.requests) == 3
    assert slept[0] == 2.0 and 0.0 <= slept[1] <= 1.0  # Retry-After honoured, then jittered backoff
    np.testing.assert_allclose(vectors, HashingEmbedder(8).embed(["x y"]), atol=1e-6)


def test_workers_ai_gives_up_as_embedding_unavailable(api: tuple[FakeApi, str], retrier: Retrier) -> None:
    fake, url = api
    fake.failures = [Scripted(503, {"errors": [{"message": "Out of capacity"}]})] * 3
    with pytest.raises(EmbeddingUnavailable, match="503"):
        workers_ai(url, retrier).run(BGE_BASE, {"text": "x"})
    assert len(fake.requests) == 3


def test_workers_ai_bad_input_is_ai_error_without_retry(api: tuple[FakeApi, str], retrier: Retrier) -> None:
    fake, url = api
    fake.failures = [Scripted(400, {"errors": {"message": "AiError: Bad input: Error: x", "code": 5006}})]
    with pytest.raises(AiError) as info:
        workers_ai(url, retrier).run(BGE_BASE, {"text": "fine locally"})
    assert not isinstance(info.value, EmbeddingUnavailable)
    assert "AiError: Bad input" in str(info.value) and len(fake.requests) == 1
    with pytest.raises(AiError, match="too short"):
        workers_ai(url, retrier).run(BGE_BASE, {"text": [""]})  # refused before sending
    assert len(fake.requests) == 1


def test_unreachable_server_is_unavailable(retrier: Retrier) -> None:
    with pytest.raises(EmbeddingUnavailable, match="unreachable"):
        WorkersAi("a", "t", base_url="http://127.0.0.1:9", retrier=retrier).run(BGE_BASE, {"text": "x"})


def test_load_embedder_over_remote_ai_uses_bge_with_cls(api: tuple[FakeApi, str], retrier: Retrier) -> None:
    fake, url = api
    embedder = load_embedder("default", ai=workers_ai(url, retrier))
    assert embedder.model == BGE_BASE and embedder.pooling == "cls"
    embedder.embed(["hello"])
    embedder.embed(["hello"])
    assert embedder.dimensions == 8  # learnt from the answer, no probe
    assert len(fake.requests) == 1  # the repeat is cached


def openai_ai(url: str, retrier: Retrier, dimensions: int | None = None) -> OpenAiAi:
    return OpenAiAi("sk-test", base_url=f"{url}/v1", dimensions=dimensions, retrier=retrier, timeout_s=HANG_S)


def test_openai_embeds_in_index_order_with_dimensions(api: tuple[FakeApi, str], retrier: Retrier) -> None:
    fake, url = api
    ai = openai_ai(url, retrier, dimensions=12)
    embedder = AiEmbedder(ai, "text-embedding-3-small")
    texts = ["first text", "second one", "third"]
    vectors = embedder.embed(texts)
    assert embedder.dimensions == 12 and vectors.shape == (3, 12)
    np.testing.assert_allclose(vectors, HashingEmbedder(12).embed(texts), atol=1e-6)
    _, headers, body = fake.requests[0]
    assert body["model"] == "text-embedding-3-small" and body["dimensions"] == 12
    assert headers["authorization"] == "Bearer sk-test"


def test_openai_retries_then_raises_unavailable(api: tuple[FakeApi, str], retrier: Retrier) -> None:
    fake, url = api
    rate_limited = Scripted(429, {"error": {"message": "Rate limit reached", "type": "requests"}})
    fake.failures = [rate_limited, Scripted(500, {"error": {"message": "server error"}})]
    assert openai_ai(url, retrier).run("text-embedding-3-small", {"text": ["a"]})["shape"] == [1, 8]
    fake.failures = [rate_limited] * 3
    with pytest.raises(EmbeddingUnavailable, match="429"):
        openai_ai(url, retrier).run("text-embedding-3-small", {"text": ["a"]})


def test_openai_limits_are_checked_before_sending(api: tuple[FakeApi, str], retrier: Retrier) -> None:
    fake, url = api
    ai = openai_ai(url, retrier)
    with pytest.raises(AiError, match="at most 2048 inputs"):
        ai.run("text-embedding-3-small", {"text": ["x"] * 2049})
    with pytest.raises(AiError, match="8192 tokens"):
        ai.run("text-embedding-3-small", {"text": ["word " * 8000]})
    with pytest.raises(AiError, match="empty"):
        ai.run("text-embedding-3-small", {"text": [""]})
    assert fake.requests == []
    fake.failures = [Scripted(400, {"error": {"message": "bad model"}})]
    with pytest.raises(AiError, match="400") as info:
        ai.run("nope", {"text": ["x"]})
    assert not isinstance(info.value, EmbeddingUnavailable)


def test_requests_are_split_by_the_token_budget() -> None:
    texts = ["a" * 400] * 5  # 100 estimated tokens each
    assert [len(g) for g in split_requests(texts, budget=250)] == [2, 2, 1]
