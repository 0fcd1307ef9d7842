"""`memory-sim check [--repair] [--json]`: drift between D1's ledger and the vector index (memory_sim/check.py).

Exit codes: 0 when the two agree (or `--repair` made them agree), 1 when drift remains.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

_KINDS = ("missing", "unknown", "disowned", "duplicated", "stranded", "metadata")
_MEANING = {
    "missing": "marked indexed in D1 but absent from the index",
    "unknown": "in the index but unknown to D1",
    "disowned": "in the index but deleted from it in D1 (none/unindexed)",
    "duplicated": "listed more than once by the index",
    "stranded": "pending in D1, its outbox row out of attempts: no retry takes it",
    "metadata": "metadata in the index disagreeing with D1",
}


def register(sub: Any) -> None:
    check = sub.add_parser("check", help="report drift between D1's ledger and the index; --repair fixes it from D1")
    check.add_argument("--repair", action="store_true", help="make the index match D1 (the ledger is the truth)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument("--no-metadata", action="store_true", help="skip comparing each vector's metadata")
    check.set_defaults(handler=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    """With --repair, damaged index files are moved aside and the index is rebuilt from D1 (memory_sim/damage.py)."""
    from memory_sim.check import check, repair
    from memory_sim.damage import run_with_index_rebuilt
    from memory_sim.env import Env

    def work(env: Env) -> dict[str, Any]:
        report = check(env, compare_metadata_fields=not args.no_metadata)
        out: dict[str, Any] = {"before": report.to_json()}
        if args.repair and not report.clean:
            out["repair"] = repair(env, report).to_json()
            out["after"] = check(env, compare_metadata_fields=not args.no_metadata).to_json()
        return out

    if args.repair:
        out = run_with_index_rebuilt(lambda: Env.from_settings(args.settings), work)
    else:
        with Env.from_settings(args.settings) as env:
            out = work(env)
    if args.json:
        print(json.dumps(out, indent=2, sort_keys=True, default=str))
    else:
        _print_text(out)
    return 0 if out.get("after", out["before"])["clean"] else 1


def _print_text(out: dict[str, Any]) -> None:
    before = out["before"]
    print(f"ledger: {before['memories']} memories, {before['due']} marked indexed, {before['pending']} pending; "
          f"index: {before['vectors']} vectors")
    for kind in _KINDS:
        ids = before[kind]
        if ids:
            shown = [m["id"] if isinstance(m, dict) else m for m in ids[:5]]
            print(f"  {len(ids)} {_MEANING[kind]}: {', '.join(shown)}{' ...' if len(ids) > 5 else ''}")
    for problem in before.get("metadata_indexes", []):
        print(f"  metadata index {problem}: recall cannot filter every vector by it")
    print("no drift" if before["clean"] else f"drift: {before['drift']} memories"
          + (f", {len(before['metadata_indexes'])} metadata indexes" if before.get("metadata_indexes") else ""))
    if "repair" in out:
        fixed = out["repair"]
        restored = (f", {fixed['metadata_indexes']} metadata indexes restored "
                    f"({fixed['reindexed']} vectors re-upserted)" if fixed.get("metadata_indexes") else "")
        print(f"repaired: {fixed['upserted']} upserted, {fixed['deleted']} deleted, {fixed['requeued']} re-queued"
              f"{restored}; "
              + ("now no drift" if out["after"]["clean"] else f"still {out['after']['drift']} drifting"))
