"""The inspector's pages: plain HTML from Jinja2 templates over the JSON routes' data (api.py), charts as inline
SVG (charts.py). Forms are GET forms, so every page is a link, works without script and with the keyboard."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from memory_sim.errors import MemorySimError
from memory_sim.inspector import api, charts, queries
from memory_sim.memory.models import RECALL_MODES

router = APIRouter(include_in_schema=False)
LATEST = 200  # rows of the NPC page's memory table (the timeline shows all)


@lru_cache(maxsize=1)
def templates() -> Any:
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("memory_sim.inspector", "templates"),
                              autoescape=True, trim_blocks=True, lstrip_blocks=True)


def render(request: Request, name: str, page: str, title: str, status: int = 200, **values: Any) -> HTMLResponse:
    folder = api.folder_of(request)
    html = templates().get_template(name).render(
        ui=request.app.state.inspector_prefix, page=page, title=title, folder=folder.label,
        owner=folder.through_owner, **values)
    return HTMLResponse(html, status_code=status)


def failed(request: Request, exc: MemorySimError, page: str) -> HTMLResponse:
    return render(request, "error.html", page, "Cannot show this", api.status_of(exc), message=str(exc))


@router.get("/", response_class=HTMLResponse)
def village(request: Request, q: str = "") -> HTMLResponse:
    try:
        data = api.village_data(api.folder_of(request), q)
    except MemorySimError as exc:
        return failed(request, exc, "village")
    last = data["worldDay"]
    sparks = {n["id"]: charts.sparkline({int(d): c for d, c in n["per_day"].items()}, last) for n in data["npcs"]}
    return render(request, "village.html", "village", "Village", data=data, sparks=sparks)


@router.get("/npcs/{npc_id:path}", response_class=HTMLResponse)
def npc(request: Request, npc_id: str) -> HTMLResponse:
    try:
        data = api.npc_data(api.folder_of(request), npc_id)
    except MemorySimError as exc:
        return failed(request, exc, "village")
    memories = [queries.MemoryDot(**m) for m in data["memories"]]
    days = max([data["world_day"], *(m.day for m in memories)])
    link = f"{request.app.state.inspector_prefix}/memories/"
    return render(request, "npc.html", "village", data["name"], data=data, states=queries.STATES,
                  colours=charts.COLOURS, latest=list(reversed(memories))[:LATEST],
                  timeline=charts.timeline(memories, days, data["consolidation_days"], link),
                  decay=charts.decay_chart(memories, days))


@router.get("/memories/{memory_id:path}", response_class=HTMLResponse)
def memory(request: Request, memory_id: str) -> HTMLResponse:
    try:
        data = api.memory_data(api.folder_of(request), memory_id)
    except MemorySimError as exc:
        return failed(request, exc, "village")
    return render(request, "memory.html", "village", f"Memory {memory_id}", data=data)


@router.get("/recall", response_class=HTMLResponse)
def recall(
    request: Request, npc: str = "", q: str = "", mode: str = "hybrid", weighted: bool = False, day: str = "",
    top_k: int = 5,
) -> HTMLResponse:
    try:
        with api.folder_of(request).env():  # one opening for the page's reads
            return _recall(request, npc, q, mode, weighted, day, top_k)
    except MemorySimError as exc:
        return failed(request, exc, "recall")


def _recall(request: Request, npc: str, q: str, mode: str, weighted: bool, day: str, top_k: int) -> HTMLResponse:
    folder = api.folder_of(request)
    form: dict[str, Any] = {"npc": npc, "q": q, "mode": mode, "weighted": weighted, "day": day, "top_k": top_k}
    try:
        people = api.village_data(folder)
    except MemorySimError as exc:
        return failed(request, exc, "recall")
    form["day"] = day.strip() or str(people["worldDay"])
    data, error, status = None, None, 200
    if npc and q:
        try:
            data = api.recall_data(folder, npc, q, mode, weighted, int(form["day"]), top_k)
        except ValueError as exc:  # InvalidInput is a ValueError too: its message says what was wrong
            error, status = (str(exc), 400) if isinstance(exc, MemorySimError) else (
                f"day must be a whole number, got {day!r}", 400)
        except MemorySimError as exc:
            error, status = str(exc), api.status_of(exc)
    return render(request, "recall.html", "recall", "Recall", status, npcs=people["npcs"], modes=RECALL_MODES,
                  form=form, data=data, error=error)


@router.get("/relationships", response_class=HTMLResponse)
def relationships(request: Request, day: int | None = None, focus: str = "", a: str = "", b: str = "") -> HTMLResponse:
    try:
        with api.folder_of(request).env():  # one opening for the page's reads
            return _relationships(request, day, focus, a, b)
    except MemorySimError as exc:
        return failed(request, exc, "relationships")


def _relationships(request: Request, day: int | None, focus: str, a: str, b: str) -> HTMLResponse:
    folder = api.folder_of(request)
    try:
        data = api.relationships_data(folder, day)
        world_day = api.village_data(folder)["worldDay"]
        pair = api.pair_data(folder, a, b) if a and b and a != b else None
    except MemorySimError as exc:
        return failed(request, exc, "relationships")
    names: dict[str, str] = data["names"]
    aff = queries.Affinities(data["day"], names, {(e["from"], e["to"]): e["affinity"] for e in data["edges"]},
                             data["history"])
    people = sorted({(i, names.get(i, i)) for pair_ in aff.edges for i in pair_} | set(names.items()),
                    key=lambda p: p[1])
    focus_edges = [(y if x == focus else x, ab if x == focus else ba, ba if x == focus else ab)
                   for x, y, ab, ba in charts.strongest_pairs(aff, 0, focus)] if focus else []
    prefix = request.app.state.inspector_prefix
    pair_svg = ""
    if pair is not None:
        history = queries.PairHistory(a, b, names, pair["aToB"], pair["bToA"], pair["memories"])
        pair_svg = charts.pair_chart(history, max(world_day, aff.day))
    return render(request, "relationships.html", "relationships", "Relationships", data=data, world_day=world_day,
                  graph=charts.graph(aff, f"{prefix}/relationships", focus or None), people=people, focus=focus,
                  names=names, focus_edges=focus_edges, pair=pair, pair_svg=pair_svg,
                  pair_a=a or focus or (people[0][0] if people else ""), pair_b=b)


@router.get("/health", response_class=HTMLResponse)
def health(request: Request, check: bool = False) -> HTMLResponse:
    folder = api.folder_of(request)
    try:
        data = api.health_data(folder)
    except MemorySimError as exc:
        return failed(request, exc, "health")
    report: dict[str, Any] | None = None
    if check:
        try:
            report = api.check_data(folder)
        except MemorySimError as exc:
            report = {"error": str(exc)}
    return render(request, "health.html", "health", "Health", data=data, check=report)
