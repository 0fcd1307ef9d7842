"""The inspector's JSON routes, `/ui/api/...`: what each page shows, as data. The pages (pages.py) render the
same dictionaries, so a route and its page never disagree.

    GET /ui/api/village?q=                       every NPC with its counts and memories per day
    GET /ui/api/npcs/{npc}                       its memories over time, consolidation days
    GET /ui/api/memories/{id}                    the D1 row, the index's metadata, the outbox row, lineage
    GET /ui/api/recall?npc=&q=&mode=&weighted=&day=&top_k=   recall with each score taken apart
    GET /ui/api/relationships?day=               every pair's affinity at the end of a day
    GET /ui/api/relationships/{a}/{b}            one pair's affinity over time and the memories that moved it
    GET /ui/api/health                           outbox, retry schedule, job runs, counters
    GET /ui/api/health/check                     check's drift report (reads the whole index: on demand)
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from memory_sim.errors import InvalidInput, MemorySimError, NotFound, VectorizeError
from memory_sim.inspector import queries
from memory_sim.inspector.folder import Folder
from memory_sim.memory import rules
from memory_sim.memory.models import RECALL_MODES, MemoryConfig

router = APIRouter(prefix="/api", tags=["inspector"])


def folder_of(request: Request) -> Folder:
    folder: Folder = request.app.state.inspector_folder
    return folder


def status_of(exc: MemorySimError) -> int:
    return 404 if isinstance(exc, NotFound) else 400 if isinstance(exc, InvalidInput) else 503


def answer(request: Request, make: Any, *args: Any) -> JSONResponse:
    try:
        return JSONResponse(make(folder_of(request), *args))
    except MemorySimError as exc:
        return JSONResponse({"error": str(exc)}, status_code=status_of(exc))


# --- the data, shared with the pages --------------------------------------------------------------------------


def village_data(folder: Folder, q: str = "") -> dict[str, Any]:
    with folder.env() as env:
        now, npcs = queries.village(env.DB, q)
    return {"folder": folder.label, "worldDay": now.day, "worldTime": str(now), "query": q,
            "throughOwner": folder.through_owner,
            "npcs": [dict(asdict(n), per_day={str(d): c for d, c in sorted(n.per_day.items())}) for n in npcs]}


def npc_data(folder: Folder, npc_id: str) -> dict[str, Any]:
    with folder.env() as env:
        detail = queries.npc(env.DB, npc_id)
    counts: dict[str, int] = {}
    for m in detail.memories:
        counts[m.state] = counts.get(m.state, 0) + 1
    return dict(asdict(detail), counts=counts)


def _brief(m: Any) -> dict[str, Any]:
    return {"id": m.id, "day": m.day, "hour": m.hour, "content": m.content}


def memory_data(folder: Folder, memory_id: str) -> dict[str, Any]:
    from memory_sim.memory.ledger.store import world_seconds

    with folder.env() as env:
        record = queries.memory(env.DB, memory_id)
        with folder.system(world_seconds(env.DB)) as system:
            links = system.belief_links(memory_id)
            history = system.lineage(memory_id).history
        try:
            vectors = env.VECTORIZE.get_by_ids([memory_id])
            index: dict[str, Any] = {"metadata": vectors[0].metadata if vectors else None, "present": bool(vectors)}
        except VectorizeError as exc:
            index = {"error": str(exc)}
    row = record.row
    outbox = None if record.outbox is None else dict(record.outbox, due=queries.when(record.outbox["next_attempt_at"]))
    forgotten = None if record.forgotten is None else dict(record.forgotten,
                                                               when=queries.when(record.forgotten["forgotten_at"]))
    return {"row": row, "state": record.state, "index": index, "outbox": outbox, "forgotten": forgotten,
            "sources": record.sources, "summaries": record.summaries, "npcId": row["npc_id"],
            "belief": {"supersededBy": None if links.superseded_by is None else _brief(links.superseded_by),
                       "supersedes": [_brief(m) for m in links.supersedes], "stateKey": row.get("state_key"),
                       "keyConfidence": row.get("key_confidence"), "keySource": row.get("key_source"),
                       "stateValue": row.get("state_value"), "history": [_brief(m) for m in history]}}


def recall_data(folder: Folder, npc: str, q: str, mode: str = "hybrid", weighted: bool = False,
                day: int | None = None, top_k: int = 5) -> dict[str, Any]:
    from memory_sim.memory.ledger.store import world_seconds
    from memory_sim.memory.recalling.explain import explain

    if mode not in RECALL_MODES:
        raise InvalidInput(f"mode must be one of {', '.join(RECALL_MODES)}, got {mode!r}")
    rules.top_k(top_k)
    with folder.env() as env:
        seconds = world_seconds(env.DB)
        with folder.system(seconds) as system:
            at = system.today() if day is None else rules.day(day, "day")
            found = explain(system, npc, q, mode=mode, weighted=weighted, day=at, top_k=top_k)  # type: ignore[arg-type]
    results = []
    for e in found:
        r = e.recollection
        item: dict[str, Any] = {"id": r.id, "text": r.text, "day": r.day, "importance": r.importance,
                                "kind": r.kind, "source": r.source, "score": r.score, "decayFactor": r.decay_factor,
                                "effectiveScore": r.effective_score, "sources": list(r.sources),
                                "supersededBy": r.superseded_by, "stateKey": r.state_key}
        if e.hybrid is not None:
            h = e.hybrid
            item["parts"] = {"vectorSimilarity": h.vector, "keywordScore": h.keyword, "vectorPart": h.vector_part,
                             "keywordPart": h.keyword_part, "neighbourContext": h.context, "cueLift": h.cue_lift,
                             "cueFactor": h.cue_factor, "keyHandover": e.handover, "timeRescore": e.time,
                             "total": e.total}
        if e.weighting is not None:
            w = e.weighting
            item["weighting"] = {"score": w.score, "importance": w.importance, "age": w.age,
                                 "decayFactor": w.decay_factor, "divisor": w.divisor, "sourceCap": w.source_cap,
                                 "timeRescore": w.time, "effective": w.effective}
        results.append(item)
    return {"npc": npc, "query": q, "mode": mode, "weighted": weighted, "day": at, "topK": top_k,
            "results": results}


def relationships_data(folder: Folder, day: int | None = None) -> dict[str, Any]:
    with folder.env() as env:
        aff = queries.affinities(env.DB, day)
    return {"day": aff.day, "history": aff.history, "names": aff.names,
            "edges": [{"from": a, "to": b, "affinity": v} for (a, b), v in sorted(aff.edges.items())]}


def pair_data(folder: Folder, a: str, b: str) -> dict[str, Any]:
    with folder.env() as env:
        history = queries.pair(env.DB, a, b)
    return {"a": a, "b": b, "names": history.names, "aToB": history.a_to_b, "bToA": history.b_to_a,
            "memories": history.memories}


def health_data(folder: Folder) -> dict[str, Any]:
    from memory_sim.memory.scoring import retry_delay_s

    with folder.env() as env:
        state = queries.health(env.DB)
    config = MemoryConfig()
    outbox = [dict(r, due=queries.when(r["next_attempt_at"])) for r in state.outbox]
    return {"worldDay": state.world_time.day, "worldTime": str(state.world_time), "outboxTotal": state.outbox_total,
            "outbox": outbox,
            "backoff": [{"attempt": n, "delayS": retry_delay_s(n, config)} for n in range(1, 8)],
            "maxAttempts": config.retry_max_attempts, "jobs": queries.job_periods(state.jobs),
            "counters": state.counters, "consolidations": state.consolidations}


def check_data(folder: Folder) -> dict[str, Any]:
    from memory_sim.check import check

    with folder.env() as env:
        return check(env).to_json()


# --- the routes -----------------------------------------------------------------------------------------------


@router.get("/village")
def api_village(request: Request, q: str = "") -> JSONResponse:
    return answer(request, village_data, q)


@router.get("/npcs/{npc_id:path}")
def api_npc(request: Request, npc_id: str) -> JSONResponse:
    return answer(request, npc_data, npc_id)


@router.get("/memories/{memory_id:path}")
def api_memory(request: Request, memory_id: str) -> JSONResponse:
    return answer(request, memory_data, memory_id)


@router.get("/recall")
def api_recall(
    request: Request, npc: str, q: str, mode: str = "hybrid", weighted: bool = False,
    day: int | None = None, top_k: int = Query(5),
) -> JSONResponse:
    return answer(request, recall_data, npc, q, mode, weighted, day, top_k)


@router.get("/relationships")
def api_relationships(request: Request, day: int | None = None) -> JSONResponse:
    return answer(request, relationships_data, day)


@router.get("/relationships/{a}/{b}")
def api_pair(request: Request, a: str, b: str) -> JSONResponse:
    return answer(request, pair_data, a, b)


@router.get("/health")
def api_health(request: Request) -> JSONResponse:
    return answer(request, health_data)


@router.get("/health/check")
def api_check(request: Request) -> JSONResponse:
    return answer(request, check_data)
