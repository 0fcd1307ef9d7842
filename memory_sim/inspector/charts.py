"""Charts as inline SVG, drawn on the server: no script, no network, readable without colour alone (every mark
has a <title>, and the pages list what the charts show). Links inside a chart are keyboard-focusable."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode

if TYPE_CHECKING:
    from memory_sim.inspector.queries import Affinities, MemoryDot, PairHistory

COLOURS = {"pending": "#d97706", "indexed": "#2563eb", "summary": "#7c3aed", "pruned": "#9ca3af",
           "forgotten": "#dc2626", "short-term": "#0d9488"}
POSITIVE, NEGATIVE = "#15803d", "#b91c1c"


def _svg(width: int, height: int, body: str, label: str, css: str = "chart") -> str:
    return (f'<svg class="{css}" role="img" aria-label="{escape(label)}" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">{body}</svg>')


def sparkline(per_day: Mapping[int, int], last_day: int, width: int = 140, height: int = 24) -> str:
    """Memories per day, day 0 to `last_day`."""
    days = max(1, last_day + 1)
    top = max(per_day.values(), default=0) or 1
    step = width / max(1, days - 1)
    points = " ".join(f"{d * step:.1f},{height - 2 - (height - 4) * per_day.get(d, 0) / top:.1f}"
                      for d in range(days))
    total = sum(per_day.values())
    return _svg(width, height, f'<polyline fill="none" stroke="#2563eb" stroke-width="1.2" points="{points}"/>',
                f"{total} memories over {days} days, at most {top} a day", "spark")


def _day_axis(x0: float, x1: float, y: float, days: int, width: float) -> str:
    ticks = max(1, math.ceil(days / 12))
    parts = [f'<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#6b7280"/>']
    for d in range(0, days + 1, ticks):
        x = x0 + (x1 - x0) * d / max(1, days)
        parts.append(f'<text x="{x:.1f}" y="{y + 14}" font-size="11" text-anchor="middle">{d}</text>')
    parts.append(f'<text x="{(x0 + x1) / 2}" y="{y + 28}" font-size="11" text-anchor="middle">sim day</text>')
    return "".join(parts)


def timeline(memories: Sequence[MemoryDot], days: int, consolidation_days: Sequence[int], link: str) -> str:
    """Every memory at (day + hour/24, importance), coloured by state; consolidation days dashed."""
    width, height, left, right, top, bottom = 1180, 330, 44, 1170, 12, 286
    span = max(1, days + 1)

    def x(day: float) -> float:
        return left + (right - left) * day / span

    def y(importance: float) -> float:
        return bottom - (bottom - top) * importance

    parts = [f'<text x="12" y="{(top + bottom) / 2}" font-size="11" transform="rotate(-90 12 {(top + bottom) / 2})"'
             ' text-anchor="middle">importance</text>']
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{right}" y2="{y(v):.1f}" stroke="#e5e7eb"/>'
                     f'<text x="{left - 4}" y="{y(v) + 4:.1f}" font-size="10" text-anchor="end">{v:g}</text>')
    for d in consolidation_days:
        parts.append(f'<line class="consolidated" x1="{x(d + 1):.1f}" y1="{top}" x2="{x(d + 1):.1f}" y2="{bottom}" '
                     f'stroke="#7c3aed" stroke-dasharray="3 3" stroke-opacity="0.5"><title>day {d} consolidated'
                     '</title></line>')
    for m in memories:
        title = escape(f"day {m.day} {m.hour:02d}:00 · {m.state} · importance {m.importance:.2f} · {m.text}")
        href = escape(link + quote(m.id, safe=""))
        parts.append(f'<a href="{href}"><circle class="dot {m.state}" cx="{x(m.day + m.hour / 24):.1f}" '
                     f'cy="{y(m.importance):.1f}" r="4" fill="{COLOURS[m.state]}" fill-opacity="0.8">'
                     f'<title>{title}</title></circle></a>')
    parts.append(_day_axis(left, right, bottom, span, right - left))
    return _svg(width, height, "".join(parts), f"{len(memories)} memories over {span} days by importance")


def decay_chart(memories: Sequence[MemoryDot], days: int) -> str:
    """The mean decay factor of the memories of each day: older memories have decayed further."""
    width, height, left, right, top, bottom = 1180, 150, 44, 1170, 10, 110
    span = max(1, days + 1)
    by_day: dict[int, list[float]] = {}
    for m in memories:
        by_day.setdefault(m.day, []).append(m.decay_factor)
    mean = {d: sum(v) / len(v) for d, v in sorted(by_day.items())}
    points = " ".join(f"{left + (right - left) * d / span:.1f},{bottom - (bottom - top) * min(1.0, f):.1f}"
                      for d, f in mean.items())
    parts = [f'<line x1="{left}" y1="{top}" x2="{right}" y2="{top}" stroke="#e5e7eb"/>',
             f'<text x="{left - 4}" y="{top + 4}" font-size="10" text-anchor="end">1</text>',
             f'<text x="{left - 4}" y="{bottom + 4}" font-size="10" text-anchor="end">0</text>',
             f'<polyline fill="none" stroke="#d97706" stroke-width="1.5" points="{points}"/>',
             _day_axis(left, right, bottom, span, right - left)]
    return _svg(width, height, "".join(parts), "mean decay factor of each day's memories")


def _layout(ids: Sequence[str], size: float) -> dict[str, tuple[float, float]]:
    centre, radius = size / 2, size / 2 - 70
    return {i: (centre + radius * math.cos(2 * math.pi * k / len(ids) - math.pi / 2),
                centre + radius * math.sin(2 * math.pi * k / len(ids) - math.pi / 2)) for k, i in enumerate(ids)}


def edge_id(a: str, b: str) -> str:
    x, y = sorted((a, b))
    return f"edge-{x}-{y}"


def strongest_pairs(aff: Affinities, limit: int, focus: str | None) -> list[tuple[str, str, float, float]]:
    """Undirected pairs (a, b, a->b, b->a), strongest mean affinity first; all of `focus`'s pairs kept."""
    pairs: dict[tuple[str, str], tuple[float, float]] = {}
    for (a, b), value in aff.edges.items():
        x, y = sorted((a, b))
        ab, ba = pairs.get((x, y), (0.0, 0.0))
        pairs[(x, y)] = (value, ba) if (a, b) == (x, y) else (ab, value)
    ranked = sorted(pairs.items(), key=lambda item: (-abs(sum(item[1])), item[0]))
    kept = [p for n, p in enumerate(ranked) if n < limit or focus in p[0]]
    return [(x, y, ab, ba) for (x, y), (ab, ba) in kept]


def graph(aff: Affinities, link: str, focus: str | None = None, limit: int = 250) -> str:
    """NPCs on a circle; an edge per pair, green when they like each other on average, red when not, wider the
    stronger; the `limit` strongest pairs (and all of `focus`'s)."""
    ids = sorted({n for pair in aff.edges for n in pair} | set(aff.names), key=lambda i: aff.names.get(i, i))
    if not ids:
        return ""
    size = 600 if len(ids) <= 30 else 760
    labelled = set(ids) if len(ids) <= 30 else {focus}  # a crowd's names would overlap: each node has a title
    where = _layout(ids, size)
    parts = []
    for a, b, ab, ba in strongest_pairs(aff, limit, focus):
        mean = (ab + ba) / 2
        (x1, y1), (x2, y2) = where[a], where[b]
        title = escape(f"{aff.names.get(a, a)} → {aff.names.get(b, b)}: {ab:+.2f}; "
                       f"{aff.names.get(b, b)} → {aff.names.get(a, a)}: {ba:+.2f}")
        opacity = 0.25 if focus and focus not in (a, b) else 0.85
        parts.append(f'<a href="{escape(link + "?" + urlencode({"a": a, "b": b, "day": aff.day}))}">'
                     f'<line id="{escape(edge_id(a, b))}" class="edge" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" '
                     f'y2="{y2:.1f}" stroke="{POSITIVE if mean >= 0 else NEGATIVE}" stroke-opacity="{opacity}" '
                     f'stroke-width="{0.8 + 5 * min(1.0, abs(mean)):.1f}"><title>{title}</title></line></a>')
    for i in ids:
        x, y = where[i]
        name = escape(aff.names.get(i, i))
        anchor = "start" if x >= size / 2 else "end"
        dx = 10 if anchor == "start" else -10
        label = (f'<text x="{x + dx:.1f}" y="{y + 4:.1f}" font-size="12" text-anchor="{anchor}">{name}</text>'
                 if i in labelled else "")
        href = escape(link + "?" + urlencode({"focus": i, "day": aff.day}))
        radius = 7 if len(ids) <= 30 else 4
        parts.append(f'<a href="{href}"><circle id="node-{escape(i)}" class="node" cx="{x:.1f}" cy="{y:.1f}" '
                     f'r="{radius}" fill="#1f2937"><title>{name}</title></circle>{label}</a>')
    return _svg(size, size, "".join(parts), f"affinities between {len(ids)} NPCs on day {aff.day}", "graph")


def pair_chart(history: PairHistory, days: int) -> str:
    """Each one's affinity for the other over the days (a step where it changed), the memories that moved it
    as ticks along the bottom."""
    width, height, left, right, top, bottom = 1180, 260, 44, 1170, 12, 212
    span = max(1, days + 1)

    def x(day: float) -> float:
        return left + (right - left) * day / span

    def y(value: float) -> float:
        return top + (bottom - top) * (1 - (value + 1) / 2)

    parts = [f'<line x1="{left}" y1="{y(0):.1f}" x2="{right}" y2="{y(0):.1f}" stroke="#9ca3af" '
             'stroke-dasharray="2 2"/>']
    for v in (-1.0, -0.5, 0.0, 0.5, 1.0):
        parts.append(f'<text x="{left - 4}" y="{y(v) + 4:.1f}" font-size="10" text-anchor="end">{v:+g}</text>')
    for series, colour, who in ((history.a_to_b, "#2563eb", history.a), (history.b_to_a, "#d97706", history.b)):
        if not series:
            continue
        points, last = [], None
        for day, value in series:
            if last is not None:
                points.append(f"{x(day + 1):.1f},{y(last):.1f}")
            points.append(f"{x(day + 1):.1f},{y(value):.1f}")
            last = value
        points.append(f"{x(span):.1f},{y(last or 0.0):.1f}")
        name = escape(history.names.get(who, who))
        parts.append(f'<polyline class="affinity" fill="none" stroke="{colour}" stroke-width="2" '
                     f'points="{" ".join(points)}"><title>how {name} feels</title></polyline>')
    for m in history.memories:
        colour = "#2563eb" if m["npc_id"] == history.a else "#d97706"
        mx = x(int(m["day"]) + int(m["hour"]) / 24)
        parts.append(f'<line class="moved" x1="{mx:.1f}" y1="{bottom + 2}" x2="{mx:.1f}" y2="{bottom + 12}" '
                     f'stroke="{colour}"><title>{escape(str(m["content"]))}</title></line>')
    parts.append(_day_axis(left, right, bottom + 14, span, right - left))
    return _svg(width, height + 14, "".join(parts), "affinity over time")
