"""Agent Memory's REST API, as Cloudflare's http-api page gives it, under
`/client/v4/accounts/{account_id}/agent-memory/namespaces/...`, answered by the server's `AgentMemoryService`
(memory_sim/agent_memory/) in the v4 envelope. A profile is created by its first write (ingest, remember); a read
or a delete of a profile never written to is 404 "Profile not found". Tokens: the same gate as every route.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from memory_sim.agent_memory.local import AgentMemoryService, LocalAccount, LocalProfile
from memory_sim.bindings import agent_memory as contract
from memory_sim.server.bodies import json_object
from memory_sim.server.envelope import ok

router = APIRouter(prefix="/client/v4/accounts/{account_id}/agent-memory", tags=["agent-memory"])
PROFILE = "/namespaces/{namespace}/profiles/{profile}"


def _account(request: Request, account_id: str) -> LocalAccount:
    service: AgentMemoryService | None = getattr(request.app.state, "agent_memory", None)
    if service is None:
        raise contract.AgentMemoryNotFound(contract.CODE_NAMESPACE_NOT_FOUND, 404,
                                           "Agent Memory is not served by this server")
    return service.account(account_id)


def _profile(request: Request, account_id: str, namespace: str, profile: str, *, create: bool) -> LocalProfile:
    found = _account(request, account_id).namespace(namespace).existing_profile(profile, create=create)
    if found is None:
        raise contract.profile_not_found()
    return found


def _per_page(request: Request, most: int) -> int:
    given = request.query_params.get("per_page")
    if given is None:
        return contract.DEFAULT_PAGE_SIZE
    try:
        number = int(given)
    except ValueError:
        number = -1
    return contract.page_size("per_page", number, most)


# --- namespaces ----------------------------------------------------------------------------------------------------


@router.post("/namespaces")
def create_namespace(request: Request, account_id: str, body: dict[str, Any] = Depends(json_object)) -> JSONResponse:
    return ok(_account(request, account_id).create_namespace(contract.namespace_name(body.get("name"))).to_wire())


@router.get("/namespaces")
def list_namespaces(request: Request, account_id: str) -> JSONResponse:
    per_page = _per_page(request, contract.MAX_NAMESPACE_PAGE)
    page = _account(request, account_id).list_namespaces(per_page=per_page,
                                                         cursor=request.query_params.get("cursor") or None)
    return ok([n.to_wire() for n in page.namespaces],
              result_info={"cursor": page.cursor or "", "per_page": per_page, "count": len(page.namespaces)})


@router.get("/namespaces/{namespace}")
def get_namespace(request: Request, account_id: str, namespace: str) -> JSONResponse:
    return ok(_account(request, account_id).get_namespace(namespace).to_wire())


@router.delete("/namespaces/{namespace}")
def delete_namespace(request: Request, account_id: str, namespace: str) -> JSONResponse:
    _account(request, account_id).delete_namespace(namespace)
    return ok(None)


# --- profiles ------------------------------------------------------------------------------------------------------


@router.delete(PROFILE)
def delete_profile(request: Request, account_id: str, namespace: str, profile: str) -> JSONResponse:
    _account(request, account_id).namespace(namespace).delete_profile(profile)
    return ok(None)


@router.delete(PROFILE + "/sessions/{session_id}")
def delete_session(request: Request, account_id: str, namespace: str, profile: str, session_id: str) -> JSONResponse:
    contract.session_id(session_id, required=True)
    _profile(request, account_id, namespace, profile, create=False).delete_session(session_id)
    return ok(None)


@router.post(PROFILE + "/ingest")
def ingest(request: Request, account_id: str, namespace: str, profile: str,
           body: dict[str, Any] = Depends(json_object)) -> JSONResponse:
    messages = contract.messages(body.get("messages"))  # checked before the profile is made
    session = contract.session_id(body.get("sessionId"))
    _profile(request, account_id, namespace, profile, create=True).ingest(messages, session_id=session)
    return ok(None)


@router.post(PROFILE + "/remember")
def remember(request: Request, account_id: str, namespace: str, profile: str,
             body: dict[str, Any] = Depends(json_object)) -> JSONResponse:
    content = contract.content(body.get("content"))
    session = contract.session_id(body.get("sessionId"))
    made = _profile(request, account_id, namespace, profile, create=True).remember(content, session_id=session)
    return ok(made.to_wire())


@router.post(PROFILE + "/recall")
def recall(request: Request, account_id: str, namespace: str, profile: str,
           body: dict[str, Any] = Depends(json_object)) -> JSONResponse:
    query = contract.query(body.get("query"))
    found = _profile(request, account_id, namespace, profile, create=False).recall(
        query, thinking_level=body.get("thinkingLevel", "low"), response_length=body.get("responseLength", "medium"),
        reference_date=body.get("referenceDate"))
    return ok(found.to_wire())


@router.get(PROFILE + "/memories")
def list_memories(request: Request, account_id: str, namespace: str, profile: str) -> JSONResponse:
    per_page = _per_page(request, contract.MAX_MEMORY_PAGE)
    params = request.query_params
    page = _profile(request, account_id, namespace, profile, create=False).list(
        limit=per_page, cursor=params.get("cursor") or None, session_id=params.get("session_id"),
        type=params.get("type"))
    return ok([m.to_wire() for m in page.memories],
              result_info={"cursor": page.cursor or "", "per_page": per_page, "count": len(page.memories)})


@router.get(PROFILE + "/memories/{memory_id}")
def get_memory(request: Request, account_id: str, namespace: str, profile: str, memory_id: str) -> JSONResponse:
    return ok(_profile(request, account_id, namespace, profile, create=False).get(memory_id).to_wire())


@router.delete(PROFILE + "/memories/{memory_id}")
def delete_memory(request: Request, account_id: str, namespace: str, profile: str, memory_id: str) -> JSONResponse:
    return ok(_profile(request, account_id, namespace, profile, create=False).delete(memory_id).to_wire())


@router.post(PROFILE + "/summary")
def summary(request: Request, account_id: str, namespace: str, profile: str,
            body: dict[str, Any] = Depends(json_object)) -> JSONResponse:
    session = contract.session_id(body.get("sessionId"))
    found = _profile(request, account_id, namespace, profile, create=False)
    return ok({"summary": found.get_summary(session_id=session)})
