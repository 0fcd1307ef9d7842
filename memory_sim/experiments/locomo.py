"""One run on LoCoMo: both speakers of each conversation remember its sessions on their sim days (eval/locomo.py's
memories and ids), the jobs run as the days pass, and after the last session every question is asked by plain
and weighted recall and scored against its gold evidence turns, with its category kept for per-category recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memory_sim.eval.locomo import last_day, session_memories, speaker_npc, turn_id_of, warm_query_cache
from memory_sim.experiments.probes import DayRecord, Probe, Timer, ask_all, counts, sizes
from memory_sim.experiments.spec import RunConfig, Target
from memory_sim.experiments.village import OnDay, memory_jobs, open_system
from memory_sim.locomo import CATEGORY_NAMES, Conversation
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem


def conversations_of(target: Target) -> list[Conversation]:
    from memory_sim.locomo import load_locomo

    assert target.dataset is not None  # the spec refuses a LoCoMo target without one
    return load_locomo(target.dataset)[: target.conversations]


def sessions_by_day(conversations: Sequence[Conversation]) -> dict[int, list[list[ShortTermMemory]]]:
    """Each session's turns as one speaker remembers them (one batch, one sim hour), under its sim day, in the
    order the file gives them."""
    days: dict[int, list[list[ShortTermMemory]]] = {}
    for conversation in conversations:
        npcs = [speaker_npc(conversation.id, s) for s in conversation.speakers]
        for session in conversation.sessions:
            for npc in npcs:
                days.setdefault(session.day, []).append(session_memories(npc, session))
    return dict(sorted(days.items()))


def probes_of(conversations: Sequence[Conversation]) -> list[Probe]:
    """Every question, asked of the two speakers in turn (as `eval locomo` does)."""
    probes = []
    for conversation in conversations:
        npcs = [speaker_npc(conversation.id, s) for s in conversation.speakers]
        for number, q in enumerate(conversation.questions):
            probes.append(Probe(f"{conversation.id}:q{number}", npcs[number % 2], q.text,
                                CATEGORY_NAMES[q.category], frozenset(q.evidence)))
    return probes


def run_locomo(
    data: Path, config: RunConfig, target: Target, on_day: OnDay, timer: Timer
) -> list[DayRecord]:
    from memory_sim.scheduling import SimScheduler
    from memory_sim.sim.clock import SimClock

    conversations = conversations_of(target)
    clock, records = SimClock(), []
    with open_system(data, config, clock) as system:
        scheduler = SimScheduler(system, memory_jobs(system, config))
        for day, sessions in sessions_by_day(conversations).items():
            started = timer()
            clock.advance_to(WorldTime(day))
            scheduler.tick(clock())
            for memories in sessions:  # a session at its hour (the clock never goes back within a day)
                if memories:
                    clock.advance_to(max(clock.now, memories[0].world_time))
                    system.remember_many(memories, index_all=True)
            records.append(_recorded(system, data, day, timer() - started))
            on_day(day)
        final = max((last_day(c) for c in conversations), default=0) + 1
        started = timer()
        clock.advance_to(WorldTime(final))
        scheduler.tick(clock())
        warm_query_cache(system, conversations)  # every mode then times recall, not the first embedding
        record = _recorded(system, data, final, 0.0)
        ask_all(system, probes_of(conversations), record, config.recall_mode, config.top_k, final, timer,
                to_gold=turn_id_of, scoring=config.scoring)
        record.day_s = timer() - started
        records.append(record)
        on_day(final)
    return records


def _recorded(system: MemorySystem, data: Path, day: int, seconds: float) -> DayRecord:
    return DayRecord(day, counts(system), sizes=sizes(data), day_s=seconds)
