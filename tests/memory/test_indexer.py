"""Every caller that indexes (remember, index_memory, retry_pending, consolidate's summaries, decay's re-embed,
reembed) goes through memory/writing/indexer.py, so each follows the same postpone rule and the same index-full rule.
The tables below run each rule over every caller, on the real in-memory bindings with faults injected."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from memory_faults import FlakyEmbedder, FlakyIndex

from memory_sim.check import check
from memory_sim.env import Env
from memory_sim.errors import EmbeddingUnavailable, VectorizeUnavailable
from memory_sim.memory.jobs.rebuild import reembed
from memory_sim.memory.ledger import store
from memory_sim.memory.models import MemoryConfig, ShortTermMemory, WorldTime, summary_id
from memory_sim.memory.scoring import retry_delay_s
from memory_sim.memory.system import MemorySystem
from memory_sim.memory.writing.indexing import vector_metadata
from memory_sim.sim.clock import SimClock

HOUR = 3600.0
CONFIG = MemoryConfig()  # believes the index holds 20M vectors: the full tables' index holds 3


@dataclass
class Village:
    system: MemorySystem
    embedder: FlakyEmbedder
    index: FlakyIndex
    clock: SimClock

    @property
    def db(self) -> Any:
        return self.system.env.DB


def village(clock: SimClock, max_vectors: int | None = None) -> Village:
    env = Env.in_memory(clock, dimensions=64, max_vectors=max_vectors)
    embedder, index = FlakyEmbedder(env.embedder), FlakyIndex(env.VECTORIZE)
    env.embedder, env.VECTORIZE = embedder, index  # type: ignore[assignment]
    return Village(MemorySystem(env, clock=clock, config=CONFIG), embedder, index, clock)


def mem(text: str, importance: float = 0.9, day: int = 5, hour: int = 10) -> ShortTermMemory:
    return ShortTermMemory("margaret", text, importance, WorldTime(day, hour))


TARGET = mem("The blacksmith mended my oven door for nothing.")


def outbox_row(v: Village, memory_id: str) -> dict[str, Any] | None:
    sql = "SELECT attempts, next_attempt_at, last_error FROM embedding_outbox WHERE memory_id = ?"
    return v.db.prepare(sql).bind(memory_id).first()


def state(v: Village, memory_id: str) -> str:
    return store.memories_by_ids(v.db, [memory_id])[memory_id].index_state


def remembered_while_down(v: Village, memory: ShortTermMemory) -> None:
    v.embedder.down = True
    assert v.system.remember(memory) is False
    v.embedder.down = False


# --- the callers: each prepares one memory for it to index, and indexes it ----------------------------------


@dataclass(frozen=True)
class Caller:
    name: str
    prepare: Callable[[Village], str]  # returns the id of the memory the caller will index
    act: Callable[[Village], object]
    raises_on_outage: bool = False  # reembed stops at an outage and says so (after postponing its batch)

    def __str__(self) -> str:
        return self.name


def _remember(v: Village) -> str:
    return TARGET.id


def _index_memory(v: Village) -> str:
    assert v.system.remember(mem(TARGET.content, importance=0.3)) is False  # D1 only
    return mem(TARGET.content, importance=0.3).id


def _retry(v: Village) -> str:
    remembered_while_down(v, TARGET)
    v.clock.seconds += retry_delay_s(1, CONFIG)  # due
    return TARGET.id


def _consolidate(v: Village) -> str:
    for hour, text in ((9, "I baked rye bread for the fair."), (15, "I sold every rye bread by noon.")):  # one topic
        v.system.remember(mem(text, importance=0.4, day=1, hour=hour))  # D1 only: the summary is all it indexes
    v.system.write_diary("margaret", 1)
    return summary_id("margaret", 1)


def _decay(v: Village) -> str:
    old = mem("A fire at the forge; I carried buckets all night.", importance=0.95, day=0)
    assert v.system.remember(old) is True
    v.db.prepare("UPDATE short_term_memories SET decay_factor = 0.95 WHERE id = ?").bind(old.id).run()
    return old.id  # past the forget threshold and important: decay re-embeds it


def _reembed(v: Village) -> str:
    remembered_while_down(v, TARGET)  # pending: reembed writes what D1 says belongs in the index
    return TARGET.id


REMEMBER = Caller("remember", _remember, lambda v: v.system.remember(TARGET))
INDEX_MEMORY = Caller("index_memory", _index_memory, lambda v: v.system.index_memory(mem(TARGET.content, importance=0.3)))
RETRY = Caller("retry_pending", _retry, lambda v: v.system.retry_pending())
CONSOLIDATE = Caller("consolidate", _consolidate, lambda v: v.system.consolidate())
DECAY = Caller("decay_and_prune", _decay, lambda v: v.system.decay_and_prune())
REEMBED = Caller("reembed", _reembed, lambda v: reembed(v.system), raises_on_outage=True)


# --- the postpone rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize("outage", ["embedder", "index"])
@pytest.mark.parametrize("caller", [REMEMBER, INDEX_MEMORY, RETRY, CONSOLIDATE, DECAY, REEMBED], ids=str)
def test_every_caller_postpones_by_the_one_backoff_rule_and_the_retry_job_finishes(
    caller: Caller, outage: str, clock: SimClock
) -> None:
    clock.advance_to(WorldTime(5, 12))
    v = village(clock)
    target = caller.prepare(v)
    before = (outbox_row(v, target) or {"attempts": 0})["attempts"]
    failures = v.system.stats().get("embedding_failures", 0)
    faulty = v.embedder if outage == "embedder" else v.index
    faulty.down = True
    if caller.raises_on_outage:
        with pytest.raises((EmbeddingUnavailable, VectorizeUnavailable)):
            caller.act(v)
    else:
        caller.act(v)

    row = outbox_row(v, target)
    assert row is not None and state(v, target) == "pending"  # queued, whatever the caller
    assert row["attempts"] == before + 1
    assert row["next_attempt_at"] == pytest.approx(clock() + retry_delay_s(before + 1, CONFIG))
    assert "injected" in row["last_error"]
    assert v.system.stats()["embedding_failures"] == failures + 1

    faulty.down = False
    clock.seconds += retry_delay_s(before + 1, CONFIG)
    assert v.system.retry_pending().embedded == 1  # the retry job alone finishes it
    assert state(v, target) == "indexed" and store.outbox_size(v.db) == 0
    [vector] = v.index.get_by_ids([target])
    assert vector.metadata == vector_metadata(store.memories_by_ids(v.db, [target])[target])
    assert check(v.system.env).clean


def test_one_npc_that_cannot_be_indexed_is_postponed_alone_by_decay_and_reembed(clock: SimClock) -> None:
    """A row an older version wrote (an id no Vectorize holds): decay reported it but queued nothing, and reembed
    stopped for everyone; both now postpone it alone, as remember and retry_pending always did."""
    v = village(clock)
    assert v.system.remember(mem("Tom sang at the pub.", importance=0.95, day=0)) is True
    legacy = "legacy-" + "x" * 70
    v.db.prepare(
        "INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type, about, kind, decay_factor,"
        " decayed_day, index_state, seq) VALUES (?, 'rose', 'The great flood.', 0.95, 0, 9, 'event', '', 'observation',"
        " 0.95, 0, 'indexed', 1000)"
    ).bind(legacy).run()
    v.db.prepare("UPDATE short_term_memories SET decay_factor = 0.95").run()
    clock.advance_to(WorldTime(1, 0))
    report = v.system.decay_and_prune()
    assert report.reembedded == 1 and report.failed == 1 and set(report.errors) == {"rose"}
    row = outbox_row(v, legacy)
    assert row is not None and row["attempts"] == 1 and "id too long; max is 64 bytes" in row["last_error"]
    assert state(v, legacy) == "pending"

    assert reembed(v.system) == 1  # margaret's is written; rose's backs off further, alone
    assert (outbox_row(v, legacy) or {})["attempts"] == 2 and store.outbox_size(v.db) == 1


# --- the index-full rule ----------------------------------------------------------------------------------


def fill(v: Village) -> list[str]:
    """Three old, barely important memories: the index (max 3 vectors) is full, the config thinks it is not."""
    fillers = [mem(f"An ordinary morning, number {i}.", importance=0.71 + i / 100, day=0, hour=8 + i) for i in range(3)]
    for m in fillers:
        assert v.system.remember(m) is True
    assert v.index.describe().vector_count == 3
    return [m.id for m in fillers]


@pytest.mark.parametrize("caller", [REMEMBER, INDEX_MEMORY, RETRY, CONSOLIDATE, REEMBED], ids=str)
def test_every_caller_makes_room_when_the_index_says_it_is_full(caller: Caller, clock: SimClock) -> None:
    """Decay is not in the table: it re-embeds only memories the index already holds, which takes no room."""
    v = village(clock, max_vectors=3)
    fillers = fill(v)
    clock.advance_to(WorldTime(5, 12))
    target = caller.prepare(v)
    before = {m.id for m in store.all_memories(v.db)}
    caller.act(v)

    assert state(v, target) == "indexed" and v.index.get_by_ids([target])  # it got in...
    assert v.index.describe().vector_count <= 3
    dropped = [i for i in fillers if state(v, i) == "unindexed"]
    assert dropped and v.system.stats()["cap_prunes"] == len(dropped)  # ...by dropping the least valued
    assert before <= {m.id for m in store.all_memories(v.db)} and store.outbox_size(v.db) == 0  # all kept, none queued
    assert check(v.system.env).clean


def test_retry_pending_makes_room_in_a_full_index_instead_of_backing_off_until_it_gives_up(clock: SimClock) -> None:
    """The index-full rule lived only in remember's path: retry_pending took the index's "full" for a failure of
    the row and backed it off, attempt after attempt, although pruning would have let it in."""
    v = village(clock, max_vectors=3)
    fill(v)
    remembered_while_down(v, TARGET)
    for _ in range(3):
        clock.seconds += CONFIG.retry_max_s
        report = v.system.retry_pending()
        if report.embedded:
            break
    assert report.embedded == 1 and report.failed == 0 and report.errors == {}
    assert state(v, TARGET.id) == "indexed" and store.outbox_size(v.db) == 0


def test_a_write_still_full_after_pruning_harder_is_postponed(clock: SimClock) -> None:
    """The index holds vectors D1 disowns (drift): pruning what D1 counts cannot make room, so the memory waits
    in the outbox, in D1; once `check --repair` has deleted the strays, the retry job gets it in."""
    from memory_sim.check import repair

    v = village(clock, max_vectors=3)
    fill(v)
    v.db.prepare("UPDATE short_term_memories SET index_state = 'none'").run()  # D1 disowns them; the index does not
    assert v.system.remember(TARGET) is False
    row = outbox_row(v, TARGET.id)
    assert row is not None and row["attempts"] == 1 and "full" in row["last_error"]
    assert state(v, TARGET.id) == "pending" and v.system.stats().get("cap_prunes", 0) == 0

    repair(v.system.env, check(v.system.env))
    clock.seconds += retry_delay_s(1, CONFIG)
    assert v.system.retry_pending().embedded == 1 and state(v, TARGET.id) == "indexed"


def test_a_wrong_dimension_error_with_the_full_code_prunes_nothing(clock: SimClock) -> None:
    """Production answers 40012 for a vector of the wrong dimension too: that is not a full index."""
    from memory_sim.errors import VectorizeInputError

    class WrongDimensions(FlakyIndex):
        def upsert(self, vectors: Any) -> Any:
            raise VectorizeInputError("VECTOR_UPSERT", "invalid vector for id=x, expected 32 and got 64", 40012)

    v = village(clock)
    fill(v)
    v.system.env.VECTORIZE = WrongDimensions(v.index.inner)  # type: ignore[assignment]
    assert v.system.remember(TARGET) is False
    assert v.system.stats().get("cap_prunes", 0) == 0 and state(v, TARGET.id) == "pending"


def test_each_row_is_embedded_once_per_call(clock: SimClock) -> None:
    """The second write after pruning harder, and the NPC-by-NPC writes after one NPC failed, reuse the vectors
    the first attempt embedded (the old paths embedded again for each)."""
    v = village(clock, max_vectors=3)
    fill(v)
    calls = v.embedder.calls
    assert v.system.remember(TARGET) is True  # the index said full: pruned harder and wrote again
    assert v.embedder.calls == calls + 1

    remembered_while_down(v, mem("I shod the grey mare."))
    legacy = "legacy-" + "y" * 70  # rose's row, which no index can hold
    v.db.prepare(
        "INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type, about, kind, decay_factor,"
        " decayed_day, index_state, seq) VALUES (?, 'rose', 'Rose sewed a dress.', 0.9, ?, 9, 'event', '',"
        " 'observation', 0.05, 0, 'pending', 1001)"
    ).bind(legacy, 5).run()
    v.db.prepare("INSERT INTO embedding_outbox (memory_id, attempts, next_attempt_at) VALUES (?, 0, 0)").bind(legacy).run()
    clock.seconds += retry_delay_s(1, CONFIG)
    calls = v.embedder.calls
    report = v.system.retry_pending()
    assert report.embedded == 1 and set(report.errors) == {"rose"}
    assert v.embedder.calls == calls + 1


def test_the_index_full_rule_holds_through_the_cloudflare_rest_adapters(clock: SimClock, cloudflare_server: Any) -> None:
    """The same rule when the index is reached over Cloudflare's REST API (the local server, loopback): the
    code and the message of the "full" answer survive the round trip."""
    from memory_sim.bindings.limits import VECTORIZE_MAX_BATCH_REST
    from memory_sim.builder import build_cloudflare_env
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.local.vectorize.oracle import OracleAccount
    from memory_sim.settings import Settings

    account = cloudflare_server.adopt(OracleAccount(clock=clock, max_batch=VECTORIZE_MAX_BATCH_REST, max_vectors=3))
    db = cloudflare_server.new_database("memory", account.client.account_id)
    settings = Settings.load(environ={}, backend="cloudflare", account_id=account.client.account_id,
                             api_token=account.client.api_token, database_id=db.database_id, embed_model="fake/hashing")
    env = build_cloudflare_env(settings, embedder=HashingEmbedder(64), client=account.client)
    embedder, index = FlakyEmbedder(env.embedder), FlakyIndex(env.VECTORIZE)
    env.embedder, env.VECTORIZE = embedder, index  # type: ignore[assignment]
    v = Village(MemorySystem(env, clock=clock, config=CONFIG), embedder, index, clock)
    fill(v)
    remembered_while_down(v, TARGET)
    clock.seconds += retry_delay_s(1, CONFIG)
    assert v.system.retry_pending().embedded == 1
    assert state(v, TARGET.id) == "indexed" and v.system.stats()["cap_prunes"] >= 1
