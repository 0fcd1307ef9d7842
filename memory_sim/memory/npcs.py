"""Registered NPCs: who an id is (name, role, aliases, traits), kept in D1's `npc_state`.

Recall's name expansion reads them, so a memory that says "the blacksmith" is found when a query names "Tom".
NPC ids are case-sensitive and validated once, at registration (memory/rules.py `npc_id`, no commas since
memories list the NPCs they are about comma-separated). Two ids that differ only in case are refused at
registration, and an id that is not registered but matches one in another case is refused with a hint
(`npc_named`), so `Margaret` never silently recalls nothing when `margaret` is meant.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_sim.bindings.d1 import D1Database
from memory_sim.errors import InvalidInput, NotFound
from memory_sim.memory import rules
from memory_sim.memory.ledger import store

MAX_NAME_BYTES = 200  # a name, role, alias or trait: short labels, not prose


@dataclass(frozen=True, slots=True)
class Npc:
    """A registered NPC, as `register_npc`, `npc` and `npcs` give it: its id (case-sensitive), name, role ("" for
    none), aliases and traits. Checked when built, here only: an id is an NPC id without commas, a name, role,
    alias or trait short text (at most 200 bytes), aliases and traits without commas and given as a list."""

    id: str
    name: str
    role: str = ""
    aliases: tuple[str, ...] = ()
    traits: tuple[str, ...] = ()
    place: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", registered_id(self.id))
        object.__setattr__(self, "name", label("name", self.name))
        object.__setattr__(self, "role", "" if self.role == "" else label("role", self.role))
        object.__setattr__(self, "aliases", _labels("aliases", self.aliases))
        object.__setattr__(self, "traits", _labels("traits", self.traits))

    def to_json(self) -> dict[str, Any]:
        """The NPC as JSON-ready values, as the CLI's `--json` prints it."""
        return {"id": self.id, "name": self.name, "role": self.role, "aliases": list(self.aliases),
                "traits": list(self.traits)}


def registered_id(value: Any) -> str:
    """An id an NPC may be registered under: an NPC id (rules.npc_id) without commas."""
    rules.npc_id(value)
    if "," in value:
        raise InvalidInput(
            f"npc_id must not hold commas (memories list the NPCs they are about comma-separated): {rules.shown(value)}"
        )
    return str(value)


def label(name: str, value: Any) -> str:
    """A name, role, alias or trait: short text; aliases and traits (kept comma-separated) without commas."""
    text = rules.text(name, value, MAX_NAME_BYTES).strip()
    if "," in text and name in ("aliases", "alias", "traits", "trait"):
        raise InvalidInput(f"{name} must not hold commas: {rules.shown(value)}")
    return text


def _labels(name: str, values: Iterable[Any]) -> tuple[str, ...]:
    if isinstance(values, str):
        raise InvalidInput(f"{name} must be a list of texts, not one text: {rules.shown(values)}")
    return tuple(label(name, v) for v in values)


def _row(npc: Npc) -> dict[str, Any]:
    return {"npc_id": npc.id, "name": npc.name, "role": npc.role, "description": ", ".join(npc.traits),
            "aliases": ",".join(npc.aliases), "traits": ",".join(npc.traits)}


def from_row(row: dict[str, Any]) -> Npc:
    traits = tuple(t for t in str(row.get("traits") or "").split(",") if t)
    if not traits and row.get("description"):  # rows written before traits existed
        traits = tuple(t.strip() for t in str(row["description"]).split(",") if t.strip())
    aliases = tuple(a for a in str(row.get("aliases") or "").split(",") if a)
    return Npc(str(row["npc_id"]), str(row["name"]), str(row.get("role") or ""), aliases, traits)


def make(npc_id: Any, name: Any, role: Any = None, aliases: Iterable[Any] = (), traits: Iterable[Any] = ()) -> Npc:
    """An `Npc` from the caller's values (`role=None`: none); `Npc` checks them."""
    return Npc(npc_id, name, "" if role is None else role, aliases, traits)  # type: ignore[arg-type]


def _case_twin(db: D1Database, npc_id: str) -> str | None:
    """A registered id equal to `npc_id` but for case, or None."""
    folded = npc_id.casefold()
    for row in store.npc_profiles(db):
        if row["npc_id"] != npc_id and str(row["npc_id"]).casefold() == folded:
            return str(row["npc_id"])
    return None


def register(db: D1Database, npc: Npc, *, replace: bool = True) -> Npc:
    twin = _case_twin(db, npc.id)
    if twin is not None:
        raise InvalidInput(
            f"npc_id {npc.id!r} differs from the registered NPC {twin!r} only in case; "
            f"NPC ids are case-sensitive: use {twin!r}"
        )
    db.batch([store.put_npc(db, _row(npc), replace=replace), store.bump_npc_revision(db)])  # recall's cache
    return get(db, npc.id)


def register_many(db: D1Database, npcs: Sequence[Npc]) -> None:
    """Registers NPCs not yet registered (existing rows are kept): the village's NPCs on every run."""
    if npcs:
        db.batch([*(store.put_npc(db, _row(n), replace=False) for n in npcs), store.bump_npc_revision(db)])


def all_npcs(db: D1Database) -> list[Npc]:
    return [from_row(r) for r in store.npc_profiles(db)]


def get(db: D1Database, npc_id: str) -> Npc:
    rules.text("npc_id", npc_id)
    row = store.npc_profile(db, npc_id)
    if row is None:
        raise NotFound(f"no NPC {npc_id!r} is registered{_hint(db, npc_id)}")
    return from_row(row)


def _hint(db: D1Database, npc_id: str) -> str:
    twin = _case_twin(db, npc_id)
    return "" if twin is None else f"; NPC ids are case-sensitive: did you mean {twin!r}?"


def refuse_case_twin(db: D1Database, npc_id: str) -> None:
    """Raises InvalidInput when `npc_id` is not registered but another case of it is (recall would find nothing)."""
    if store.npc_profile(db, npc_id) is None:
        hint = _hint(db, npc_id)
        if hint:
            raise InvalidInput(f"no NPC {npc_id!r}{hint}")


def refuse_unknown(db: D1Database, npc_id: str) -> None:
    """Raises InvalidInput when the NPC is neither registered nor has any memory (forgotten ones count): a typo,
    a capital, or a name or role given for an id is a mistake, not an empty answer. The message is the CLI's,
    with a hint: the registered NPC whose name, alias or role it is ("did you mean 'ada' (the innkeeper)?"), the
    id in another case, or an id one typo away."""
    refuse_case_twin(db, npc_id)
    if store.npc_profile(db, npc_id) is not None or store.has_memories(db, npc_id):
        return
    raise InvalidInput(f"no memories of NPC {npc_id!r}{unknown_hint(db, npc_id)}")


def unknown_hint(db: D1Database, npc_id: str) -> str:
    """What `refuse_unknown` adds after "no memories of NPC 'x'": the likeliest NPC meant, else how many memories
    the other NPCs have."""
    named = _named_so(db, npc_id)
    if named is not None:
        return f"; did you mean {named.id!r}" + (f" ({named.role})?" if named.role else "?")
    other = store.memory_npc_in_other_case(db, npc_id) or _one_typo_away(db, npc_id)
    return f"; did you mean {other!r}?" if other else f" ({store.count_memories(db)} memories of other NPCs)"


def _plain(words: str) -> str:
    """Words compared without case, spacing or a leading article: "The  Innkeeper" and "innkeeper" agree."""
    folded = " ".join(words.casefold().split())
    for article in ("the ", "a ", "an "):
        if folded.startswith(article):
            return folded[len(article):]
    return folded


def _named_so(db: D1Database, words: str) -> Npc | None:
    """The registered NPC whose name, alias or role `words` is ("the baker" or "baker" -> Hilda), or None."""
    wanted = _plain(words)
    for npc in all_npcs(db):
        if wanted in (_plain(c) for c in (npc.name, *npc.aliases, npc.role) if c):
            return npc
    return None


def _one_typo_away(db: D1Database, npc_id: str) -> str | None:
    """The registered or remembering NPC id closest to a misspelt one (difflib's ratio 0.8 or more), or None."""
    known = {n.id for n in all_npcs(db)} | set(store.memory_npc_ids(db))
    close = difflib.get_close_matches(npc_id, sorted(known), n=1, cutoff=0.8)
    return close[0] if close else None
