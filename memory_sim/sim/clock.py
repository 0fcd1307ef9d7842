"""The sim clock: world time in seconds, advanced only by the driver, so runs are reproducible."""

from __future__ import annotations

from memory_sim.memory.models import WorldTime


class SimClock:
    """The world's clock, moved only by the program: pass it as `MemorySystem(env, clock=SimClock())`.

    Calling it returns the world's time in seconds since day 0, 00:00 (one sim hour is 3,600 seconds, one sim
    day 86,400). It starts at `start` and moves only forward, through `advance_to`.
    """

    def __init__(self, start: WorldTime = WorldTime(0, 0)) -> None:
        self.seconds = start.to_seconds()

    def __call__(self) -> float:
        return self.seconds

    @property
    def now(self) -> WorldTime:
        """The current world time, as a sim day and hour."""
        return WorldTime.from_seconds(self.seconds)

    def advance_to(self, when: WorldTime) -> None:
        """Moves the clock to `when`; raises ValueError if that is before now."""
        if when.to_seconds() < self.seconds:
            raise ValueError(f"the sim clock only moves forward: {when} is before {self.now}")
        self.seconds = when.to_seconds()
