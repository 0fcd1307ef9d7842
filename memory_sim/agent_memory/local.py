"""Agent Memory on memory_sim's own memory: namespaces and profiles in D1 tables of their own (schema.py), each
profile an NPC of the memory system underneath, so its memories live in the same data folder, ledger and index
as the NPC memory (the inspector lists a profile as the NPC `<namespace>/<profile>`).

    service = AgentMemoryService(system)                 # a MemorySystem over an Env
    account = service.account()                          # the namespaces of an account ("local" by default)
    account.create_namespace("support-agent")
    profile = account.namespace("support-agent").get_profile("alice")
    profile.ingest([{"role": "user", "content": "I prefer concise answers."}])
    profile.recall("How should I answer?").answer

`ingest` extracts memories by word rules (extraction.py); a fact or an instruction supersedes the live one of its
topic key (the newer by its message's time wins; the older is kept, marked). `recall` asks the memory system's
hybrid recall for a pool of candidates (`thinkingLevel` widens it), keeps those that share a word with the query
(or, for a query naming a relative time, that happened then), and answers from them (answer.py).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from memory_sim.agent_memory import answer as answers
from memory_sim.agent_memory import extraction, schema, store, timeref
from memory_sim.agent_memory.summary import Entry, markdown
from memory_sim.agent_memory.voice import third_person
from memory_sim.bindings import agent_memory as contract
from memory_sim.bindings.agent_memory import (
    Candidate,
    ListResult,
    Memory,
    Message,
    Namespace,
    NamespacePage,
    RecallResult,
)
from memory_sim.errors import NotFound
from memory_sim.memory.models import ShortTermMemory
from memory_sim.memory.system import MemorySystem

POOL = {"low": 10, "medium": 25, "high": 50}  # candidates asked of the memory system by thinkingLevel
IMPORTANCE = {"fact": 0.8, "event": 0.8, "instruction": 0.8, "task": 0.5}  # tasks stay in D1, unembedded
OTHER_SESSION_TASK = 0.5  # a task of a session that is not the latest weighs half (tasks are session-scoped)
# A candidate sharing no word with the query is kept at this cosine (MiniLM) or above: unrelated questions scored
# at most 0.29 on the development queries, paraphrases 0.42-0.55.
RELEVANT_COSINE = 0.35
DEFAULT_ACCOUNT = "local"
_STOP = frozenset(
    "a an the and or but of to in on at for with by from is are was were be been it its this that i me my we our "
    "you your he she they them their what which who whom when where why how do does did has have had can could "
    "should would will about user users tell know any some all there here as so not no".split()
)


def _now() -> datetime:
    return datetime.now(UTC)


def _digest(*parts: str, size: int = 10) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=size).hexdigest()


def _ulid_like(*parts: str) -> str:
    """A 26-character id in Crockford-style base32, as Cloudflare's ids look, derived from `parts`."""
    raw = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=20).digest()
    return base64.b32encode(raw).decode("ascii")[:26]


def _stems(text: str) -> set[str]:
    found = set()
    for word in extraction.words(text):
        if word in _STOP or len(word) < 3:
            continue
        for ending in ("ing", "ed", "es", "s"):
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                word = word[: -len(ending)]
                break
        found.add(word)
    return found


def _to_memory(row: Mapping[str, Any], *, with_content: bool = True) -> Memory:
    return Memory(str(row["id"]), row["type"], str(row["summary"]), str(row["content"]) if with_content else None,
                  row["session_id"], contract.parse_time(row["created_at"]), contract.parse_time(row["updated_at"]))


def _cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"seq:{seq}".encode()).decode("ascii").rstrip("=")


def _after(cursor: str | None) -> int:
    """The seq a list cursor stops before; a cursor this service did not write is refused."""
    if cursor is None:
        return 2**62
    try:
        kind, _, value = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii").partition(":")
        if kind == "seq" and value.isdigit():
            return int(value)
    except (ValueError, UnicodeDecodeError):
        pass
    raise contract.AgentMemoryInputError(contract.CODE_INVALID_REQUEST, "Invalid request: cursor is not one a list "
                                         "returned")


def profile_npc_id(namespace: str, profile: str) -> str:
    """The NPC id a profile's memories carry in the memory system: `<namespace>/<profile>`, within its 64 bytes."""
    plain = f"{namespace}/{profile}"
    return plain if len(plain) <= 64 else f"{namespace[:24]}/{profile[:24]}~{_digest(namespace, profile, size=6)}"


@dataclass
class AgentMemoryService:
    """Agent Memory over one `MemorySystem`. `now` gives the calendar time (a message without a timestamp is
    stamped with it; recall's default reference date); `epoch` is the date of world day 0; `answerer` writes
    recall's answer (`answer.ChatAnswerer` for a chat model; extractive by default)."""

    system: MemorySystem
    now: Callable[[], datetime] = _now
    epoch: datetime = timeref.DEFAULT_EPOCH
    answerer: answers.Answerer | None = None

    def __post_init__(self) -> None:
        schema.migrate(self.system.env.DB)
        self.lock = threading.RLock()  # the REST server calls from several threads; one call at a time
        self.answerer = self.answerer or answers.ExtractiveAnswerer()

    @staticmethod
    def over(env: Any, *, now: Callable[[], datetime] = _now, epoch: datetime = timeref.DEFAULT_EPOCH,
             answerer: answers.Answerer | None = None) -> AgentMemoryService:
        """A service over an Env, with a memory system whose clock is `now` counted from `epoch`."""
        system = MemorySystem(env, clock=lambda: timeref.world_seconds(now(), epoch))
        return AgentMemoryService(system, now=now, epoch=epoch, answerer=answerer)

    @property
    def db(self) -> Any:
        return self.system.env.DB

    def account(self, account_id: str = DEFAULT_ACCOUNT) -> LocalAccount:
        return LocalAccount(self, account_id)

    def stamp(self) -> str:
        return contract.iso(self.now())


@dataclass
class LocalAccount:
    """An account's namespaces (`AgentMemoryAccount`)."""

    service: AgentMemoryService
    account_id: str

    def create_namespace(self, name: str) -> Namespace:
        name = contract.namespace_name(name)
        with self.service.lock:
            db, at = self.service.db, self.service.stamp()
            if store.namespace(db, self.account_id, name) is not None:
                raise contract.namespace_exists()
            store.insert_namespace(db, self.account_id, name, _ulid_like(self.account_id, name, at), at)
            return self.get_namespace(name)

    def list_namespaces(self, *, per_page: int = contract.DEFAULT_PAGE_SIZE,
                        cursor: str | None = None) -> NamespacePage:
        per_page = contract.page_size("per_page", per_page, contract.MAX_NAMESPACE_PAGE)
        after = ""
        if cursor:
            try:
                after = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                raise contract.AgentMemoryInputError(contract.CODE_INVALID_REQUEST,
                                                     "Invalid request: cursor is not one a list returned") from None
        with self.service.lock:
            rows = store.namespaces(self.service.db, self.account_id, after, per_page + 1)
        shown = [_namespace(r) for r in rows[:per_page]]
        more = len(rows) > per_page
        next_cursor = base64.urlsafe_b64encode(shown[-1].name.encode()).decode().rstrip("=") if more else None
        return NamespacePage(tuple(shown), next_cursor)

    def get_namespace(self, name: str) -> Namespace:
        return _namespace(self._row(name))

    def delete_namespace(self, name: str) -> None:
        with self.service.lock:
            row = self._row(name)
            for profile in store.profiles(self.service.db, str(row["id"])):
                _drop_profile(self.service, profile)
            store.delete_namespace(self.service.db, str(row["id"]))

    def namespace(self, name: str) -> LocalNamespace:
        """The namespace as a Worker's binding sees it; it must exist when a profile is asked of it."""
        return LocalNamespace(self, contract.namespace_name(name))

    def _row(self, name: str) -> dict[str, Any]:
        name = contract.namespace_name(name)
        with self.service.lock:
            row = store.namespace(self.service.db, self.account_id, name)
        if row is None:
            raise contract.namespace_not_found()
        return row


def _namespace(row: Mapping[str, Any]) -> Namespace:
    return Namespace(str(row["id"]), str(row["name"]), contract.parse_time(row["created_at"]),
                     contract.parse_time(row["updated_at"]))


def _drop_profile(service: AgentMemoryService, row: Mapping[str, Any]) -> None:
    service.system.forget_npc(str(row["npc_id"]))
    store.delete_profile(service.db, str(row["id"]))


@dataclass
class LocalNamespace:
    """One namespace (`AgentMemoryNamespace`, what `env.MEMORY` is)."""

    account: LocalAccount
    name: str

    @property
    def service(self) -> AgentMemoryService:
        return self.account.service

    def get_profile(self, name: str) -> LocalProfile:
        """The profile, created when it does not exist."""
        name = contract.profile_name(name)
        with self.service.lock:
            found = self.existing_profile(name, create=True)
        assert found is not None
        return found

    def existing_profile(self, name: str, *, create: bool = False) -> LocalProfile | None:
        """The profile, or None when it was never created (REST creates a profile on its first write)."""
        name = contract.profile_name(name)
        with self.service.lock:
            namespace_id = str(self.account._row(self.name)["id"])
            row = store.profile(self.service.db, namespace_id, name)
            if row is None and create:
                npc_id = profile_npc_id(self.name, name)
                at = self.service.stamp()
                store.insert_profile(self.service.db, namespace_id, name, _ulid_like(namespace_id, name, at), npc_id,
                                     at)
                self.service.system.register_npc(npc_id, name, role=f"Agent Memory profile in {self.name}")
                row = store.profile(self.service.db, namespace_id, name)
        return None if row is None else LocalProfile(self.service, str(row["id"]), str(row["npc_id"]))

    def delete_profile(self, name: str) -> None:
        name = contract.profile_name(name)
        with self.service.lock:
            namespace_id = str(self.account._row(self.name)["id"])
            row = store.profile(self.service.db, namespace_id, name)
            if row is None:
                raise contract.profile_not_found()
            _drop_profile(self.service, row)


@dataclass
class LocalProfile:
    """One profile (`AgentMemoryProfile`)."""

    service: AgentMemoryService
    id: str
    npc_id: str

    @property
    def db(self) -> Any:
        return self.service.db

    # --- writing ---------------------------------------------------------------------------------------------------

    def ingest(self, messages: Iterable[Message | Mapping[str, Any]], *, session_id: str | None = None) -> None:
        checked = contract.messages(messages)
        session = contract.session_id(session_id) or "s-" + _digest(
            *(f"{m.role}\x1e{m.content}" for m in checked), size=12)
        with self.service.lock:
            now = self.service.now()
            rows: list[dict[str, Any]] = [
                {"id": "m-" + _digest(self.id, session, m.role, m.content, size=12), "profile_id": self.id,
                 "session_id": session, "role": m.role, "content": m.content,
                 "created_at": contract.iso(m.timestamp or now), "position": i} for i, m in enumerate(checked)]
            rows = list({r["id"]: r for r in rows}.values())
            new = [r for r in rows if r["id"] not in store.existing_messages(self.db, [r["id"] for r in rows])]
            if not new:
                return
            self.db.batch([store.insert_message(self.db, r) for r in new] + [store.touch_session(
                self.db, self.id, session, min(r["created_at"] for r in new), max(r["created_at"] for r in new))])
            found = [(r, item) for r in new if r["content"].strip()
                     for item in extraction.extract(r["content"], r["role"])]
            self._store([(item.type, item.summary, r["content"], item.topic_key, session, r["created_at"], [r["id"]])
                         for r, item in found])

    def remember(self, content: str, *, session_id: str | None = None) -> Memory:
        content = contract.content(content)
        session = contract.session_id(session_id)
        first = extraction.sentences(content)[0] if extraction.sentences(content) else content.strip()
        kind = extraction.classify(first, "user") or "fact"
        with self.service.lock:
            at = self.service.stamp()
            if session is not None:
                self.db.batch([store.touch_session(self.db, self.id, session, at, at)])
            summary = third_person(first[:1000], "user")
            made = self._store([(kind, summary, content, extraction.topic_key(first, kind), session, at, [])],
                               explicit=True)
            return self.get(made[0])

    def _store(self, items: Sequence[tuple[str, str, str, str | None, str | None, str, list[str]]], *,
               explicit: bool = False) -> list[str]:
        """Stores memories (type, summary, content, topic key, session, time, source message ids) not stored yet,
        links their messages, supersedes by topic key, and remembers each in the memory system; returns the ids."""
        db, seq, at = self.db, store.next_seq(self.db, self.id), self.service.stamp()
        ids: list[str] = []
        rows: dict[str, dict[str, Any]] = {}
        statements = []
        for kind, summary, content, key, session, created, messages in items:
            memory_id = "am-" + _digest(self.id, session or "", kind, summary, "remember" if explicit else "ingest")
            ids.append(memory_id)
            statements += [store.link(db, memory_id, m) for m in messages]
            if memory_id in rows or store.memory(db, self.id, memory_id) is not None:
                continue
            happened = created if kind != "event" else contract.iso(timeref.anchored(
                summary, contract.parse_time(created)))
            rows[memory_id] = {"id": memory_id, "profile_id": self.id, "seq": seq, "type": kind, "summary": summary,
                               "content": content, "topic_key": key, "session_id": session, "created_at": created,
                               "updated_at": at, "superseded_by": None, "happened_at": happened}
            seq += 1
        db.batch([store.insert_memory(db, r) for r in rows.values()] + statements)
        self._supersede(list(rows.values()), at)
        self.service.system.remember_many([ShortTermMemory(
            self.npc_id, r["summary"], IMPORTANCE[r["type"]], timeref.world_time(contract.parse_time(r["happened_at"]),
                                                                                  self.service.epoch),
            id=r["id"], state_key=r["topic_key"]) for r in rows.values()])
        return ids

    def _supersede(self, made: Sequence[Mapping[str, Any]], at: str) -> None:
        """Per topic key of facts and instructions, the newest memory (by time, then by order) stays live; the
        others are marked superseded by it and kept."""
        statements = []
        for row in made:
            if row["type"] not in ("fact", "instruction") or not row["topic_key"]:
                continue
            live = store.live_with_topic(self.db, self.id, row["type"], row["topic_key"])
            if len(live) < 2:
                continue
            newest = max(live, key=lambda r: (r["created_at"], int(r["seq"])))
            statements += [store.supersede(self.db, str(r["id"]), str(newest["id"]), at) for r in live
                           if r["id"] != newest["id"]]
            self.db.batch(statements)
            statements = []

    # --- reading ---------------------------------------------------------------------------------------------------

    def recall(self, query: str, *, thinking_level: str = "low", response_length: str = "medium",
               reference_date: datetime | date | str | None = None) -> RecallResult:
        query = contract.query(query)
        level = contract.one_of("thinkingLevel", thinking_level, contract.THINKING_LEVELS)
        length = contract.one_of("responseLength", response_length, contract.RESPONSE_LENGTHS)
        with self.service.lock:
            reference = self.service.now() if reference_date is None else contract.moment(reference_date)
            window = timeref.relative_window(query, reference)
            at = timeref.world_time(reference, self.service.epoch)
            found = self.service.system.recall(self.npc_id, query, top_k=POOL[level], include_recent=True, now=at)
            similar = {r.id for r in self.service.system.recall(self.npc_id, query, top_k=POOL[level], mode="vector",
                                                                 now=at) if r.score >= RELEVANT_COSINE}
            # a day's summary that consolidation made of a profile's memories stands for the memories it holds
            pairs = list(dict.fromkeys((i, r.score) for r in found for i in (r.id, *r.sources)))
            rows = store.memories_by_id(self.db, self.id, [i for i, _ in pairs])
            best: dict[str, float] = {}
            for memory_id, score in pairs:
                if memory_id in rows:
                    best[memory_id] = max(score, best.get(memory_id, score))
            similar |= {i for r in found if r.id in similar for i in r.sources}
            scored = self._relevant(query, [(rows[i], s) for i, s in best.items()], similar, window)
            latest = store.latest_session(self.db, self.id)
        def weight(row: Mapping[str, Any]) -> float:
            return OTHER_SESSION_TASK if row["type"] == "task" and row["session_id"] != latest else 1.0

        ranked = sorted(scored, key=lambda pair: (-pair[1] * weight(pair[0]), pair[0]["id"]))
        candidates = tuple(Candidate(str(r["id"]), str(r["summary"]), r["session_id"], round(min(1.0, s), 4))
                           for r, s in ranked)
        evidence = [answers.Evidence(str(r["summary"]), str(r["type"]), contract.parse_time(r["happened_at"]))
                    for r, _ in ranked]
        assert self.service.answerer is not None
        answer = self.service.answerer.answer(query, evidence, length, reference) if evidence else ""
        return RecallResult(len(candidates), answer, candidates)

    def _relevant(self, query: str, found: list[tuple[dict[str, Any], float]], similar: set[str],
                  window: timeref.Window | None) -> list[tuple[dict[str, Any], float]]:
        """The live candidates that answer the query: sharing a word with it, or close to it in meaning (`similar`:
        cosine at least RELEVANT_COSINE); for a query naming a relative time, the ones that happened then, and the
        window's events besides. Hybrid recall always fills its top k; this is what lets recall answer nothing."""
        asked = _stems(query)
        kept = [(r, s) for r, s in found if r["superseded_by"] is None
                and (r["id"] in similar or asked & _stems(str(r["summary"])))]
        if window is None:
            return kept
        start, end = contract.iso(window[0]), contract.iso(window[1])
        inside = [(r, s) for r, s in kept if start <= str(r["happened_at"]) < end]
        seen = {str(r["id"]) for r, _ in inside}
        return inside + [(r, 0.5) for r in store.events_between(self.db, self.id, start, end) if r["id"] not in seen]

    def list(self, *, limit: int = contract.DEFAULT_PAGE_SIZE, cursor: str | None = None,
             session_id: str | None = None, type: str | None = None) -> ListResult:
        limit = contract.page_size("limit", limit, contract.MAX_MEMORY_PAGE)
        session = contract.session_id(session_id)
        kind = None if type is None else contract.one_of("type", type, contract.MEMORY_KINDS)
        with self.service.lock:
            rows = store.page(self.db, self.id, _after(cursor), limit + 1, session, kind)
        shown = rows[:limit]
        more = len(rows) > limit
        return ListResult(tuple(_to_memory(r, with_content=False) for r in shown),
                          _cursor(int(shown[-1]["seq"])) if more else None)

    def get(self, memory_id: str) -> Memory:
        if not isinstance(memory_id, str) or not memory_id:
            raise contract.memory_not_found()
        with self.service.lock:
            row = store.memory(self.db, self.id, memory_id)
        if row is None:
            raise contract.memory_not_found()
        return _to_memory(row)

    # --- deleting --------------------------------------------------------------------------------------------------

    def delete(self, memory_id: str) -> Memory:
        """Deletes the memory and the messages it came from; returns it as it was."""
        with self.service.lock:
            gone = self.get(memory_id)
            self._forget([gone.id])
            store.delete_memories(self.db, self.id, [gone.id], store.source_messages(self.db, gone.id))
            return gone

    def delete_session(self, session_id: str) -> None:
        session = contract.session_id(session_id, required=True)
        assert session is not None
        with self.service.lock:
            ids = store.session_memories(self.db, self.id, session)
            self._forget(ids)
            store.delete_memories(self.db, self.id, ids, [], session_id=session)

    def _forget(self, ids: Sequence[str]) -> None:
        for memory_id in ids:
            with contextlib.suppress(NotFound):  # never reached the memory system (a crash between two writes)
                self.service.system.forget([memory_id], reason="deleted through Agent Memory")

    def get_summary(self, *, session_id: str | None = None) -> str:
        session = contract.session_id(session_id)
        with self.service.lock:
            rows = store.all_memories(self.db, self.id)
            chosen = session or store.latest_session(self.db, self.id)
        entries = [Entry(str(r["type"]), str(r["summary"]), r["session_id"], contract.parse_time(r["happened_at"]),
                         r["superseded_by"] is not None) for r in rows]
        return markdown(entries, chosen, self.service.now())


def _keeps_the_contract(account: LocalAccount) -> contract.AgentMemoryAccount:
    """mypy checks here that the local classes have the contract's methods and signatures."""
    return account
