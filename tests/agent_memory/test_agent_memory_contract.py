"""The Agent Memory contract (docs/agent-memory.md), run against every target of conftest.py: the local service,
the Cloudflare adapter over the local server's REST routes, and Cloudflare when credentials are given. Every
limit and error of the contract is here, at its edge and one past it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from tests.agent_memory.am_helpers import NOW

from memory_sim.bindings import agent_memory as contract
from memory_sim.bindings.agent_memory import AgentMemoryConflict, AgentMemoryInputError, AgentMemoryNotFound

CONVERSATION = [
    {"role": "user", "content": "I prefer dark mode in all applications."},
    {"role": "assistant", "content": "Noted your preference for dark mode."},
    {"role": "user", "content": "I prefer concise answers."},
    {"role": "user", "content": "We deployed the billing API to production yesterday.",
     "timestamp": "2026-04-20T10:00:00Z"},
    {"role": "user", "content": "I need to update the README after the refactor."},
]


def refused(code: int, call: Any, *args: Any, **kwargs: Any) -> AgentMemoryInputError:
    with pytest.raises(AgentMemoryInputError) as caught:
        call(*args, **kwargs)
    assert caught.value.code == code and caught.value.status == 400, caught.value
    return caught.value


# --- namespaces ----------------------------------------------------------------------------------------------------


def test_namespace_lifecycle(account: Any) -> None:
    name = "ms-life-" + str(id(account) % 10_000)
    made = account.create_namespace(name)
    assert made.name == name and made.id
    assert account.get_namespace(name) == made
    with pytest.raises(AgentMemoryConflict) as taken:
        account.create_namespace(name)
    assert (taken.value.code, taken.value.status, taken.value.message) == (10008, 409, "Namespace name already exists")
    account.delete_namespace(name)
    with pytest.raises(AgentMemoryNotFound) as gone:
        account.get_namespace(name)
    assert gone.value.status == 404 and gone.value.message == "Namespace not found"
    assert account.create_namespace(name).name == name  # the name can be used again
    account.delete_namespace(name)


@pytest.mark.parametrize("name", ["Support", "a_b", "-edge", "edge-", "x" * 33, "", "spaced name"])
def test_namespace_names_refused(account: Any, name: str) -> None:
    refused(contract.CODE_INVALID_NAMESPACE, account.create_namespace, name)


def test_namespace_name_at_its_limit(account: Any) -> None:
    name = "n" * 31 + "1"
    assert account.create_namespace(name).name == name
    account.delete_namespace(name)


def test_namespaces_page_by_cursor(account: Any) -> None:
    names = [f"ms-page-{i}" for i in range(3)]
    for name in names:
        account.create_namespace(name)
    try:
        seen, cursor = [], None
        while True:
            page = account.list_namespaces(per_page=2, cursor=cursor)
            assert len(page.namespaces) <= 2
            seen += [n.name for n in page.namespaces]
            cursor = page.cursor
            if cursor is None:
                break
        assert set(names) <= set(seen) and len(seen) == len(set(seen))
        refused(contract.CODE_INVALID_REQUEST, account.list_namespaces, per_page=0)
        refused(contract.CODE_INVALID_REQUEST, account.list_namespaces, per_page=1001)
        assert account.list_namespaces(per_page=1000).cursor is None
    finally:
        for name in names:
            account.delete_namespace(name)


def test_unknown_namespace(account: Any) -> None:
    with pytest.raises(AgentMemoryNotFound) as caught:
        account.namespace("ms-never-made").get_profile("alice").ingest(CONVERSATION)
    assert caught.value.status == 404
    with pytest.raises(AgentMemoryNotFound):
        account.delete_namespace("ms-never-made")


# --- profiles ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Alice", "a" * 33, "bob_smith", ""])
def test_profile_names_refused(account: Any, namespace_name: str, name: str) -> None:
    refused(contract.CODE_INVALID_PROFILE, account.namespace(namespace_name).get_profile, name)


def test_profile_name_at_its_limit(account: Any, namespace_name: str) -> None:
    profile = account.namespace(namespace_name).get_profile("p" * 32)
    assert profile.remember("I like tea.").summary


@pytest.mark.usefixtures("memory_sims_wording")
def test_profiles_are_isolated_and_deleted(account: Any, namespace_name: str) -> None:
    space = account.namespace(namespace_name)
    alice, bob = space.get_profile("alice"), space.get_profile("bob")
    alice.remember("I live in Lisbon.")
    bob.remember("I live in Oslo.")
    assert [m.summary for m in bob.list().memories] == ["The user lives in Oslo."]
    assert "Oslo" not in alice.recall("Where do I live?").answer
    space.delete_profile("bob")
    with pytest.raises(AgentMemoryNotFound):
        space.delete_profile("bob")  # deleted already
    again = space.get_profile("bob")
    again.remember("I drink coffee.")
    assert [m.summary for m in again.list().memories] == ["The user drinks coffee."]


# --- ingest --------------------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("memory_sims_wording")
def test_ingest_extracts_each_kind(profile: Any) -> None:
    assert profile.ingest(CONVERSATION, session_id="chat-1") is None
    kinds = {m.summary: m.type for m in profile.list().memories}
    assert kinds == {
        "The user prefers dark mode in all applications.": "fact",
        "The user prefers concise answers.": "instruction",
        "We deployed the billing API to production yesterday.": "event",
        "The user needs to update the README after the refactor.": "task",
    }
    assert all(m.session_id == "chat-1" and m.content is None for m in profile.list().memories)


def test_ingest_twice_adds_nothing(profile: Any) -> None:
    profile.ingest(CONVERSATION)
    first = profile.list(limit=100).memories
    profile.ingest(CONVERSATION)
    profile.ingest([dict(m, timestamp="2026-01-01T00:00:00Z") for m in CONVERSATION])  # timestamps: same messages
    assert profile.list(limit=100).memories == first
    assert len({m.session_id for m in first}) == 1  # the session derived from the messages, the same each time


def test_ingest_limits(profile: Any) -> None:
    many = [{"role": "user", "content": f"note {i}"} for i in range(501)]
    refused(contract.CODE_TOO_MANY_MESSAGES, profile.ingest, many)
    profile.ingest(many[:500], session_id="bulk")
    refused(contract.CODE_INVALID_MESSAGE, profile.ingest, [{"role": "user", "content": "é" * 16_384 + "x"}])
    profile.ingest([{"role": "user", "content": "é" * 16_384}], session_id="big")  # exactly 32,768 bytes
    refused(contract.CODE_INVALID_SESSION, profile.ingest, CONVERSATION, session_id="s" * 65)
    profile.ingest(CONVERSATION, session_id="s" * 64)
    refused(contract.CODE_INVALID_MESSAGE, profile.ingest, [{"role": "robot", "content": "hi"}])
    refused(contract.CODE_INVALID_MESSAGE, profile.ingest, [{"role": "user"}])
    refused(contract.CODE_INVALID_REQUEST, profile.ingest, [{"role": "user", "content": "x", "timestamp": "soon"}])
    refused(contract.CODE_INVALID_REQUEST, profile.ingest, [{"role": "user", "content": "bad \ud800 text"}])
    assert profile.list(session_id="bad").memories == ()


# --- remember, get, list -------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("memory_sims_wording")
def test_remember_and_get(profile: Any) -> None:
    made = profile.remember("Always answer in Portuguese.", session_id="chat-2")
    assert (made.type, made.summary, made.content, made.session_id) == (
        "instruction", "Always answer in Portuguese.", "Always answer in Portuguese.", "chat-2")
    assert profile.get(made.id) == made
    with pytest.raises(AgentMemoryNotFound) as caught:
        profile.get("no-such-memory")
    assert (caught.value.status, caught.value.message) == (404, "Memory not found")
    refused(contract.CODE_INVALID_REQUEST, profile.remember, "   ")
    refused(contract.CODE_INVALID_SESSION, profile.remember, "I like tea.", session_id="s" * 65)


@pytest.mark.usefixtures("memory_sims_wording")
def test_facts_supersede_by_topic_and_keep_the_old(profile: Any, clock: Any) -> None:
    old = profile.remember("I use VS Code as my editor.")
    clock.value = NOW + timedelta(hours=1)
    new = profile.remember("I use Vim as my editor.")
    assert {m.id for m in profile.list().memories} >= {old.id, new.id}  # the old version is kept
    found = profile.recall("Which editor do I use?")
    assert "Vim" in found.answer and "VS Code" not in found.answer
    assert old.id not in {c.id for c in found.candidates}


@pytest.mark.usefixtures("memory_sims_wording")
def test_list_pages_and_filters(profile: Any) -> None:
    profile.ingest(CONVERSATION, session_id="a")
    profile.remember("I have two cats.", session_id="b")
    everything = profile.list(limit=100).memories
    seen, cursor = [], None
    while True:
        page = profile.list(limit=2, cursor=cursor)
        seen += page.memories
        cursor = page.cursor
        if cursor is None:
            break
    assert [m.id for m in seen] == [m.id for m in everything] and len(everything) == 5
    assert {m.summary for m in profile.list(session_id="b").memories} == {"The user has two cats."}
    assert {m.type for m in profile.list(type="fact").memories} == {"fact"}
    assert len(profile.list(type="fact").memories) == 2
    refused(contract.CODE_INVALID_REQUEST, profile.list, limit=0)
    refused(contract.CODE_INVALID_REQUEST, profile.list, limit=501)
    refused(contract.CODE_INVALID_REQUEST, profile.list, type="opinion")
    refused(contract.CODE_INVALID_REQUEST, profile.list, cursor="not-a-cursor")
    assert profile.list(limit=500).cursor is None


# --- recall --------------------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("memory_sims_wording")
def test_recall_answers_from_memories(profile: Any) -> None:
    profile.ingest(CONVERSATION, session_id="chat-1")
    found = profile.recall("How should I answer this user?")
    assert found.count == len(found.candidates) >= 1
    assert found.candidates[0].summary == "The user prefers concise answers."
    assert "concise answers" in found.answer
    assert all(0 <= c.score <= 1 and c.session_id == "chat-1" for c in found.candidates)


def test_recall_with_nothing_matching_answers_empty(profile: Any) -> None:
    profile.ingest(CONVERSATION)
    found = profile.recall("What is the boiling point of mercury?")
    assert (found.answer, found.count, found.candidates) == ("", 0, ())


@pytest.mark.usefixtures("memory_sims_wording")
def test_recall_response_length(profile: Any) -> None:
    profile.ingest([{"role": "user", "content": f"I own a {c} bicycle."} for c in ("red", "blue", "green", "black")]
                   + [{"role": "user", "content": f"I painted my {c} bicycle last week."} for c in ("red", "blue")])
    short = profile.recall("Tell me about my bicycle", response_length="short").answer
    long = profile.recall("Tell me about my bicycle", response_length="long", thinking_level="high").answer
    assert short and short.count(".") == 1 and len(long) > len(short)


@pytest.mark.usefixtures("memory_sims_wording")
def test_recall_reference_date_anchors_relative_time(profile: Any) -> None:
    profile.ingest([{"role": "user", "content": "We shipped version 4.1 today.", "timestamp": "2026-03-02T09:00:00Z"},
                    {"role": "user", "content": "We shipped version 4.2 today.", "timestamp": "2026-03-09T09:00:00Z"}])
    early = profile.recall("What did we ship yesterday?", reference_date="2026-03-03")
    late = profile.recall("What did we ship yesterday?", reference_date="2026-03-10T08:00:00Z")
    assert "4.1" in early.answer and "4.2" not in early.answer
    assert "4.2" in late.answer and "4.1" not in late.answer


def test_recall_limits(profile: Any) -> None:
    profile.remember("I like tea.")
    refused(contract.CODE_INVALID_QUERY, profile.recall, "é" * 512 + "x")
    assert profile.recall("é" * 512).answer == ""  # exactly 1,024 bytes
    refused(contract.CODE_INVALID_QUERY, profile.recall, "")
    refused(contract.CODE_INVALID_REQUEST, profile.recall, "tea", thinking_level="extreme")
    refused(contract.CODE_INVALID_REQUEST, profile.recall, "tea", response_length="epic")
    refused(contract.CODE_INVALID_REQUEST, profile.recall, "tea", reference_date="last tuesday")


# --- deleting, summary ---------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("memory_sims_wording")
def test_delete_removes_the_memory_and_its_messages(profile: Any) -> None:
    profile.ingest(CONVERSATION, session_id="chat-1")
    task = next(m for m in profile.list().memories if m.type == "task")
    gone = profile.delete(task.id)
    assert gone.id == task.id and gone.content is not None
    with pytest.raises(AgentMemoryNotFound):
        profile.get(task.id)
    with pytest.raises(AgentMemoryNotFound):
        profile.delete(task.id)
    assert "README" not in profile.recall("What do I need to update?").answer
    # its message is gone too: ingesting the conversation again reads that message anew (and no other)
    profile.ingest(CONVERSATION, session_id="chat-1")
    summaries = [m.summary for m in profile.list().memories]
    assert summaries.count("The user needs to update the README after the refactor.") == 1 and len(summaries) == 4


@pytest.mark.usefixtures("memory_sims_wording")
def test_delete_session(profile: Any) -> None:
    profile.ingest(CONVERSATION, session_id="one")
    profile.remember("I have two cats.", session_id="two")
    assert profile.delete_session("one") is None
    assert [m.summary for m in profile.list().memories] == ["The user has two cats."]
    profile.delete_session("one")  # nothing left in it: no error
    profile.delete_session("never-used")
    refused(contract.CODE_INVALID_SESSION, profile.delete_session, "s" * 65)


@pytest.mark.usefixtures("memory_sims_wording")
def test_summary_sections(profile: Any) -> None:
    profile.ingest(CONVERSATION, session_id="chat-1")
    text = profile.get_summary()
    assert text.index("## Key Facts") < text.index("## Recent Events") < text.index("## Active Tasks")
    assert "- The user prefers dark mode in all applications." in text
    assert "## Instructions\n- The user prefers concise answers." in text
    assert "README" in text.split("## Active Tasks")[1]
    other = profile.get_summary(session_id="another")
    assert "## Active Tasks" not in other and "## Key Facts" in other
    refused(contract.CODE_INVALID_SESSION, profile.get_summary, session_id="s" * 65)


@pytest.mark.usefixtures("memory_sims_wording")
def test_thinking_level_widens_the_pool(profile: Any) -> None:
    profile.ingest([{"role": "user", "content": f"My bicycle number {i} is parked in shed {i}."} for i in range(30)])
    low = profile.recall("Where is my bicycle parked?", thinking_level="low")
    medium = profile.recall("Where is my bicycle parked?", thinking_level="medium")
    high = profile.recall("Where is my bicycle parked?", thinking_level="high")
    assert (low.count, medium.count, high.count) == (10, 25, 30)


@pytest.mark.usefixtures("memory_sims_wording")
def test_an_event_is_dated_by_the_day_its_words_name(profile: Any) -> None:
    profile.ingest([{"role": "user", "content": "We shipped version 5.0 yesterday.", "timestamp": "2026-03-03T09:00:00Z"}])
    assert "5.0" in profile.recall("What did we ship yesterday?", reference_date="2026-03-03").answer
    assert profile.recall("What did we ship yesterday?", reference_date="2026-03-04").answer == ""
    assert "(2026-03-02)" in profile.recall("version 5.0").answer
