"""The sim clock: world time in seconds, advanced only by the driver, so runs are reproducible."""

from __future__ import annotations

from memory_sim.memory.models import WorldTime


class SimClock:
    """Callable as a `clock`: returns the world's seconds since day 0, 00:00."""

    def __init__(self, start: WorldTime = WorldTime(0, 0)) -> None:
        self.seconds = start.to_seconds()

    def __call__(self) -> float:
        return self.seconds

    @property
    def now(self) -> WorldTime:
        return WorldTime.from_seconds(self.seconds)

    def advance_to(self, when: WorldTime) -> None:
        if when.to_seconds() < self.seconds:
            raise ValueError(f"the sim clock only moves forward: {when} is before {self.now}")
        self.seconds = when.to_seconds()
