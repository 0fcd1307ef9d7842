"""What the Agent Memory tests share: the fixed calendar time, a clock the tests move, a local service."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

from memory_sim.agent_memory import AgentMemoryService
from memory_sim.env import Env

NOW = datetime(2026, 4, 21, 12, 0, tzinfo=UTC)
names = itertools.count()  # fresh namespace names


class Clock:
    """Calendar time for the service, moved by the tests."""

    def __init__(self) -> None:
        self.value = NOW

    def __call__(self) -> datetime:
        return self.value


def local_service(clock: Clock, **options: Any) -> AgentMemoryService:
    return AgentMemoryService.over(Env.in_memory(dimensions=64), now=clock, **options)
