"""docs/cloudflare.md's record of Cloudflare's 2026 contract agrees with the code that answers it: the limits, the
error codes, the catalogue models and the settings that point at their weights; and each row names its source."""

from __future__ import annotations

import re

from memory_sim.bindings import limits, vectorize_codes
from memory_sim.bindings.ai_models import CATALOGUE
from memory_sim.server import ai_capacity, time_travel
from tests.docs.test_code_blocks import ROOT

DOC = ROOT / "docs" / "cloudflare.md"


def _section() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text[text.index("## Cloudflare's contract, as answered locally (2026)"):]


def _rows() -> list[list[str]]:
    rows = [line.split(" | ") for line in _section().splitlines() if line.startswith("| ") and "---" not in line]
    return [r for r in rows if r[0] != "| production"]


def test_every_row_names_its_source() -> None:
    rows = _rows()
    assert len(rows) >= 15
    for row in rows:
        source = row[-1]
        assert re.search(r"github\.com|cloudflare-docs `src/content|developers\.cloudflare\.com|same page|errors page|"
                         r"shared/reference", source), row


def test_the_figures_are_the_codes() -> None:
    text = " ".join(_section().split())
    assert f"{limits.VECTORIZE_MAX_METADATA_BYTES:,} bytes of compact JSON" in text
    assert f"(code = {vectorize_codes.METADATA_TOO_LARGE})" in text and vectorize_codes.METADATA_TOO_LARGE == 40016
    assert f"{limits.VECTORIZE_MAX_VECTORS_PER_INDEX:,} vectors" in text
    assert f"at most {time_travel.MAX_RESTORES} restores per {time_travel.RESTORE_WINDOW_S / 60:.0f} minutes" in text
    assert f"{time_travel.RETENTION_S / 86400:.0f} days by default" in text
    assert f"internal {ai_capacity.CODE_AI_OUT_OF_CAPACITY}" in text


def test_every_catalogue_model_and_its_setting_is_recorded() -> None:
    text = _section()
    for spec in CATALOGUE.values():
        assert f"`{spec.name}`" in text and f"`${spec.path_env}`" in text, spec.name
        assert f"workers-ai-models/{spec.name.rsplit('/', 1)[1]}.json" in text
        if spec.dimensions:
            assert f"{spec.dimensions}-d" in text or spec.name.endswith(("gemma-300m", "0.6b"))
