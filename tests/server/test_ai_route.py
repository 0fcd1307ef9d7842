"""Workers AI's run route through the official SDK: embeddings from the bundled MiniLM, and its error codes."""

from __future__ import annotations

import cloudflare
import pytest


def test_unknown_model_and_bad_input(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    with pytest.raises(cloudflare.BadRequestError) as unknown:
        sdk.ai.run("@cf/nope/x", account_id=account_id, text=["x"])
    assert unknown.value.body["errors"][0] == {"code": 5007, "message": "AiError: No such model @cf/nope/x or task"}
    with pytest.raises(cloudflare.BadRequestError) as empty:
        sdk.ai.run("sentence-transformers/all-MiniLM-L6-v2", account_id=account_id, text=[])
    assert empty.value.body["errors"][0]["code"] == 5006


@pytest.mark.slow
def test_embeddings_in_workers_ai_shape(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    answer = sdk.ai.run("sentence-transformers/all-MiniLM-L6-v2", account_id=account_id,
                        text=["the miller", "the baker"], extra_body={"pooling": "cls"})
    assert answer["shape"] == [2, 384] and answer["pooling"] == "cls" and len(answer["data"][1]) == 384
