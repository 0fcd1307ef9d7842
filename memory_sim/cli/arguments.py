"""Argument types for `memory-sim`: each checks one value at the front door with the rule the library applies
(memory/rules.py, the bindings' validators), so a bad value is refused in one line, exit 2, before any data
folder is opened. Checks that need a heavier module import it when called, so `memory-sim --help` stays fast.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_sim.errors import MemorySimError
from memory_sim.memory import rules

Convert = Callable[[str], Any]


def checked(name: str, parse: Callable[[str], Any], rule: Callable[[Any], Any], expected: str) -> Convert:
    """A type for argparse: `parse` the text (a ValueError means "not `expected`"), then apply `rule`."""

    def convert(text: str) -> Any:
        try:
            value = parse(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {rules.shown(text)}") from None
        try:
            return rule(value)
        except MemorySimError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name  # argparse names the type in some messages
    return convert


def _same(text: str) -> str:
    return text


def whole(name: str, low: int, high: int | None = None) -> Convert:
    """A whole number in [low, high]."""

    def rule(value: int) -> int:
        if value < low or (high is not None and value > high):
            span = f"at least {low:,}" if high is None else f"in {low:,}..{high:,}"
            raise argparse.ArgumentTypeError(f"{name} must be {span}, got {value}")
        return value

    return checked(name, int, rule, "a whole number")


def number(name: str, low: float, high: float = math.inf, *, above_low: bool = False) -> Convert:
    """A finite number in [low, high] (or above low)."""

    def rule(value: float) -> float:
        if above_low and value <= low:
            raise argparse.ArgumentTypeError(f"{name} must be a finite number above {low:g}, got {value}")
        return rules.finite(name, value, low, high)

    return checked(name, float, rule, "a number")


# --- the memory system ---------------------------------------------------------------------------------------
npc_id = checked("npc_id", _same, lambda v: rules.npc_id(v, "NPC id"), "an NPC id")
npc_to_recall = checked("npc", _same, lambda v: rules.text("NPC id", v), "an NPC id")
memory_text = checked("text", _same, lambda v: rules.text("text", v), "text")
query = checked("query", _same, lambda v: rules.text("query", v), "a query")
importance = checked("importance", float, rules.importance, "a number in 0..1")
day = checked("day", int, rules.day, "a whole number of days")
hour = checked("hour", int, rules.hour, "a whole hour, 0..23")
top_k = checked("top_k", int, rules.top_k, "a whole number")
registered_npc_id = checked("npc_id", _same, lambda v: _npcs().registered_id(v), "an NPC id")
reason = checked("reason", _same, lambda v: rules.text("reason", v), "a reason")
memory_id = checked("memory_id", _same, lambda v: rules.text("memory id", v), "a memory id")
state_key = checked("key", _same, rules.state_key, "a state key")
state_value = checked("value", _same, rules.state_value, "a state value")
cursor = checked("cursor", int, lambda v: str(rules.day(v, "cursor")), "a cursor a previous page printed")


def label(name: str) -> Convert:
    """A name, role, alias, trait or reason: short text."""
    return checked(name, _same, lambda v: _npcs().label(name, v), "text")


def _npcs() -> Any:
    from memory_sim.memory import npcs

    return npcs


about = checked("about", lambda text: tuple(a for a in text.split(",") if a), rules.about, "NPC ids")


def _village_size(count: int) -> int:
    from memory_sim.sim.world import load_data

    most = len(load_data("npcs"))
    if not 2 <= count <= most:
        raise argparse.ArgumentTypeError(f"the village has between 2 and {most} NPCs, got {count}")
    return count


village_npcs = checked("npcs", int, _village_size, "a whole number")


def _model(name: str) -> str:
    from memory_sim.builder.embedding import hosted_model
    from memory_sim.builder.models import find_local_model
    from memory_sim.settings import HASHING_MODEL

    if name == HASHING_MODEL or hosted_model(name):  # a hosted one runs where the provider says, checked on open
        return name
    if find_local_model(rules.text("model", name)) is None:  # raises ConfigError when known but not here
        raise argparse.ArgumentTypeError(
            f"unknown embedding model {name!r}: `memory-sim models` lists them; "
            "a sentence-transformers folder works too"
        )
    return name


model = checked("model", _same, _model, "a model name")


def _index_sizes(sizes: list[int]) -> list[int]:
    if any(n < 1000 for n in sizes):
        raise argparse.ArgumentTypeError(f"each index size must be at least 1000, got {sizes}")
    return sizes


index_sizes = checked("sizes", lambda text: [int(s) for s in text.split(",")], _index_sizes,
                      "comma-separated whole numbers, e.g. 10000,100000")


# --- names the bindings define -------------------------------------------------------------------------------
def _index_name(name: str) -> str:
    from memory_sim.bindings.vectorize_validation import check_index_name

    return check_index_name(name)


def _vector_id(value: str) -> str:
    from memory_sim.bindings.vectorize_validation import check_id

    return check_id(value, "VECTOR_GET")


def _namespace(value: str) -> str:
    from memory_sim.bindings.vectorize_validation import check_namespace

    return str(check_namespace(value, "VECTOR_QUERY"))


def _property_name(value: str) -> str:
    from memory_sim.bindings.vectorize_validation import check_metadata_index

    return check_metadata_index(value, "string", {})[0]


def _filter(text: str) -> Any:
    from memory_sim.bindings.filters import parse_filter
    from memory_sim.errors import VectorizeInputError

    try:
        value = json.loads(text)
    except ValueError:
        raise VectorizeInputError("VECTOR_QUERY", f"--filter is not valid JSON: {rules.shown(text)}") from None
    parse_filter(value)
    return value


def _query_top_k(value: int) -> int:
    from memory_sim.bindings.vectorize_validation import check_query

    return check_query(value, None, False, "none", None, {}).top_k  # Cloudflare's words; the 50 cap is the handler's


def _database_name(name: str) -> str:
    from memory_sim.bindings.d1 import check_database_name

    return check_database_name(name)


index_name = checked("index", _same, _index_name, "an index name")
vector_id = checked("id", _same, _vector_id, "a vector id")
namespace = checked("namespace", _same, _namespace, "a namespace")
property_name = checked("property_name", _same, _property_name, "a metadata property")
metadata_filter = checked("filter", _same, _filter, "a JSON filter")
query_top_k = checked("top_k", int, _query_top_k, "a whole number")
vector_value = checked("value", float, lambda v: rules.finite("a vector value", v, -math.inf), "a number")
database_name = checked("database", _same, _database_name, "a database name")
sql = checked("sql", _same, lambda v: rules.text("SQL", v), "SQL")


# --- files, folders, addresses -------------------------------------------------------------------------------
def _path(text: str) -> Path:
    return Path(rules.text("path", text))


def _data_folder(path: Path) -> Path:
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{str(path)!r} is not a folder")
    return path


def _input_file(path: Path) -> Path:
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no file {str(path)!r}")
    return path


def _output_file(path: Path) -> Path:
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{str(path)!r} is a folder, not a file")
    if not path.resolve().parent.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {str(path)!r}: its folder does not exist")
    return path


def _url(text: str) -> str:
    from urllib.parse import urlparse

    parts = urlparse(rules.text("URL", text))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"expected an http(s) URL, got {rules.shown(text)}")
    return text


def _new_folder(path: Path) -> Path:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise argparse.ArgumentTypeError(f"{str(path)!r} already exists and is not an empty folder")
    if not path.resolve().parent.is_dir():
        raise argparse.ArgumentTypeError(f"cannot create {str(path)!r}: its folder does not exist")
    return path


def _existing_folder(path: Path) -> Path:
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"no folder {str(path)!r}")
    return path


folder = checked("folder", _path, _data_folder, "a folder")
new_folder = checked("folder", _path, _new_folder, "a new or empty folder")
existing_folder = checked("folder", _path, _existing_folder, "a folder")
input_file = checked("file", _path, _input_file, "a file")
output_file = checked("file", _path, _output_file, "a file to write")
url = checked("url", _same, _url, "a URL")
host = checked("host", _same, lambda v: rules.text("host", v), "a host")
