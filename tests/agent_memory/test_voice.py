"""Summaries in the third person (memory_sim/agent_memory/voice.py)."""

from __future__ import annotations

import pytest

from memory_sim.agent_memory.voice import third_person


@pytest.mark.parametrize("said,role,summary", [
    ("I prefer concise answers.", "user", "The user prefers concise answers."),
    ("I use VS Code as my editor.", "user", "The user uses VS Code as their editor."),
    ("I'm allergic to peanuts.", "user", "The user is allergic to peanuts."),
    ("I need to renew my passport.", "user", "The user needs to renew their passport."),
    ("I try to sleep early.", "user", "The user tries to sleep early."),
    ("I go running and I watch films.", "user", "The user goes running and they watch films."),
    ("I've been playing guitar for ten years.", "user", "The user has been playing guitar for ten years."),
    ("I was born in Lyon.", "user", "The user was born in Lyon."),
    ("I can swim.", "user", "The user can swim."),
    ("My daughter is called Ines.", "user", "The user's daughter is called Ines."),
    ("Remind me to call the dentist.", "user", "Remind the user to call the dentist."),
    ("I rolled back the release.", "assistant", "The assistant rolled back the release."),
    ("I'll follow up with the vendor.", "assistant", "The assistant will follow up with the vendor."),
    ("Always answer in Portuguese.", "user", "Always answer in Portuguese."),
    ("We shipped version 4.1.", "user", "We shipped version 4.1."),
    ("I prefer dark mode and use VS Code.", "user", "The user prefers dark mode and uses VS Code."),
    ("I like tea and they like coffee.", "user", "The user likes tea and they like coffee."),
])
def test_third_person(said: str, role: str, summary: str) -> None:
    assert third_person(said, role) == summary
