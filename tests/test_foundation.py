"""The package's front door: fast import, a working CLI, the error tree's wording."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memory_sim.cli import main
from memory_sim.errors import D1ColumnNotFound, VectorizeInputError


def test_help_lists_the_data_folder(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert "--data" in capsys.readouterr().out


def test_import_does_not_load_heavy_libraries() -> None:
    code = "import sys, memory_sim, memory_sim.cli; print(sorted(m for m in ('torch','chromadb','duckdb') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_errors_carry_cloudflare_prefixes() -> None:
    assert str(VectorizeInputError("VECTOR_QUERY", "expected 1024 dimensions, got 768", 40006)) == (
        "VECTOR_QUERY_ERROR (code = 40006): expected 1024 dimensions, got 768"
    )
    assert str(D1ColumnNotFound("Column not found (age)")) == "D1_COLUMN_NOTFOUND: Column not found (age)"
