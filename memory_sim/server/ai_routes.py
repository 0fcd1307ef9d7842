"""Workers AI over REST (contract §4.1): `POST /accounts/{account_id}/ai/run/{model}` for embedding models,
answered by the server's `LocalAi` with Workers AI's input rules, output shape and error wording."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from memory_sim.server import body_schemas as schemas
from memory_sim.server.ai_capacity import rejects_if_busy
from memory_sim.server.binding_routes import app_capacity
from memory_sim.server.bodies import json_object
from memory_sim.server.envelope import ok

router = APIRouter(prefix="/client/v4/accounts/{account_id}/ai", tags=["workers-ai"])


@router.post("/run/{model:path}", openapi_extra=schemas.json_body(schemas.AI_RUN))
def run(request: Request, account_id: str, model: str, body: dict[str, Any] = Depends(json_object)) -> JSONResponse:
    request.app.state.accounts.get(account_id)  # validates the id; models are shared by every account
    inputs = {k: v for k, v in body.items() if k != "options"}  # run options ride beside the inputs (rejectIfBusy)
    with app_capacity(request.app).running(model, reject_if_busy=rejects_if_busy(body.get("options"))):
        return ok(request.app.state.ai.run(model, inputs))
