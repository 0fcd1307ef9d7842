"""What the memory system's values may hold: one rule per field, shared by the typed values (models.py), recall
(system.py) and the command line's argument types (cli/arguments.py), so the Python API and `memory-sim` refuse
the same input in the same words. Each rule returns the value it checked or raises `InvalidInput`.
"""

from __future__ import annotations

import math
import numbers
import operator
import unicodedata
from typing import Any

from memory_sim.bindings.limits import (
    D1_MAX_STRING_OR_BLOB_BYTES,
    VECTORIZE_MAX_TOP_K,
    VECTORIZE_METADATA_INDEX_STRING_BYTES,
)
from memory_sim.errors import InvalidInput

# An NPC id is the `npcId` metadata recall filters on, and Vectorize's metadata index keeps only the first 64 bytes
# of a string: two longer ids sharing those bytes could not be told apart by the filter.
MAX_NPC_ID_BYTES = VECTORIZE_METADATA_INDEX_STRING_BYTES
MAX_TEXT_BYTES = D1_MAX_STRING_OR_BLOB_BYTES  # D1's limit on one string
# About 2.7 million years of world time: world seconds stay exact in a float, and days fit in the 64-byte ids.
MAX_DAY = 1_000_000_000
HOURS_PER_DAY = 24
# A memory's index states, and the most memories one page of `memories()` holds (memory/writing/forgetting.py);
# here so that the command line's parser reads them without importing the memory system.
MEMORY_STATES = ("none", "pending", "indexed", "unindexed", "forgotten")
PAGE_LIMIT = 100


def shown(value: Any, limit: int = 60) -> str:
    """A value for an error message: its repr, cut short (a bad text can be long)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def utf8_size(name: str, value: str) -> int:
    """Bytes in UTF-8; a lone surrogate (what undecodable bytes become in Python) is refused here, not in D1."""
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput(f"{name} is not valid Unicode text (bytes that are not UTF-8?): {shown(value)}") from None


def text(name: str, value: Any, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """Non-empty, not only whitespace, valid Unicode, at most `max_bytes` in UTF-8."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text, got {type(value).__name__}")
    if not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    size = utf8_size(name, value)
    if size > max_bytes:
        raise InvalidInput(f"{name} is {size} bytes in UTF-8; at most {max_bytes} are allowed: {shown(value)}")
    return value


def npc_id(value: Any, name: str = "npc_id") -> str:
    """An NPC id new memories may carry: text of at most 64 UTF-8 bytes, with no control characters."""
    text(name, value)
    size = utf8_size(name, value)
    if size > MAX_NPC_ID_BYTES:
        raise InvalidInput(
            f"{name} is {size} bytes in UTF-8; NPC ids take at most {MAX_NPC_ID_BYTES} (Vectorize filters "
            f"metadata strings by their first {MAX_NPC_ID_BYTES} bytes): {shown(value)}"
        )
    if any(unicodedata.category(c) == "Cc" for c in value):
        raise InvalidInput(f"{name} must not hold control characters: {shown(value)}")
    return value


def about(values: Any) -> tuple[str, ...]:
    """The NPC ids a memory is about; D1 keeps them comma-separated, so an id here holds no comma. A plain string
    is refused: `tuple("bram")` would silently store ('b', 'r', 'a', 'm')."""
    if isinstance(values, (str, bytes)):
        raise InvalidInput(f"about takes a list of NPC ids, not one string: write ({shown(values)},)")
    try:
        ids = tuple(values)
    except TypeError:
        raise InvalidInput(f"about takes a list of NPC ids, got {type(values).__name__}: {shown(values)}") from None
    for value in ids:
        npc_id(value, "about")
        if "," in value:
            raise InvalidInput(f"about takes NPC ids without commas: {shown(value)}")
    return ids


STATE_KEY_MAX_BYTES = 64


def state_key(value: Any) -> str | None:
    """A piece of state a memory sets ("opinion:tom", "debt:mira", "home", "health"): None, or 1-64 bytes of
    lower-case words, digits, ':', '_', '-' and '.'; the newest memory of an NPC under a key is its current state."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"state_key must be None or a non-empty string, got {shown(value)}")
    if utf8_size("state_key", value) > STATE_KEY_MAX_BYTES:
        raise InvalidInput(f"state_key takes at most {STATE_KEY_MAX_BYTES} bytes in UTF-8: {shown(value)}")
    if not all(c.isalnum() or c in ":_-." for c in value) or value != value.lower():
        raise InvalidInput(
            f"state_key takes lower-case letters, digits, ':', '_', '-' and '.' (e.g. 'debt:mira'): {shown(value)}"
        )
    return value


STATE_VALUE_MAX_BYTES = 32


def state_value(value: Any) -> str | None:
    """The value a memory gives its state ("warm", "cold", "paid"): None, or 1-32 bytes of lower-case words,
    digits, '_', '-' and '.'."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"state_value must be None or a non-empty string, got {shown(value)}")
    if utf8_size("state_value", value) > STATE_VALUE_MAX_BYTES:
        raise InvalidInput(f"state_value takes at most {STATE_VALUE_MAX_BYTES} bytes in UTF-8: {shown(value)}")
    if not all(c.isalnum() or c in "_-." for c in value) or value != value.lower():
        raise InvalidInput(f"state_value takes lower-case letters, digits, '_', '-' and '.' (e.g. 'warm'): "
                           f"{shown(value)}")
    return value


def _within(value: Any, low: float, high: float) -> bool:
    """A real number (not a bool) in [low, high]; NaN never is, and huge integers are compared exactly."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    number: Any = value  # int, float, Fraction...: compared as they are (numbers.Real declares no ordering)
    return bool(low <= number <= high)


def importance(value: Any) -> float:
    if not _within(value, 0.0, 1.0):
        raise InvalidInput(f"importance must be a number in 0..1, got {shown(value)}")
    return float(value)


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise InvalidInput(f"{name} must be a whole number, got {shown(value)}")
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidInput(f"{name} must be a whole number, got {shown(value)}") from None


def day(value: Any, name: str = "day") -> int:
    number = _integer(name, value)
    if not 0 <= number <= MAX_DAY:
        raise InvalidInput(f"{name} must be in 0..{MAX_DAY:,}, got {shown(value)}")
    return number


def hour(value: Any) -> int:
    number = _integer("hour", value)
    if not 0 <= number < HOURS_PER_DAY:
        raise InvalidInput(f"hour must be in 0..{HOURS_PER_DAY - 1}, got {shown(value)}")
    return number


def top_k(value: Any) -> int:
    """How many memories recall returns: Vectorize's query limit, which recall also asks the index for."""
    number = _integer("top_k", value)
    if not 1 <= number <= VECTORIZE_MAX_TOP_K:
        raise InvalidInput(f"top_k must be in 1..{VECTORIZE_MAX_TOP_K}, got {shown(value)}")
    return number


def finite(name: str, value: Any, low: float, high: float = math.inf) -> float:
    """A finite number in [low, high]."""
    try:
        ok = _within(value, low, high) and math.isfinite(float(value))
    except OverflowError:  # an integer too large for a float
        ok = False
    if not ok:
        upper = "" if math.isinf(high) else f" and at most {high:g}"
        raise InvalidInput(f"{name} must be a finite number of at least {low:g}{upper}, got {shown(value)}")
    return float(value)
