"""Which NPCs a memory is about: its `about` ids, and the registered NPCs its text names (pure, no I/O).

A state key names the NPC a piece of state is about ("opinion:tom"); memories often say "the blacksmith" rather
than "Tom", so a text names an NPC by its id, name, alias or role, as whole words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def _names_of(profile: Mapping[str, Any]) -> list[str]:
    aliases = str(profile.get("aliases") or "").split(",")
    found = [str(profile.get("npc_id") or ""), str(profile.get("name") or ""), *aliases, str(profile.get("role") or "")]
    return [" ".join(words(n)) for n in found if words(n)]


def named_in(text: str, profiles: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The ids of the registered NPCs the text names (by id, name, alias or role, whole words), sorted."""
    joined = f" {' '.join(words(text))} "
    return tuple(sorted(str(p["npc_id"]) for p in profiles if any(f" {n} " in joined for n in _names_of(p))))


def key_subjects(owner: str, about: Sequence[str], text: str, profiles: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """What key inference is told a memory is about: its `about` ids and the NPCs its text names, the memory's own
    NPC (`owner`) left out, sorted."""
    return tuple(sorted({*about, *named_in(text, profiles)} - {owner}))
