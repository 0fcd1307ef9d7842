"""Workers AI's paid-only models (cloudflare-docs changelog 2026-07-28: `@cf/moonshotai/kimi-k2.6`,
`@cf/moonshotai/kimi-k2.7-code`, `@cf/zai-org/glm-5.2`, which answer 403 / 5035 on the Free plan) are chat models,
which the local Workers AI does not serve on any plan: asking for one is 5007 "No such model", on every route, as
production answers for a model it does not have. No model the local server serves is paid-only."""

from __future__ import annotations

import cloudflare
import httpx
import pytest

from memory_sim.bindings.ai_models import CATALOGUE
from memory_sim.testing import TEST_TOKEN, ServerForTests

PAID_ONLY = ["@cf/moonshotai/kimi-k2.6", "@cf/moonshotai/kimi-k2.7-code", "@cf/zai-org/glm-5.2"]


@pytest.mark.parametrize("model", PAID_ONLY)
def test_a_paid_only_chat_model_is_no_such_model_here(sdk: cloudflare.Cloudflare, server: ServerForTests,
                                                      account_id: str, model: str) -> None:
    expected = {"code": 5007, "message": f"AiError: No such model {model} or task"}
    with pytest.raises(cloudflare.BadRequestError) as through_sdk:
        sdk.ai.run(model, account_id=account_id, prompt="hello")
    assert through_sdk.value.body["errors"] == [expected]
    messages = {"messages": [{"role": "user", "content": "hello"}]}
    rest = httpx.post(f"{server.base_url}/accounts/{account_id}/ai/run/{model}", json=messages,
                      headers={"Authorization": f"Bearer {TEST_TOKEN}"}, timeout=60)
    assert (rest.status_code, rest.json()["errors"]) == (400, [expected])


def test_no_served_model_is_paid_only() -> None:
    assert not set(PAID_ONLY) & (set(CATALOGUE) | {"@cf/baai/bge-base-en-v1.5"})
