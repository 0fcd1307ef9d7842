"""Shared fixtures for the embedding tests."""

from __future__ import annotations

import pytest
from embedding_fakes import CountingAi


@pytest.fixture
def counting_ai() -> CountingAi:
    return CountingAi()
