"""Cloudflare Agent Memory's contract, shaped like its Workers binding (`env.MEMORY`): the values, the limits, the
errors and the rules that refuse bad input, shared by the local implementation (memory_sim/agent_memory/), the REST
routes (memory_sim/server/agent_memory_routes.py) and the Cloudflare adapter (memory_sim/cloudflare/agent_memory.py).
Where each rule comes from, and where Cloudflare's pages disagree: docs/agent-memory.md.

    AgentMemoryAccount      namespaces: create, list, get, delete; `namespace(name)` is the binding
    AgentMemoryNamespace    get_profile (creates), delete_profile
    AgentMemoryProfile      ingest, remember, recall, list, get, delete, delete_session, get_summary
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal, Protocol, get_args

from memory_sim.errors import InvalidInput, MemorySimError

MemoryKind = Literal["fact", "event", "instruction", "task"]
Role = Literal["system", "user", "assistant"]
ThinkingLevel = Literal["low", "medium", "high"]
ResponseLength = Literal["short", "medium", "long"]
MEMORY_KINDS: tuple[str, ...] = get_args(MemoryKind)
ROLES: tuple[str, ...] = get_args(Role)
THINKING_LEVELS: tuple[str, ...] = get_args(ThinkingLevel)
RESPONSE_LENGTHS: tuple[str, ...] = get_args(ResponseLength)

# --- limits (platform/limits.mdx, api/workers-api.mdx) ---------------------------------------------------------------
MAX_MESSAGES_PER_INGEST = 500
MAX_MESSAGE_BYTES = 32_768
MAX_SESSION_ID_CHARS = 64
MAX_QUERY_BYTES = 1_024
MAX_PROFILE_NAME_CHARS = 32  # limits.mdx and profiles-and-namespaces.mdx; workers-api.mdx says 100
MAX_NAMESPACE_NAME_CHARS = 32
DEFAULT_PAGE_SIZE = 20
MAX_NAMESPACE_PAGE = 1_000  # namespaces.mdx, limits.mdx
MAX_MEMORY_PAGE = 500  # workers-api.mdx's list(); limits.mdx says 1,000 for every list: 500 holds under both
MAX_CONTENT_BYTES = MAX_MESSAGE_BYTES  # remember()'s content: no limit stated; a message's is used
_NAME = re.compile(r"^[a-z0-9-]+$")

# --- error codes: 10008 is Cloudflare's (http-api.mdx); the others are this implementation's (docs/agent-memory.md)
CODE_AUTH = 10000
CODE_INVALID_NAMESPACE = 10021
CODE_INVALID_PROFILE = 10022
CODE_TOO_MANY_MESSAGES = 10023
CODE_INVALID_MESSAGE = 10024
CODE_INVALID_SESSION = 10025
CODE_INVALID_QUERY = 10026
CODE_INVALID_REQUEST = 10027
CODE_NAMESPACE_EXISTS = 10008
CODE_NAMESPACE_NOT_FOUND = 10029
CODE_PROFILE_NOT_FOUND = 10030
CODE_MEMORY_NOT_FOUND = 10031
CODE_UNAVAILABLE = 10032


class AgentMemoryError(MemorySimError):
    """An Agent Memory call failed: `code` and `status` as the REST API answers them, the message in its words."""

    def __init__(self, code: int, status: int, message: str) -> None:
        super().__init__(message)
        self.code, self.status, self.message = code, status, message


class AgentMemoryInputError(AgentMemoryError, InvalidInput):
    """The request broke a rule of the contract (400); nothing was stored."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, 400, message)


class AgentMemoryNotFound(AgentMemoryError, LookupError):
    """No such namespace, profile or memory (404)."""


class AgentMemoryConflict(AgentMemoryError):
    """A namespace name already taken (409)."""


class AgentMemoryUnavailable(AgentMemoryError):
    """The service (or the server standing in for it) failed or could not be reached; retry later (5xx)."""


def error_from_wire(status: int, code: int | None, message: str) -> AgentMemoryError:
    """The error a REST answer stands for: the class by status, Cloudflare's code and words kept."""
    code = code if code is not None else (CODE_INVALID_REQUEST if status < 500 else CODE_UNAVAILABLE)
    if status == 404:
        return AgentMemoryNotFound(code, 404, message)
    if status == 409:
        return AgentMemoryConflict(code, 409, message)
    if status == 400:
        return AgentMemoryInputError(code, message)
    if status >= 500 or status == 0:
        return AgentMemoryUnavailable(code, status, message)
    return AgentMemoryError(code, status, message)


def namespace_not_found() -> AgentMemoryNotFound:
    return AgentMemoryNotFound(CODE_NAMESPACE_NOT_FOUND, 404, "Namespace not found")


def profile_not_found() -> AgentMemoryNotFound:
    return AgentMemoryNotFound(CODE_PROFILE_NOT_FOUND, 404, "Profile not found")


def memory_not_found() -> AgentMemoryNotFound:
    return AgentMemoryNotFound(CODE_MEMORY_NOT_FOUND, 404, "Memory not found")


def namespace_exists() -> AgentMemoryConflict:
    return AgentMemoryConflict(CODE_NAMESPACE_EXISTS, 409, "Namespace name already exists")


# --- the values ----------------------------------------------------------------------------------------------------


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and a Z, as Cloudflare writes times ("2026-04-21T00:00:00.000Z")."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True, slots=True)
class Namespace:
    id: str
    name: str
    created_at: datetime
    updated_at: datetime

    def to_wire(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "created_at": iso(self.created_at),
                "updated_at": iso(self.updated_at)}

    @staticmethod
    def from_wire(body: Mapping[str, Any]) -> Namespace:
        return Namespace(str(body.get("id") or body.get("namespace_id")), str(body["name"]),
                         parse_time(body["created_at"]), parse_time(body["updated_at"]))


@dataclass(frozen=True, slots=True)
class NamespacePage:
    namespaces: tuple[Namespace, ...]
    cursor: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation; `timestamp` None means "when it is ingested"."""

    role: Role
    content: str
    timestamp: datetime | None = None


@dataclass(frozen=True, slots=True)
class Memory:
    """A stored memory (`AgentMemoryMemory`); `content` is None in a list entry."""

    id: str
    type: MemoryKind
    summary: str
    content: str | None
    session_id: str | None
    created_at: datetime
    updated_at: datetime

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"id": self.id, "type": self.type, "summary": self.summary}
        if self.content is not None:
            wire["content"] = self.content
        return {**wire, "sessionId": self.session_id, "createdAt": iso(self.created_at),
                "updatedAt": iso(self.updated_at)}

    @staticmethod
    def from_wire(body: Mapping[str, Any]) -> Memory:
        return Memory(str(body["id"]), body["type"], str(body["summary"]),
                      None if body.get("content") is None else str(body["content"]), body.get("sessionId"),
                      parse_time(body["createdAt"]), parse_time(body["updatedAt"]))


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    summary: str
    session_id: str | None
    score: float

    def to_wire(self) -> dict[str, Any]:
        return {"id": self.id, "summary": self.summary, "sessionId": self.session_id, "score": self.score}


@dataclass(frozen=True, slots=True)
class RecallResult:
    count: int
    answer: str
    candidates: tuple[Candidate, ...]

    def to_wire(self) -> dict[str, Any]:
        return {"count": self.count, "answer": self.answer, "candidates": [c.to_wire() for c in self.candidates]}

    @staticmethod
    def from_wire(body: Mapping[str, Any]) -> RecallResult:
        found = tuple(Candidate(str(c["id"]), str(c["summary"]), c.get("sessionId"), float(c["score"]))
                      for c in body.get("candidates") or [])
        return RecallResult(int(body.get("count", len(found))), str(body.get("answer", "")), found)


@dataclass(frozen=True, slots=True)
class ListResult:
    memories: tuple[Memory, ...]
    cursor: str | None = None


# --- the contract --------------------------------------------------------------------------------------------------


class AgentMemoryProfile(Protocol):
    """One profile: an isolated memory store (`AgentMemoryProfile`)."""

    def ingest(self, messages: Iterable[Message | Mapping[str, Any]], *, session_id: str | None = None) -> None: ...

    def remember(self, content: str, *, session_id: str | None = None) -> Memory: ...

    def recall(self, query: str, *, thinking_level: str = "low", response_length: str = "medium",
               reference_date: datetime | date | str | None = None) -> RecallResult: ...

    def list(self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None, session_id: str | None = None,
             type: str | None = None) -> ListResult: ...

    def get(self, memory_id: str) -> Memory: ...

    def delete(self, memory_id: str) -> Memory: ...

    def delete_session(self, session_id: str) -> None: ...

    def get_summary(self, *, session_id: str | None = None) -> str: ...


class AgentMemoryNamespace(Protocol):
    """What a Worker's `agent_memory` binding is: one namespace."""

    def get_profile(self, name: str) -> AgentMemoryProfile: ...

    def delete_profile(self, name: str) -> None: ...


class AgentMemoryAccount(Protocol):
    """An account's namespaces (the REST API's namespace management)."""

    def create_namespace(self, name: str) -> Namespace: ...

    def list_namespaces(self, *, per_page: int = DEFAULT_PAGE_SIZE, cursor: str | None = None) -> NamespacePage: ...

    def get_namespace(self, name: str) -> Namespace: ...

    def delete_namespace(self, name: str) -> None: ...

    def namespace(self, name: str) -> AgentMemoryNamespace: ...


# --- the rules (each returns what it checked, or raises AgentMemoryInputError) --------------------------------------


def _shown(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def namespace_name(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise AgentMemoryInputError(CODE_INVALID_NAMESPACE, f"Invalid namespace name: {_shown(value)}")
    if len(value) > MAX_NAMESPACE_NAME_CHARS:
        raise AgentMemoryInputError(CODE_INVALID_NAMESPACE, f"Invalid namespace name: at most "
                                    f"{MAX_NAMESPACE_NAME_CHARS} characters, got {len(value)}")
    if not _NAME.match(value) or value[0] == "-" or value[-1] == "-":
        raise AgentMemoryInputError(CODE_INVALID_NAMESPACE, "Invalid namespace name: lowercase letters, digits and "
                                    f"hyphens only ([a-z0-9-]), starting and ending with a letter or digit: "
                                    f"{_shown(value)}")
    return value


def profile_name(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise AgentMemoryInputError(CODE_INVALID_PROFILE, f"Invalid profile name: {_shown(value)}")
    if len(value) > MAX_PROFILE_NAME_CHARS:
        raise AgentMemoryInputError(CODE_INVALID_PROFILE, f"Invalid profile name: at most {MAX_PROFILE_NAME_CHARS} "
                                    f"characters, got {len(value)}")
    if not _NAME.match(value):
        raise AgentMemoryInputError(CODE_INVALID_PROFILE, "Invalid profile name: lowercase letters, digits and "
                                    f"hyphens only ([a-z0-9-]): {_shown(value)}")
    return value


def session_id(value: Any, *, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise AgentMemoryInputError(CODE_INVALID_SESSION,
                                    f"Invalid session ID: a non-empty string, got {_shown(value)}")
    if len(value) > MAX_SESSION_ID_CHARS:
        raise AgentMemoryInputError(CODE_INVALID_SESSION, f"Invalid session ID: at most {MAX_SESSION_ID_CHARS} "
                                    f"characters, got {len(value)}")
    return value


def _bytes(value: str) -> int:
    """Bytes in UTF-8; text that is not valid Unicode (a lone surrogate) is refused, as the REST API refuses it."""
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise AgentMemoryInputError(CODE_INVALID_REQUEST, "Invalid request: text is not valid Unicode") from None


def message(value: Any, position: int) -> Message:
    """One message of `ingest`: a `Message` or a mapping `{role, content, timestamp?}`."""
    role: Any
    content: Any
    stamp: Any
    if isinstance(value, Message):
        role, content, stamp = value.role, value.content, value.timestamp
    elif isinstance(value, Mapping):
        role, content, stamp = value.get("role"), value.get("content"), value.get("timestamp")
    else:
        raise AgentMemoryInputError(CODE_INVALID_MESSAGE, f"Invalid message at index {position}: an object with "
                                    f"role and content, got {type(value).__name__}")
    if role not in ROLES:
        raise AgentMemoryInputError(CODE_INVALID_MESSAGE, f"Invalid message at index {position}: role must be one "
                                    f"of {', '.join(ROLES)}, got {_shown(role)}")
    if not isinstance(content, str):
        raise AgentMemoryInputError(CODE_INVALID_MESSAGE, f"Invalid message at index {position}: content must be "
                                    f"a string, got {type(content).__name__}")
    if _bytes(content) > MAX_MESSAGE_BYTES:
        raise AgentMemoryInputError(CODE_INVALID_MESSAGE, f"Invalid message at index {position}: content is "
                                    f"{_bytes(content)} bytes; at most {MAX_MESSAGE_BYTES} (32 KB) are allowed")
    when = None if stamp is None else moment(stamp, f"message {position}'s timestamp")
    return Message(role, content, when)


def messages(values: Any) -> list[Message]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise AgentMemoryInputError(CODE_INVALID_MESSAGE, "Invalid messages: a list of messages is required")
    listed = list(values)
    if len(listed) > MAX_MESSAGES_PER_INGEST:
        raise AgentMemoryInputError(CODE_TOO_MANY_MESSAGES, f"Too many messages: {len(listed)}; at most "
                                    f"{MAX_MESSAGES_PER_INGEST} per ingest call")
    return [message(m, i) for i, m in enumerate(listed)]


def query(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AgentMemoryInputError(CODE_INVALID_QUERY, "Invalid query: a non-empty string is required")
    if _bytes(value) > MAX_QUERY_BYTES:
        raise AgentMemoryInputError(CODE_INVALID_QUERY, f"Invalid query: {_bytes(value)} bytes; at most "
                                    f"{MAX_QUERY_BYTES} (1 KB) are allowed")
    return value


def content(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AgentMemoryInputError(CODE_INVALID_REQUEST, "Invalid request: content must be a non-empty string")
    if _bytes(value) > MAX_CONTENT_BYTES:
        raise AgentMemoryInputError(CODE_INVALID_REQUEST, f"Invalid request: content is {_bytes(value)} bytes; at "
                                    f"most {MAX_CONTENT_BYTES} (32 KB) are allowed")
    return value


def one_of(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise AgentMemoryInputError(CODE_INVALID_REQUEST, f"Invalid request: {name} must be one of "
                                    f"{', '.join(allowed)}, got {_shown(value)}")
    return str(value)


def page_size(name: str, value: Any, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise AgentMemoryInputError(CODE_INVALID_REQUEST, f"Invalid request: {name} must be a whole number from 1 "
                                    f"to {most}, got {_shown(value)}")
    return value


def moment(value: Any, name: str = "referenceDate") -> datetime:
    """A `Date` as Python gives it (datetime, date) or an ISO 8601 string ("2026-04-21", "...T12:00:00Z"), in UTC."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str) and value.strip():
        try:
            return moment(datetime.fromisoformat(value.strip().replace("Z", "+00:00")), name)
        except ValueError:
            pass
    raise AgentMemoryInputError(CODE_INVALID_REQUEST, f"Invalid request: {name} must be a date or an ISO 8601 "
                                f"string (e.g. 2026-04-21), got {_shown(value)}")


def parse_time(value: Any) -> datetime:
    return moment(value, "time")
