"""memory_sim: local-first long-term semantic memory for simulated characters.

Imports stay light (no torch, Chroma or DuckDB at import time); heavy parts load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Env", "MemorySystem", "Settings", "ShortTermMemory", "SimClock", "WorldTime", "__version__"]

if TYPE_CHECKING:
    from memory_sim.env import Env, Settings
    from memory_sim.memory.models import ShortTermMemory, WorldTime
    from memory_sim.memory.system import MemorySystem
    from memory_sim.sim.clock import SimClock


def __getattr__(name: str) -> Any:
    # Lazy exports keep `import memory_sim` and `memory-sim --help` fast.
    if name in ("Env", "Settings"):
        from memory_sim import env

        return getattr(env, name)
    if name == "MemorySystem":
        from memory_sim.memory.system import MemorySystem

        return MemorySystem
    if name in ("ShortTermMemory", "WorldTime"):
        from memory_sim.memory import models

        return getattr(models, name)
    if name == "SimClock":
        from memory_sim.sim.clock import SimClock

        return SimClock
    raise AttributeError(f"module 'memory_sim' has no attribute {name!r}")
