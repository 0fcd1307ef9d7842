"""`memory-sim demo`: the seeded village lived day by day in its own folder, then "What does Margaret think of
Tom?" answered from what she remembers (`--json` for scripts, `--timings` for where the time went)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_sim.cli.memory import _open, _print
from memory_sim.cli.output import key_note

if TYPE_CHECKING:
    from memory_sim.folder_lock import FolderLock
    from memory_sim.memory.system import MemorySystem

DEMO_MARKER = ".memory-sim-demo"
DEMO_QUESTION = "What does Margaret think of Tom?"



def _made_by_demo(name: str) -> bool:
    return name in (DEMO_MARKER, "d1", "vectorize") or name.startswith("embeddings.sqlite")


def _refuse_foreign(path: Path) -> list[Path]:
    """The entries of an earlier demo's folder; refuses a folder with anything the demo did not make."""
    from memory_sim.errors import ConfigError
    from memory_sim.folder_lock import is_lock_file

    entries = [e for e in path.iterdir() if not is_lock_file(e.name)] if path.is_dir() else []
    if entries and not (path / DEMO_MARKER).exists():
        raise ConfigError(f"{path} holds data not made by the demo; pass an empty folder with --data")
    foreign = sorted(e.name for e in entries if not _made_by_demo(e.name))
    if foreign:
        raise ConfigError(f"{path} holds files the demo did not make ({', '.join(foreign)}); "
                          "move them away or pass an empty folder with --data")
    return entries


def _claim_demo_folder(path: Path) -> FolderLock:
    """The demo owns its folder: empty or made by an earlier demo (then it starts afresh), and open nowhere else.
    It deletes only what a demo made, only under the folder's lock; the lock is returned for the demo's Env."""
    import shutil

    from memory_sim.folder_lock import FolderLock

    _refuse_foreign(path)  # before anything is created in someone else's folder
    held = FolderLock.acquire(path)
    try:
        for entry in _refuse_foreign(path):  # again, now that no other process can be using it
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        (path / DEMO_MARKER).write_text("made by memory-sim demo; removed by the next demo run\n", "utf-8")
    except BaseException:
        held.release()
        raise
    return held


def cmd_demo(args: argparse.Namespace) -> int:
    import time

    from tqdm import tqdm

    from memory_sim.builder import build_local_env
    from memory_sim.errors import ConfigError
    from memory_sim.memory.rules import HOURS_PER_DAY
    from memory_sim.sim.clock import SimClock
    from memory_sim.sim.driver import run_village
    from memory_sim.sim.world import Village

    started = time.perf_counter()
    if args.settings.backend != "local":
        raise ConfigError(
            "the demo builds its village in a local data folder; use --backend local (then `memory-sim push`)"
        )
    held = _claim_demo_folder(Path(args.data))  # first: a refused folder costs no model load
    if args.threads is not None:
        args.settings = args.settings.replace(embed_threads=args.threads)
    clock = SimClock()
    env = build_local_env(args.settings, folder_lock=held, preload_model=True)
    if args.timings:
        from memory_sim.bench.d1_count import CountingD1

        env.DB = CountingD1(env.DB)
    env, system = _open(args, clock, env=env)
    with env:
        village = Village(args.npcs, args.seed)
        before = village.affinity.get(("margaret", "tom"))
        opened = time.perf_counter() - started  # the folder claimed, D1 and the index open, the model loading
        with tqdm(total=args.days * HOURS_PER_DAY, unit="h", desc="village") as bar:
            summary = run_village(system, village, clock, args.days, lambda _: bar.update())
        _report_demo(args, system, summary, time.perf_counter() - started, village, before)
        if args.timings:
            _print_timings(system, time.perf_counter() - started, opened)
    return 0


def _print_timings(system: MemorySystem, elapsed: float, opened: float) -> None:
    """One JSON line on stderr: where the demo's time went (`memory-sim bench` reads it). `d1_s` is the wall
    time during which a D1 call was in progress, from either thread (the main one or the background indexer)."""
    import sys

    from memory_sim.memory.ledger.counts import memory_counts

    db, spent = system.env.DB, getattr(system.env.AI, "seconds", {})
    timings = {
        "demo_s": round(elapsed, 3), "open_s": round(opened, 3), "model_load_s": round(spent.get("load", 0.0), 3),
        "model_forward_s": round(spent.get("forward", 0.0), 3), "memories": memory_counts(db)["memories"],
        "d1_statements": getattr(db, "statements", None), "d1_round_trips": getattr(db, "round_trips", None),
        "d1_s": round(getattr(db, "busy_seconds", 0.0), 3),
    }
    print("timings " + json.dumps(timings), file=sys.stderr)


def _report_demo(
    args: argparse.Namespace, system: MemorySystem, summary: Any, elapsed: float, village: Any, before: float | None
) -> None:
    from memory_sim.cli.verdict import distinct, verdict

    day = system.today()
    found = distinct(system.weighted_recall("margaret", DEMO_QUESTION, day, top_k=10), 5)
    margaret = village.by_id.get("margaret")
    turns = _turns(system, village, "margaret", "tom")
    said = None if margaret is None else verdict(
        margaret.name, margaret.role, "Tom", village.affinity.get(("margaret", "tom")), before, [r.text for r in found],
        system.opinion("margaret", "tom"), [(t["day"], t["cause"], t["text"]) for t in turns],
        _held(village, "margaret", "tom"))
    if args.json:
        _print({"question": DEMO_QUESTION, "npc": "margaret", "day": day, "verdict": said, "turns": turns,
                "recalled": [r.to_json() for r in found], "days": summary.days, "diaries": summary.diaries,
                "stats": system.stats(), "seconds": round(elapsed, 1)})
        return
    print(f'\n{DEMO_QUESTION}  (margaret, on day {day})')
    if said is not None:
        print(said)
    print()
    for r in found:
        print(f"  score {r.score:.3f}  weighted {r.effective_score or 0:.3f}  imp {r.importance:.2f}  day {r.day:>2}  "
              f"[{r.source}] {r.text}{_note(system, r)}")
    stats = system.stats()
    print(
        f"\n{summary.days} days, {len(system.env.DB.prepare('SELECT npc_id FROM npc_state').all().results)} NPCs: "
        f"{stats['memories']} memories in D1 ({stats['summaries']} consolidated summaries), "
        f"{stats['vectors']} vectors in the index, {stats.get('consolidations', 0)} consolidations, "
        f"{stats.get('decay_runs', 0)} decay passes, "
        f"{stats.get('prunes', 0) + stats.get('cap_prunes', 0)} pruned from the index, "
        f"{stats.get('reembeds', 0)} re-embedded, {stats.get('retries', 0)} retries, "
        f"{stats['pending']} pending; {summary.diaries} diaries; {elapsed:.1f} s"
    )


def _note(system: MemorySystem, r: Any) -> str:
    """A recalled memory's key note; an older version in the key's newest run of one state value (said again
    since, never changed) is the state still held, not a superseded one."""
    if r.superseded_by is None or r.state_key is None:
        return key_note(r)
    newest_first = system.history(r.npc_id, r.state_key)
    value = newest_first[0].state_value if newest_first else None
    held = []
    for m in newest_first:
        if value is None or m.state_value != value:
            break
        held.append(m.id)
    return f"  [{r.state_key}]  (still held: said again later)" if r.id in held else key_note(r)


def _held(village: Any, npc: str, other: str) -> str | None:
    feeling = village.feelings.get((npc, other))
    return None if feeling is None else ("warm" if feeling.view > 0 else "cold")


def _turns(system: MemorySystem, village: Any, npc: str, other: str) -> list[dict[str, Any]]:
    """Each time the village turned `npc`'s view of `other`, oldest first: the day, the view it turned to, the kind
    of event that tipped it and that event's memory (its id and words, as the memory system holds it)."""
    return [{"day": t.when.day, "view": "warm" if t.view > 0 else "cold", "cause": t.cause, "memory": t.cause_id,
             "text": system.memory(t.cause_id).content}
            for t in village.turns if (t.npc_id, t.other_id) == (npc, other)]


def register(sub: Any) -> None:
    from memory_sim.cli import arguments
    from memory_sim.memory import rules

    demo = sub.add_parser("demo", help="run the seeded village, then ask what Margaret thinks of Tom")
    demo.add_argument("--days", type=arguments.whole("days", 1, rules.MAX_DAY), default=14)
    demo.add_argument("--npcs", type=arguments.village_npcs, default=8)
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument("--threads", type=arguments.whole("threads", 0, 1024),
                      help="threads one embedding uses (default: the embed_threads setting, 1; 0: the runtime's)")
    demo.add_argument("--timings", action="store_true",
                      help="print where the time went (model load, model forward, D1 statements) as JSON on stderr")
    demo.add_argument("--json", action="store_true", help="print the answer and the counts as JSON")
    demo.set_defaults(handler=cmd_demo)
