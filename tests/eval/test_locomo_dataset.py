"""`memory-sim eval locomo` takes LoCoMo from the user or the user's cache folder; without it, one line says where
the dataset comes from and on what terms."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.cli.eval import locomo_cache, locomo_dataset


def test_without_the_dataset_one_line_names_its_source_its_terms_and_where_to_put_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # no ../shared/data here: nothing is found by a path only this project has
    for argv in (["eval", "locomo"], ["eval", "locomo", "--dataset", "nowhere/locomo10.json"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and err.startswith("error: ")
        assert "github.com/snap-research/locomo" in err and "research use" in err


def test_the_cache_folder_holds_the_dataset_when_none_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cached = locomo_cache()
    assert cached == tmp_path / "cache" / "memory_sim" / "locomo10.json"
    cached.parent.mkdir(parents=True)
    cached.write_text("[]")
    assert locomo_dataset(None) == cached
    given = tmp_path / "mine.json"
    given.write_text("[]")
    assert locomo_dataset(given) == given
