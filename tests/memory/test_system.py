"""MemorySystem on the oracle index, sqlite3 D1 and the hashing embedder."""

from __future__ import annotations

from memory_sim.env import Env
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock


def mem(npc: str, text: str, importance: float, day: int = 1, hour: int = 9, **kw: object) -> ShortTermMemory:
    return ShortTermMemory(npc, text, importance, WorldTime(day, hour), **kw)  # type: ignore[arg-type]


def test_remember_writes_d1_first_and_indexes_only_important(system: MemorySystem, env: Env) -> None:
    assert system.remember(mem("margaret", "The blacksmith mended my oven door.", 0.9)) is True
    assert system.remember(mem("margaret", "It rained on the market.", 0.3)) is False
    rows = store.memories_of(env.DB, "margaret")
    assert {r.index_state for r in rows} == {"indexed", "none"}
    assert env.VECTORIZE.describe().vector_count == 1
    assert store.outbox_size(env.DB) == 0


def test_vector_carries_the_designs_metadata(system: MemorySystem, env: Env) -> None:
    memory = mem("tom", "x" * 300, 0.8, type="opinion")
    system.remember(memory)
    [vector] = env.VECTORIZE.get_by_ids([memory.id])
    assert vector.metadata == {"npcId": "tom", "type": "opinion", "day": 1, "importance": 0.8,
                               "decayFactor": 0.05, "textPreview": "x" * 200}


def test_index_memory_indexes_a_d1_only_memory(system: MemorySystem, env: Env) -> None:
    quiet = mem("margaret", "I counted the loaves twice.", 0.2)
    system.remember(quiet)
    assert system.index_memory(quiet) is True
    assert [r.id for r in system.recall("margaret", "counted the loaves")] == [quiet.id]


def test_recall_is_filtered_to_the_npc(system: MemorySystem) -> None:
    system.remember(mem("margaret", "The blacksmith shod the grey mare.", 0.9))
    system.remember(mem("tom", "The blacksmith shod the grey mare today.", 0.9))
    system.remember(mem("tom", "The blacksmith drank at the Crown.", 0.9))
    found = system.recall("margaret", "blacksmith shod the mare", top_k=5)
    assert [r.npc_id for r in found] == ["margaret"] and found[0].source == "vectorize"


def test_weighted_recall_prefers_recent_important(system: MemorySystem) -> None:
    system.remember(mem("margaret", "The blacksmith was kind to me.", 0.75, day=1))
    system.remember(mem("margaret", "The blacksmith was kind to me again.", 0.95, day=20))
    plain = system.recall("margaret", "The blacksmith was kind to me.")
    weighted = system.weighted_recall("margaret", "The blacksmith was kind to me.", current_day=30)
    assert plain[0].day == 1  # identical text scores highest by meaning alone...
    assert weighted[0].day == 20  # ...but importance and age reorder them
    assert all(r.effective_score is not None for r in weighted)
    assert weighted[0].effective_score > weighted[1].effective_score  # type: ignore[operator]


def test_relationship_context_names_the_other_by_role(system: MemorySystem, env: Env) -> None:
    env.DB.prepare("INSERT INTO npc_state (npc_id, name, role, description) VALUES (?, ?, ?, ?)").bind(
        "tom", "Tom", "the blacksmith", "the smith at the forge").run()
    env.DB.prepare("INSERT INTO npc_state (npc_id, name, role, description) VALUES (?, ?, ?, ?)").bind(
        "margaret", "Margaret", "the baker", "the baker on Mill Lane").run()
    system.remember(mem("margaret", "The smith at the forge fixed my oven.", 0.9))
    system.remember(mem("margaret", "Rain all day.", 0.9))
    system.remember(mem("tom", "The baker on Mill Lane gave me bread.", 0.9))
    context = system.relationship_context("margaret", "tom", top_k=1)
    assert context.a_recalls[0].text == "The smith at the forge fixed my oven."
    assert context.b_recalls[0].text == "The baker on Mill Lane gave me bread."


def test_decision_context_recalls_the_relevant_past(system: MemorySystem, clock: SimClock) -> None:
    system.remember(mem("tom", "The ale at the Crown tonight tasted sour.", 0.9, day=2))
    system.remember(mem("tom", "The anvil cracked.", 0.9, day=2))
    clock.advance_to(WorldTime(3, 18))
    found = system.decision_context("tom", "Shall I go to the Crown for ale tonight?", top_k=1)
    assert found[0].text == "The ale at the Crown tonight tasted sour."


def test_write_diary_draws_on_the_day_and_the_past(system: MemorySystem, env: Env) -> None:
    system.remember(mem("margaret", "The blacksmith mended my oven door.", 0.9, day=1))
    system.remember(mem("margaret", "The blacksmith mended my oven door again.", 0.95, day=2, hour=10))
    system.remember(mem("margaret", "Bread sold out by noon.", 0.4, day=2, hour=12))
    text = system.write_diary("margaret", 2)
    assert text.startswith("The blacksmith mended my oven door again. Bread sold out by noon.")
    assert "It brought back day 1: The blacksmith mended my oven door." in text
    assert store.diary(env.DB, "margaret", 2) == text
    assert system.write_diary("margaret", 9) == ""


def test_recall_modes_share_one_path(system: MemorySystem) -> None:
    system.remember(mem("margaret", "The blacksmith shod the grey mare.", 0.9, day=1))
    system.remember(mem("margaret", "Bread sold out by noon.", 0.4, day=1, hour=12))
    system.remember(mem("tom", "Grey mare, blacksmith, shod.", 0.9))
    keyword = system.recall("margaret", "bread noon", mode="keyword")
    assert keyword[0].text == "Bread sold out by noon." and keyword[0].score == 1.0
    assert all(r.npc_id == "margaret" for r in keyword)
    hybrid = system.recall("margaret", "grey mare", mode="hybrid")
    assert hybrid[0].text == "The blacksmith shod the grey mare." and hybrid[0].source == "vectorize"
    assert {r.npc_id for r in hybrid} == {"margaret"}
