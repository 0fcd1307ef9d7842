"""`memory-sim npcs | npc | memories | forget | context | relationship | diary`: who the NPCs are, what each
remembers, and the memory system's three uses, each one `MemorySystem` call (cli/memory.py opens the folder).
"""

from __future__ import annotations

import argparse
from typing import Any

from memory_sim.cli.memory import _known_npc, _open, _print
from memory_sim.cli.output import key_note


def _memory_json(memory: Any) -> dict[str, Any]:
    return {"id": memory.id, "npcId": memory.npc_id, "text": memory.content, "importance": memory.importance,
            "day": memory.day, "hour": memory.hour, "type": memory.type, "kind": memory.kind,
            "state": memory.index_state, "about": list(memory.about), "stateKey": memory.state_key,
            "keyConfidence": memory.key_confidence, "keySource": memory.key_source, "stateValue": memory.state_value}


def _memory_line(memory: Any) -> str:
    when = f"day {memory.day} {memory.hour:02d}h"
    return f"{memory.id}  {when}  imp {memory.importance:.2f}  [{memory.index_state}] {memory.content}"


def _recollection_lines(found: list[Any]) -> list[str]:
    return [f"{r.effective_score or r.score:.3f}  imp {r.importance:.2f}  day {r.day}  {r.text}{key_note(r)}"
            for r in found]


def cmd_npcs(args: argparse.Namespace) -> int:
    env, system = _open(args)
    with env:
        found = system.npcs()
        if args.json:
            _print([n.to_json() for n in found])
        for n in [] if args.json else found:
            print(f"{n.id}  {n.name}" + (f" ({n.role})" if n.role else ""))
    return 0


def cmd_npc(args: argparse.Namespace) -> int:
    """Shows an NPC; with --name (a new NPC) or any field option (an existing one), registers or updates it."""
    changes = {k: getattr(args, k) for k in ("name", "role", "aliases", "traits") if getattr(args, k) is not None}
    env, system = _open(args)
    with env:
        if changes:
            known = {n.id for n in system.npcs()}
            npc = (
                system.update_npc(args.id, **changes)
                if args.id in known
                else system.register_npc(args.id, **_new(changes))
            )
        else:
            npc = system.npc(args.id)
        if args.json:
            _print(npc.to_json())
        else:
            print(f"{npc.id}  {npc.name}  role: {npc.role or '-'}  aliases: {', '.join(npc.aliases) or '-'}  "
                  f"traits: {', '.join(npc.traits) or '-'}")
    return 0


def _new(changes: dict[str, Any]) -> dict[str, Any]:
    from memory_sim.errors import InvalidInput

    if "name" not in changes:
        raise InvalidInput("a new NPC needs --name")
    return changes


def cmd_memories(args: argparse.Namespace) -> int:
    env, system = _open(args, reads=True)
    with env:
        _known_npc(system, args.npc)
        page = system.memories(args.npc, since_day=args.since_day, until_day=args.until_day, type=args.type,
                               kind=args.kind, state=args.state, limit=args.limit, cursor=args.cursor)
        if args.json:
            _print({"memories": [_memory_json(m) for m in page.memories], "cursor": page.cursor})
            return 0
        for memory in page.memories:
            print(_memory_line(memory))
        if page.cursor is not None:
            print(f"more: --cursor {page.cursor}")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from memory_sim.errors import InvalidInput

    if bool(args.ids) == (args.npc is not None):
        raise InvalidInput("forget takes memory ids or --npc NPC (one of the two)")
    env, system = _open(args, resume=True)  # also finishes a forget a crash cut short
    with env:
        done = system.forget_npc(args.npc) if args.npc is not None else system.forget(args.ids, args.reason)
        if args.json:
            _print({"forgotten": done})
        else:
            print(f"forgot {len(done)} memor{'y' if len(done) == 1 else 'ies'}")
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    env, system = _open(args)
    with env:
        found = system.decision_context(args.npc, args.situation, top_k=args.top_k)
        if args.json:
            _print([r.to_json() for r in found])
        for line in [] if args.json else _recollection_lines(found):
            print(line)
    return 0


def cmd_relationship(args: argparse.Namespace) -> int:
    env, system = _open(args)
    with env:
        context = system.relationship_context(args.a, args.b, top_k=args.top_k)
        if args.json:
            _print({args.a: [r.to_json() for r in context.a_recalls], args.b: [r.to_json() for r in context.b_recalls],
                    "opinions": {args.a: context.a_opinion, args.b: context.b_opinion},
                    "views": {args.a: list(context.a_views), args.b: list(context.b_views)}})
            return 0
        for who, found, opinion in ((args.a, context.a_recalls, context.a_opinion),
                                    (args.b, context.b_recalls, context.b_opinion)):
            print(f"{who} recalls:" + (f" {opinion}" if opinion else ""))
            for line in _recollection_lines(found):
                print(f"  {line}")
    return 0


def cmd_state(args: argparse.Namespace) -> int:
    """An NPC's current state (its newest memory under each state key), or with a key that key's history."""
    env, system = _open(args)
    with env:
        if args.key is None:
            found = sorted(system.current_state(args.npc).items())
        else:
            found = [(args.key, m) for m in system.history(args.npc, args.key)]
        if args.json:
            _print([dict(_memory_json(m), stateKey=key) for key, m in found])
            return 0
        for key, m in found:
            print(f"{key}  day {m.day} {m.hour:02d}h  {m.content}  ({m.key_source}, {m.key_confidence or 0:.2f})")
    return 0


def cmd_diary(args: argparse.Namespace) -> int:
    """The stored diary of that day; --write writes it first (as the village does at the day's end)."""
    from memory_sim.errors import NotFound
    from memory_sim.memory.ledger import store

    env, system = _open(args)
    with env:
        text = system.write_diary(args.npc, args.day) if args.write else store.diary(env.DB, args.npc, args.day)
        if not text:
            raise NotFound(
                f"no diary of {args.npc!r} for day {args.day}" + ("" if args.write else " (--write writes one)")
            )
        if args.json:
            _print({"npcId": args.npc, "day": args.day, "text": text})
        else:
            print(text)
    return 0


def register(sub: Any) -> None:
    from memory_sim.cli import arguments
    from memory_sim.memory import rules  # the page limit and states, without importing the memory system

    def verb(name: str, help: str, handler: Any) -> Any:
        parser = sub.add_parser(name, help=help)
        parser.add_argument("--json", action="store_true")
        parser.set_defaults(handler=handler)
        return parser

    verb("npcs", "the registered NPCs", cmd_npcs)
    npc = verb("npc", "show an NPC; with --name/--role/--alias/--trait, register or update it", cmd_npc)
    npc.add_argument("id", type=arguments.registered_npc_id)
    npc.add_argument("--name", type=arguments.label("name"))
    npc.add_argument("--role", type=arguments.label("role"))
    npc.add_argument("--alias", dest="aliases", action="append", type=arguments.label("alias"), help="repeatable")
    npc.add_argument("--trait", dest="traits", action="append", type=arguments.label("trait"), help="repeatable")

    memories = verb("memories", "list an NPC's memories (remember order, a page at a time)", cmd_memories)
    memories.add_argument("npc", type=arguments.npc_to_recall)
    memories.add_argument("--since-day", type=arguments.day)
    memories.add_argument("--until-day", type=arguments.day)
    memories.add_argument("--type", choices=["event", "relationship", "opinion", "place"])
    memories.add_argument("--kind", choices=["observation", "summary"])
    memories.add_argument("--state", choices=list(rules.MEMORY_STATES))
    memories.add_argument(
        "--limit", type=arguments.whole("limit", 1, rules.PAGE_LIMIT), default=rules.PAGE_LIMIT
    )
    memories.add_argument("--cursor", type=arguments.cursor, help="the cursor the previous page printed")

    forget = verb("forget", "forget memories (D1 and the index), or all of an NPC's with --npc", cmd_forget)
    forget.add_argument("ids", nargs="*", type=arguments.memory_id)
    forget.add_argument(
        "--npc", type=arguments.npc_to_recall, help="forget the NPC: all its memories and its registration"
    )
    forget.add_argument("--reason", type=arguments.reason, default="forgotten with memory-sim forget")

    context = verb("context", "what an NPC recalls when deciding (decision_context)", cmd_context)
    context.add_argument("npc", type=arguments.npc_to_recall)
    context.add_argument("situation", type=arguments.query)
    context.add_argument("--top-k", type=arguments.top_k, default=5)

    relationship = verb("relationship", "what two NPCs recall of each other", cmd_relationship)
    relationship.add_argument("a", type=arguments.npc_to_recall)
    relationship.add_argument("b", type=arguments.npc_to_recall)
    relationship.add_argument("--top-k", type=arguments.top_k, default=5)

    state = verb("state", "an NPC's current state (newest memory under each key), or a key's history", cmd_state)
    state.add_argument("npc", type=arguments.npc_to_recall)
    state.add_argument("key", nargs="?", type=arguments.state_key, help="a state key: its history, newest first")

    diary = verb("diary", "an NPC's diary of one day", cmd_diary)
    diary.add_argument("npc", type=arguments.npc_to_recall)
    diary.add_argument("--day", type=arguments.day, required=True)
    diary.add_argument("--write", action="store_true", help="write the day's diary from its memories first")
