"""The demo's time is one figure, with its machine, quoted from benchmarks/demo.md wherever the docs give it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUOTING = ["README.md", "docs/getting-started.md", "docs/memory.md"]
# a time given for the demo other than the quoted one: "the demo ... about 20 seconds", "demo takes 23 s"
OTHER_TIME = re.compile(r"(?i)\bdemo\b[^.\n]{0,120}?\b(?:about|takes|in) \d+(?:\.\d+)? ?(?:s|seconds)\b"
                        r"|\babout \d+ (?:s|seconds) on a laptop")


def quoted() -> str:
    text = (ROOT / "benchmarks" / "demo.md").read_text(encoding="utf-8")
    found = re.search(r"The demo's time the docs quote .*?: \*\*(.+?)\*\*", text, re.S)
    assert found is not None, "benchmarks/demo.md lost the line the docs quote"
    return " ".join(found.group(1).split())


def test_the_figure_names_its_machine() -> None:
    figure = quoted()
    assert re.match(r"\d+(\.\d+)? s wall on .*cores.*\(median of", figure), figure


def test_every_page_that_times_the_demo_quotes_the_one_figure() -> None:
    figure = quoted()
    for page in QUOTING:
        text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
        assert figure in text, page
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = " ".join(page.read_text(encoding="utf-8").split()).replace(figure, "")
        assert OTHER_TIME.findall(text) == [], page.name
