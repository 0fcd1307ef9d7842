"""`MemoryConfig`: every tunable of the memory system, checked once when it is built (pydantic: each field's type
and bounds are declared beside it). Read by attribute everywhere else; the pure scoring takes it as a plain value.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memory_sim.errors import InvalidInput

Share = Annotated[float, Field(ge=0.0, le=1.0)]
Rate = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
Seconds = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]


class MemoryConfig(BaseModel):
    """Every tunable of the memory system; the defaults follow the design. Days are sim days, seconds are
    seconds of world time. A value out of its bounds raises `InvalidInput` naming the field.

    Attributes:
        index_threshold: importance above which `remember` embeds a memory at once (0..1).
        initial_decay: the decay factor of a fresh memory.
        decay_rate: the daily growth of an unimportant memory's decay factor...
        decay_rate_floor: ...and of the most important one's (important memories fade slower).
        forget_threshold: past this decay factor a memory is re-embedded if important, else dropped from the index.
        keep_importance: "important" for that rule (0..1).
        consolidate_after_days: diary days at least this many sim days old are condensed.
        summary_sentences: sentences in a consolidated summary.
        index_cap: the index's size cap (Vectorize's limit by default).
        cap_headroom: at the cap, prune down to this share of it (0..1).
        retry_base_s: backoff of a failed embedding: `retry_base_s * 2**attempts` seconds, at most `retry_max_s`.
        retry_max_s: the longest backoff, in seconds.
        retry_max_attempts: attempts before a memory stops being retried.
        visibility_window_s: Vectorize's write-visibility lag; recall also scores D1 rows written this recently.
        candidate_factor: weighted recall ranks `top_k * candidate_factor` candidates.
        recall_headroom: recall ranks `2 * top_k + recall_headroom` candidates, so the top k stays full once
            repeats collapse.
        fallback_limit: D1 rows scanned by word overlap when the index fails.
        expand_npc_names: recall adds who a named NPC is (role, aliases, traits) to the query.
        query_cues: hybrid recall reads cues from the question (whose words, when, a date, a trait:
            memory/recalling/cues.py) and lifts the memories that match them.
        calendar_start: the calendar date (ISO, "2023-05-08") of sim day 0, so a date a question names ("in
            December 2023") becomes sim days; "" (the default): dates in questions are not resolved.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    index_threshold: Share = 0.7
    initial_decay: Rate = 0.05
    decay_rate: Rate = 0.04
    decay_rate_floor: Rate = 0.01
    forget_threshold: Share = 0.9
    keep_importance: Share = 0.85
    consolidate_after_days: Annotated[int, Field(ge=0)] = 1
    summary_sentences: Annotated[int, Field(ge=1)] = 2
    index_cap: Annotated[int, Field(ge=1)] = 20_000_000
    cap_headroom: Share = 0.9
    retry_base_s: Seconds = 3600.0
    retry_max_s: Seconds = 24 * 3600.0
    retry_max_attempts: Annotated[int, Field(ge=1)] = 12
    visibility_window_s: Rate = 120.0
    candidate_factor: Annotated[int, Field(ge=1)] = 4
    recall_headroom: Annotated[int, Field(ge=0)] = 5
    fallback_limit: Annotated[int, Field(ge=1)] = 200
    expand_npc_names: bool = True
    query_cues: bool = True
    calendar_start: str = ""

    @field_validator("calendar_start")
    @classmethod
    def _iso_date(cls, value: str) -> str:
        if value:
            date.fromisoformat(value)  # a ValueError names the bad date
        return value

    @property
    def day_zero(self) -> date | None:
        """`calendar_start` as a date (None when unset)."""
        return date.fromisoformat(self.calendar_start) if self.calendar_start else None

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "MemoryConfig"
            raise InvalidInput(f"MemoryConfig {where}: {first['msg']}, got {first.get('input')!r}") from None

    def replace(self, **changes: Any) -> MemoryConfig:
        """A copy with `changes`, checked like a new one."""
        return MemoryConfig(**(self.model_dump() | changes))
