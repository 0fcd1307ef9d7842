"""`getSummary`'s Markdown, from a profile's stored memories: Key Facts, Recent Events (the last 30 days, newest
first), Active Tasks (the chosen session's), Last Session (what the chosen session stated) and Instructions;
a section with nothing in it is left out, as Cloudflare's get-summary page says. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

RECENT_DAYS = 30
MOST_PER_SECTION = 20


@dataclass(frozen=True, slots=True)
class Entry:
    type: str
    summary: str
    session_id: str | None
    happened_at: datetime  # an event's day (timeref.anchored); another memory's creation time
    superseded: bool


def _section(title: str, lines: Sequence[str]) -> str:
    return f"## {title}\n" + "\n".join(f"- {line}" for line in lines[:MOST_PER_SECTION]) if lines else ""


def markdown(entries: Sequence[Entry], session: str | None, now: datetime) -> str:
    """The summary; `session` scopes Active Tasks and Last Session (None: neither is written)."""
    live = [e for e in entries if not e.superseded]
    newest = sorted(live, key=lambda e: e.happened_at, reverse=True)
    since = now - timedelta(days=RECENT_DAYS)
    sections = [
        _section("Key Facts", [e.summary for e in newest if e.type == "fact"]),
        _section("Recent Events", [f"{e.summary} ({e.happened_at:%B} {e.happened_at.day})" for e in newest
                                   if e.type == "event" and since <= e.happened_at <= now]),
        _section("Active Tasks", [e.summary for e in newest if e.type == "task" and e.session_id == session]),
        _section("Last Session", [e.summary for e in sorted(live, key=lambda e: e.happened_at)
                                  if session is not None and e.session_id == session and e.type != "task"]),
        _section("Instructions", [e.summary for e in newest if e.type == "instruction"]),
    ]
    return "\n\n".join(s for s in sections if s)
