"""`memory-sim remember | recall | consolidate | prune | retry | stats | reembed | run` (`demo`: cli/demo.py).

One verb, one library call on `MemorySystem`. The world's time for these commands is the one the data folder
has reached (`store.world_seconds`: saved by the demo and by `run`, or the last scheduled job's time when they
were killed); `--day` overrides it where it matters. Verbs that write first retry what a dead process left
pending (`retry_pending` takes every never-attempted pending memory: one attempt, then the usual backoff).
Heavy libraries load inside handlers only.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_sim.cli.output import key_note

if TYPE_CHECKING:
    from memory_sim.env import Env
    from memory_sim.memory.system import MemorySystem

ALWAYS_JSON = "JSON either way (accepted so that a script can always pass it)"


def _open(
    args: argparse.Namespace,
    clock: Callable[[], float] | None = None,
    *,
    env: Env | None = None,
    resume: bool = False,
    reads: bool = False,
) -> tuple[Env, MemorySystem]:
    from memory_sim.env import Env
    from memory_sim.memory.ledger import store
    from memory_sim.memory.system import MemorySystem

    if reads and env is None:
        _refuse_missing_folder(args.settings)
    env = env if env is not None else Env.from_settings(args.settings)  # the model its index records, unless told
    if clock is None:
        system = MemorySystem(env, clock=lambda: 0.0)
        seconds = store.world_seconds(env.DB)
        if getattr(args, "day", None) is not None:
            seconds = float(args.day) * 86400.0 + 23 * 3600.0
        system.clock = lambda: seconds
    else:
        system = MemorySystem(env, clock=clock)
    if resume:
        _resume(system)
    return env, system


def _refuse_missing_folder(settings: Any) -> None:
    """A verb that only reads must not create an empty folder for a mistyped --data and report zeros from it."""
    from memory_sim.errors import ConfigError

    folder = Path(settings.data_dir)
    if settings.backend == "local" and not folder.is_dir():
        raise ConfigError(f"no data folder {str(folder)!r} (a mistyped --data or $MEMORY_SIM_DATA?); "
                          "`memory-sim remember` or `memory-sim demo` creates one")


def _known_npc(system: MemorySystem, npc_id: str) -> None:
    """An NPC neither registered nor with any memory is a mistake (a typo, a capital, a role given for an id), not
    an empty answer: refused as the library refuses it, with its hint (memory/npcs.py `refuse_unknown`)."""
    from memory_sim.memory import npcs

    npcs.refuse_unknown(system.env.DB, npc_id)


def _resume(system: MemorySystem) -> None:
    """Indexes what a dead process left pending before the verb runs; says so on stderr when there was any."""
    import sys

    report = system.retry_pending()
    if report.embedded or report.failed:
        failed = f", {report.failed} failed again (retried later)" if report.failed else ""
        print(f"left pending by an earlier run: {report.embedded} indexed now{failed}", file=sys.stderr)


def _print(obj: Any) -> None:
    print(json.dumps(obj, indent=2, sort_keys=True))


# --- single verbs ---------------------------------------------------------------------------------------------


def cmd_remember(args: argparse.Namespace) -> int:
    from memory_sim.memory.models import ShortTermMemory, WorldTime

    env, system = _open(args, resume=True)
    with env:
        now = WorldTime.from_seconds(system.clock())
        when = WorldTime(now.day if args.day is None else args.day, args.hour if args.hour is not None else now.hour)
        memory = ShortTermMemory(args.npc, args.text, args.importance, when, args.type, args.about,
                                 state_key=args.key, state_value=args.value, infer_key=not args.no_key)
        indexed = system.remember(memory)
        if args.json:
            _print({"id": memory.id, "indexed": indexed})
        else:
            where = "in D1 and the index" if indexed else "in D1 only (not in the index now)"
            print(f"remembered {memory.id} {where}")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    from memory_sim.errors import InvalidInput

    if args.day is not None and not args.weighted:
        raise InvalidInput("--day only counts with --weighted (it is the day ages are measured from)")
    if args.scoring is not None and not args.weighted:
        raise InvalidInput("--scoring only counts with --weighted (it is how weighted recall ranks)")
    env, system = _open(args, reads=True)
    with env:
        _known_npc(system, args.npc)
        if args.weighted:
            found = system.weighted_recall(args.npc, args.query, args.day, top_k=args.top_k, mode=args.mode,
                                           scoring=args.scoring or "design")
        else:
            found = system.recall(args.npc, args.query, top_k=args.top_k, mode=args.mode)
        if args.json:
            _print([r.to_json() for r in found])
            return 0
        for r in found:
            weighted = "" if r.effective_score is None else f"  weighted {r.effective_score:.3f}"
            print(f"{r.score:.3f}{weighted}  imp {r.importance:.2f}  day {r.day}  [{r.source}] {r.text}{key_note(r)}")
    return 0


def _job(name: str) -> Callable[[argparse.Namespace], int]:
    """A memory job at the folder's world time (or --day's end). Consolidation and decay go through the scheduler's
    record, as `run` does: a period already done is not done again, and `run` will not redo this one. The retry
    always runs: it takes what a dead process left pending, whenever that was."""

    def handler(args: argparse.Namespace) -> int:
        from dataclasses import asdict

        from memory_sim.memory.models import WorldTime
        from memory_sim.scheduling import memory_jobs, run_if_due

        env, system = _open(args, resume=name != "retry_pending", reads=True)  # the retry takes what was left
        with env:
            if name == "retry_pending":
                _print(asdict(system.retry_pending()))
                return 0
            now = system.clock()
            job = next(j for j in memory_jobs(system) if j.name == name)
            report = run_if_due(system, job, now)
            if report is None:
                when = WorldTime.from_seconds(now)
                _print({"job": name, "skipped": f"already done for day {when.day} hour {when.hour}"})
            else:
                _print(asdict(report))
        return 0

    return handler


def cmd_stats(args: argparse.Namespace) -> int:
    env, system = _open(args, reads=True)
    with env:
        counts = system.stats()
        if args.json:
            _print(counts)
        else:
            width = max(map(len, counts), default=0)
            print("\n".join(f"{name:<{width}}  {value}" for name, value in sorted(counts.items())))
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    """Erased text leaves the data folder's files now (MemorySystem.compact), instead of at the next `compact` job."""
    from dataclasses import asdict

    from memory_sim.errors import DataInUseError

    env, system = _open(args, reads=True)
    with env:
        if args.settings.backend == "local" and not env.compact_hooks:  # opened through the folder's owner
            raise DataInUseError(f"{args.settings.data_dir} is served by another process, whose hourly `compact` "
                                 "job removes erased text; stop it first to compact now")
        _print(asdict(system.compact()))
    return 0


def cmd_reembed(args: argparse.Namespace) -> int:
    """With --model M alone, D1 is re-embedded with M into a staging index that replaces the live one when
    complete (memory/jobs/staged_reembed.py: any backend, resumed by running the same command again). With --recreate
    the index is dropped and recreated first, then D1 is re-embedded into it; the index's description records the
    model, and later plain opens use it. Damaged index files are moved aside first and the index is rebuilt from
    D1 (memory_sim/damage.py)."""
    from memory_sim.damage import run_with_index_rebuilt
    from memory_sim.env import Env
    from memory_sim.memory.jobs.rebuild import queue_for_reindex, reembed

    def work(env: Env) -> dict[str, Any]:
        _, system = _open(args, env=env)
        count = reembed(system)
        return {"reembedded": count, "model": env.embedder.model, "dimensions": env.embedder.dimensions}

    if args.embed_model is not None and not args.recreate:
        return _reembed_staged(args)
    recreate = args.recreate
    _print(run_with_index_rebuilt(
        lambda: Env.from_settings(args.settings, rebuild_index=recreate, before_rebuild=queue_for_reindex), work))
    return 0


def _reembed_staged(args: argparse.Namespace) -> int:
    from memory_sim.damage import run_with_index_rebuilt
    from memory_sim.env import Env
    from memory_sim.memory.jobs.staged_reembed import ReembedReport, reembed_staged

    def work(env: Env) -> ReembedReport:
        if env.vectorize_account is None:
            raise ValueError("re-embedding needs the Vectorize account in the Env")
        return reembed_staged(env.vectorize_account, env.DB, env.VECTORIZE.name, env.embedder)

    report = run_with_index_rebuilt(lambda: Env.from_settings(args.settings, new_index=True), work)
    _print({"reembedded": report.embedded, "model": report.model, "dimensions": report.dimensions,
            "copied": report.copied, "resumed": report.resumed})
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Runs the jobs until --for-seconds pass or SIGTERM/SIGINT comes: then the job under way finishes (each D1
    batch commits or rolls back whole), the world time is saved, one summary line is printed, and it exits 0."""
    import logging

    from memory_sim.cli.output import progress, say
    from memory_sim.memory.ledger import store
    from memory_sim.memory.models import WorldTime
    from memory_sim.scheduling import WorldClock, day_counts, day_summary, start_service, stop_on_signals

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    with stop_on_signals() as stop:  # from here on, a signal asks for a clean stop
        env, system = _open(args, resume=True)
        with env:
            clock = WorldClock(system.clock(), args.scale)
            system.clock = clock
            try:
                if not stop.is_set():
                    scheduler = start_service(system, args.scale)
                    start = WorldTime.from_seconds(clock.origin)
                    progress(args, f"running the memory jobs from day {start.day} hour {start.hour} "
                                   f"(world x{args.scale}); Ctrl-C or SIGTERM stops")
                    try:
                        _wait(stop, args.for_seconds)
                    finally:
                        scheduler.shutdown(wait=True)  # lets the job under way finish
            finally:
                now = clock()
                store.set_meta(env.DB, "world_seconds", repr(now))
            system.clock = lambda: now
            say(args, f"stopped at {day_summary(system)}", {"stopped_at": day_counts(system)})
    return 0


def _wait(stop: Any, for_seconds: float | None) -> None:
    import time

    deadline = None if for_seconds is None else time.monotonic() + for_seconds
    while not stop.wait(0.2):
        if deadline is not None and time.monotonic() >= deadline:
            return


# --- registration ---------------------------------------------------------------------------------------------


def register(sub: Any) -> None:
    from memory_sim.cli import arguments
    from memory_sim.memory import rules

    remember = sub.add_parser("remember", help="store one memory (D1, and the index if important)")
    remember.add_argument("npc", type=arguments.npc_id, help=f"the NPC's id (at most {rules.MAX_NPC_ID_BYTES} bytes)")
    remember.add_argument("text", type=arguments.memory_text)
    remember.add_argument("--importance", type=arguments.importance, default=0.5, help="0..1 (default 0.5)")
    remember.add_argument("--type", default="event", choices=["event", "relationship", "opinion", "place"])
    remember.add_argument(
        "--about", type=arguments.about, default=(), help="comma-separated NPC ids the memory is about"
    )
    remember.add_argument("--key", type=arguments.state_key,
                          help="the piece of state it sets, e.g. debt:mira (default: inferred)")
    remember.add_argument("--value", type=arguments.state_value,
                          help="the value it gives that state, e.g. warm (the same value again restates it)")
    remember.add_argument("--no-key", action="store_true", help="it sets no state: infer no key")
    remember.add_argument("--day", type=arguments.day, help="the world's day (default: the stored world time)")
    remember.add_argument("--hour", type=arguments.hour, help="0..23 (default: the stored world time's)")
    remember.add_argument("--json", action="store_true", help="print the id and whether it is indexed as JSON")
    remember.set_defaults(handler=cmd_remember)

    recall = sub.add_parser("recall", help="an NPC's memories by meaning")
    recall.add_argument("npc", type=arguments.npc_to_recall)
    recall.add_argument("query", type=arguments.query)
    recall.add_argument("--weighted", action="store_true", help="rank by score x importance / age decay")
    recall.add_argument("--day", type=arguments.day, help="current day for --weighted (default: the world's)")
    recall.add_argument("--scoring", choices=["design", "generative-agents-paper", "generative-agents-code"],
                        help="how --weighted ranks (default design: score x importance / age decay)")  # = SCORINGS
    recall.add_argument("--top-k", type=arguments.top_k, default=5, help="1..100 (default 5)")
    recall.add_argument("--mode", default="hybrid", choices=["vector", "keyword", "hybrid"])  # = DEFAULT_RECALL_MODE
    recall.add_argument("--json", action="store_true")
    recall.set_defaults(handler=cmd_recall)

    for verb, method, text in (
        ("consolidate", "consolidate", "condense older diaries into indexed summaries"),
        ("prune", "decay_and_prune", "grow decay factors; re-embed or drop faded memories"),
        ("retry", "retry_pending", "embed memories whose embedding failed before"),
    ):
        parser = sub.add_parser(verb, help=text)
        parser.add_argument("--day", type=arguments.day, help="the world's day (default: the stored world time)")
        parser.add_argument("--json", action="store_true", help=ALWAYS_JSON)
        parser.set_defaults(handler=_job(method))

    compact = sub.add_parser("compact", help="remove forgotten and corrected text from the data folder's files now",
                             description="Purges Chroma's log and vacuums its file, and rewrites D1's file, so no "
                             "file of the folder holds text that forget, update or forget-npc removed. The "
                             "hourly `compact` job does the same after an erasure; closing the folder does too.")
    compact.add_argument("--json", action="store_true", help=ALWAYS_JSON)
    compact.set_defaults(handler=cmd_compact)
    stats = sub.add_parser("stats", help="memories in D1, vectors, counters")
    stats.add_argument("--json", action="store_true", help="print the counts as JSON")
    stats.set_defaults(handler=cmd_stats)
    rebuild = sub.add_parser("reembed", help="rebuild the vector index from D1 (e.g. after changing model)",
                             description="With --model M the index is recreated for M (a known name or a "
                             "sentence-transformers folder) and later opens of the folder use it.")
    rebuild.add_argument("--recreate", action="store_true", help="drop and recreate the index first")
    rebuild.add_argument("--json", action="store_true", help=ALWAYS_JSON)
    rebuild.set_defaults(handler=cmd_reembed)
    run = sub.add_parser("run", help="run the memory jobs on the wall clock (APScheduler)")
    run.add_argument("--scale", type=arguments.number("scale", 0.0, above_low=True), default=1.0,
                     help="world seconds per real second")
    run.add_argument(
        "--for-seconds",
        type=arguments.number("for_seconds", 0.0),
        help="stop after this long (default: until Ctrl-C or SIGTERM)",
    )
    run.add_argument("--json", action="store_true", help="print where the world stopped as JSON (the log stays text)")
    run.set_defaults(handler=cmd_run)
