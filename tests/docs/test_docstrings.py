"""Every public method of the memory system and every top-level export says what it does, in which units and
what it returns: the API reference (mkdocs, docs/reference.md) is generated from these docstrings."""

from __future__ import annotations

import inspect

import pytest

import memory_sim
from memory_sim import Env, MemorySystem, ShortTermMemory, SimClock, WorldTime
from memory_sim.memory.models import JobReport, Lineage, Recollection, StoredMemory
from memory_sim.memory.models import ShortTermMemory as Stm
from memory_sim.memory.models import WorldTime as Wt

UNITS = ("sim day", "seconds", "sim hour")


def public_methods(cls: type) -> dict[str, object]:
    return {
        name: member
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, property))
    }


@pytest.mark.parametrize("name", sorted(public_methods(MemorySystem)))
def test_every_memory_system_method_has_a_docstring(name: str) -> None:
    doc = inspect.getdoc(getattr(MemorySystem, name)) or ""
    assert len(doc.split()) >= 5, f"MemorySystem.{name} has no docstring worth the name: {doc!r}"


@pytest.mark.parametrize(
    "name", ["today", "weighted_recall", "consolidate", "decay_and_prune", "retry_pending", "decision_context"]
)
def test_methods_taking_or_giving_time_say_the_unit(name: str) -> None:
    doc = inspect.getdoc(getattr(MemorySystem, name)) or ""
    assert any(unit in doc for unit in UNITS), f"MemorySystem.{name} does not say days or seconds: {doc!r}"


@pytest.mark.parametrize("name", sorted(n for n, m in public_methods(MemorySystem).items() if inspect.isfunction(m)))
def test_methods_that_return_something_say_what(name: str) -> None:
    method = getattr(MemorySystem, name)
    if inspect.signature(method).return_annotation in ("None", None):
        return
    doc = inspect.getdoc(method) or ""
    # a one-line docstring names what it returns ("The current sim day ..."); a longer one has a Returns: section
    assert "Returns:" in doc or len(doc.splitlines()) == 1, f"MemorySystem.{name} does not say what it returns"


@pytest.mark.parametrize("value", [Env, MemorySystem, ShortTermMemory, SimClock, WorldTime, memory_sim.Settings,
                                   Recollection, StoredMemory, Lineage, JobReport])
def test_exported_values_and_their_methods_have_docstrings(value: type) -> None:
    assert len((inspect.getdoc(value) or "").split()) >= 5, value
    for name, member in public_methods(value).items():
        if name.startswith("model_") or name in ("copy", "dict", "json", "parse_obj", "parse_raw", "parse_file",
                                                 "from_orm", "construct", "schema", "schema_json", "validate",
                                                 "update_forward_refs", "settings_customise_sources"):
            continue  # pydantic's own
        owner = next(k for k in inspect.getmro(value) if name in vars(k))
        if owner.__module__.startswith("memory_sim"):
            assert inspect.getdoc(member), f"{value.__name__}.{name} has no docstring"


def test_top_level_exports_are_the_documented_ones() -> None:
    assert (Stm, Wt) == (ShortTermMemory, WorldTime)
    for name in memory_sim.__all__:
        assert getattr(memory_sim, name) is not None
