"""Workers AI's other doors, beside `/ai/run/{model}` (ai_routes.py):

    POST /accounts/{account_id}/ai/run/proxy      what wrangler 4.44 and earlier send for a Worker's `env.AI`: the
                                                  binding's own request (`{inputs, options}`, the model in the
                                                  `cf-consn-model-id` header), answered with the bare result
    POST /accounts/{account_id}/ai/v1/embeddings  the OpenAI-compatible embeddings endpoint (`{input, model,
                                                  dimensions?}`), for the OpenAI SDK pointed at `.../ai/v1`

Registered before ai_routes' router: `/ai/run/{model:path}` would otherwise take `proxy` for a model's name.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from memory_sim.bindings.ai_validation import bad_input
from memory_sim.server.binding_routes import ai_result, answer, app_capacity
from memory_sim.server.bodies import json_object
from memory_sim.server.envelope import EnvelopeResponse, failure, to_api_error


def _base64(row: list[float]) -> str:
    """OpenAI's `encoding_format: "base64"`: the float32 values, little-endian, base64-encoded."""
    return base64.b64encode(np.asarray(row, dtype="<f4").tobytes()).decode("ascii")


router = APIRouter(prefix="/client/v4/accounts/{account_id}/ai", tags=["workers-ai"])
ENCODINGS = ("float", "base64")  # OpenAI's `encoding_format`; null is taken as its default, float


@router.post("/run/proxy")
async def run_proxy(request: Request, account_id: str) -> JSONResponse:
    """wrangler passes this answer to the binding module unchanged: a bare result, or `errors[0]` that the module
    words as `code: message`."""
    try:
        request.app.state.accounts.get(account_id)  # validates the id; models are shared by every account
        model = request.headers.get("cf-consn-model-id", "")
        body = await request.body()
        return answer(await run_in_threadpool(ai_result, request.app.state.ai, model, body, app_capacity(request.app)))
    except Exception as exc:
        error = to_api_error(exc)
        return EnvelopeResponse(failure(error.code, error.message), status_code=error.status)


@router.post("/v1/embeddings")
def embeddings(request: Request, account_id: str, body: dict[str, Any] = Depends(json_object)) -> JSONResponse:
    """OpenAI's embeddings answer over the model's `run`. Errors: the envelope, plus OpenAI's `error` object that
    the OpenAI SDK words its exceptions from."""
    try:
        return _embeddings(request, account_id, body)
    except Exception as exc:
        error = to_api_error(exc)
        openai_error = {"message": error.message, "type": "invalid_request_error", "code": error.code}
        return EnvelopeResponse({**failure(error.code, error.message), "error": openai_error}, status_code=error.status)


def _embeddings(request: Request, account_id: str, body: dict[str, Any]) -> JSONResponse:
    """`dimensions` other than the model's own is refused: a local model is not cut down to fewer dimensions."""
    request.app.state.accounts.get(account_id)
    model, texts = body.get("model"), body.get("input")
    if not isinstance(model, str) or not model:
        raise bad_input("required properties at '/' are 'model'")
    encoding = "float" if body.get("encoding_format") is None else body["encoding_format"]
    if not isinstance(encoding, str) or encoding not in ENCODINGS:  # as OpenAI words it; before, 7 answered floats
        raise bad_input(f"{json.dumps(encoding)} is not one of ['float', 'base64'] - 'encoding_format'")
    ran = request.app.state.ai.run(model, {"text": texts})
    width = ran["shape"][1]
    wanted = body.get("dimensions")
    if wanted is not None and wanted != width:
        raise bad_input(f"Value at '/dimensions': {model} gives {width} dimensions (got {wanted!r})")
    encode = _base64 if encoding == "base64" else list
    data = [{"object": "embedding", "index": i, "embedding": encode(row)} for i, row in enumerate(ran["data"])]
    given: list[str] = [texts] if isinstance(texts, str) else list(texts or [])  # `run` checked them
    words = sum(len(text.split()) for text in given)  # approximate: the model's tokenizer is not reached here
    return JSONResponse({"object": "list", "data": data, "model": model,
                         "usage": {"prompt_tokens": words, "total_tokens": words}})
