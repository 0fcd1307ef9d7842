"""Agent Memory over Cloudflare's REST API (`/accounts/{id}/agent-memory/...`), with the same Python calls as the
local service (memory_sim/bindings/agent_memory.py): pointed at api.cloudflare.com it uses the managed service,
pointed at `memory-sim serve` the local one. Input is checked here by the same rules before anything is sent;
the service's answers come back as the contract's values, its errors as `AgentMemoryError`s with its code,
status and words.

REST creates a profile on its first write, so `get_profile` sends nothing; a read of a profile never written to
is the service's 404 "Profile not found".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import quote

from memory_sim.bindings import agent_memory as contract
from memory_sim.bindings.agent_memory import ListResult, Memory, Message, Namespace, NamespacePage, RecallResult
from memory_sim.cloudflare.client import ApiFailure, CloudflareClient


def _error(failure: ApiFailure) -> Exception:
    return contract.error_from_wire(failure.status, failure.code, failure.message)


@dataclass
class CloudflareAgentMemoryAccount:
    """An account's Agent Memory namespaces over REST (`AgentMemoryAccount`)."""

    client: CloudflareClient

    @property
    def base(self) -> str:
        return f"/accounts/{self.client.account_id}/agent-memory/namespaces"

    def send(self, method: str, path: str, body: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        """The envelope's whole answer (result and result_info) of one request, errors mapped."""
        query = {k: v for k, v in (params or {}).items() if v is not None}

        def request(sdk: Any) -> Any:
            if method == "GET":
                return sdk.get(path, cast_to=object, options={"params": query})
            if method == "DELETE":
                return sdk.delete(path, cast_to=object)
            return sdk.post(path, body=body, cast_to=object)

        return self.client.call(request, _error)

    def create_namespace(self, name: str) -> Namespace:
        answer = self.send("POST", self.base, {"name": contract.namespace_name(name)})
        return Namespace.from_wire(answer["result"])

    def list_namespaces(self, *, per_page: int = contract.DEFAULT_PAGE_SIZE,
                        cursor: str | None = None) -> NamespacePage:
        per_page = contract.page_size("per_page", per_page, contract.MAX_NAMESPACE_PAGE)
        answer = self.send("GET", self.base, params={"per_page": per_page, "cursor": cursor})
        info = answer.get("result_info") or {}
        return NamespacePage(tuple(Namespace.from_wire(n) for n in answer["result"] or []),
                             info.get("cursor") or None)

    def get_namespace(self, name: str) -> Namespace:
        return Namespace.from_wire(self.send("GET", f"{self.base}/{contract.namespace_name(name)}")["result"])

    def delete_namespace(self, name: str) -> None:
        self.send("DELETE", f"{self.base}/{contract.namespace_name(name)}")

    def namespace(self, name: str) -> CloudflareAgentMemoryNamespace:
        return CloudflareAgentMemoryNamespace(self, contract.namespace_name(name))


@dataclass
class CloudflareAgentMemoryNamespace:
    account: CloudflareAgentMemoryAccount
    name: str

    def get_profile(self, name: str) -> CloudflareAgentMemoryProfile:
        name = contract.profile_name(name)
        return CloudflareAgentMemoryProfile(self.account, f"{self.account.base}/{self.name}/profiles/{name}")

    def delete_profile(self, name: str) -> None:
        self.account.send("DELETE", f"{self.account.base}/{self.name}/profiles/{contract.profile_name(name)}")


def _wire_message(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.timestamp is not None:
        wire["timestamp"] = contract.iso(message.timestamp)
    return wire


@dataclass
class CloudflareAgentMemoryProfile:
    account: CloudflareAgentMemoryAccount
    path: str

    def ingest(self, messages: Iterable[Message | Mapping[str, Any]], *, session_id: str | None = None) -> None:
        body: dict[str, Any] = {"messages": [_wire_message(m) for m in contract.messages(messages)]}
        if contract.session_id(session_id) is not None:
            body["sessionId"] = session_id
        self.account.send("POST", f"{self.path}/ingest", body)

    def remember(self, content: str, *, session_id: str | None = None) -> Memory:
        body: dict[str, Any] = {"content": contract.content(content)}
        if contract.session_id(session_id) is not None:
            body["sessionId"] = session_id
        return Memory.from_wire(self.account.send("POST", f"{self.path}/remember", body)["result"])

    def recall(self, query: str, *, thinking_level: str = "low", response_length: str = "medium",
               reference_date: datetime | date | str | None = None) -> RecallResult:
        body: dict[str, Any] = {
            "query": contract.query(query),
            "thinkingLevel": contract.one_of("thinkingLevel", thinking_level, contract.THINKING_LEVELS),
            "responseLength": contract.one_of("responseLength", response_length, contract.RESPONSE_LENGTHS),
        }
        if reference_date is not None:
            body["referenceDate"] = (reference_date if isinstance(reference_date, str)
                                     else contract.iso(contract.moment(reference_date)))
        return RecallResult.from_wire(self.account.send("POST", f"{self.path}/recall", body)["result"])

    def list(self, *, limit: int = contract.DEFAULT_PAGE_SIZE, cursor: str | None = None,
             session_id: str | None = None, type: str | None = None) -> ListResult:
        limit = contract.page_size("limit", limit, contract.MAX_MEMORY_PAGE)
        kind = None if type is None else contract.one_of("type", type, contract.MEMORY_KINDS)
        answer = self.account.send("GET", f"{self.path}/memories", params={
            "per_page": limit, "cursor": cursor, "session_id": contract.session_id(session_id), "type": kind})
        info = answer.get("result_info") or {}
        return ListResult(tuple(Memory.from_wire(m) for m in answer["result"] or []), info.get("cursor") or None)

    def get(self, memory_id: str) -> Memory:
        return Memory.from_wire(self.account.send("GET", f"{self.path}/memories/{quote(memory_id, safe='')}")["result"])

    def delete(self, memory_id: str) -> Memory:
        answer = self.account.send("DELETE", f"{self.path}/memories/{quote(memory_id, safe='')}")
        return Memory.from_wire(answer["result"])

    def delete_session(self, session_id: str) -> None:
        session = contract.session_id(session_id, required=True)
        assert session is not None
        self.account.send("DELETE", f"{self.path}/sessions/{quote(session, safe='')}")

    def get_summary(self, *, session_id: str | None = None) -> str:
        body = {} if session_id is None else {"sessionId": contract.session_id(session_id)}
        return str(self.account.send("POST", f"{self.path}/summary", body)["result"]["summary"])


def _keeps_the_contract(account: CloudflareAgentMemoryAccount) -> contract.AgentMemoryAccount:
    """mypy checks here that the REST classes have the contract's methods and signatures."""
    return account
