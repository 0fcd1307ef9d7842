"""docs/workers.md says what a Worker meets: the two topK caps and when each applies (the binding's own limits),
wrangler installed at the exact release the suites pin (`--save-exact`, and why), and how to stop wrangler and
workerd when `npx wrangler dev` is killed."""

from __future__ import annotations

import json
import re

from memory_sim.bindings import limits
from tests.docs.test_code_blocks import ROOT
from tests.wrangler.wrangler_helpers import WRANGLER_VERSION

DOC = ROOT / "docs" / "workers.md"


def _text() -> str:
    return " ".join(DOC.read_text(encoding="utf-8").split())


def test_the_topk_row_says_when_each_cap_applies() -> None:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    row = next(line for line in lines if line.startswith("| Vectorize | `query("))
    assert f"at most {limits.VECTORIZE_MAX_TOP_K}" in row
    assert f"or {limits.VECTORIZE_MAX_TOP_K_WITH_VALUES_OR_METADATA} when the query asks for `returnValues: true` or " \
           '`returnMetadata: "all"`' in row
    assert f"max top K is {limits.VECTORIZE_MAX_TOP_K}, but got {limits.VECTORIZE_MAX_TOP_K + 1}" in row
    cap = limits.VECTORIZE_MAX_TOP_K_WITH_VALUES_OR_METADATA
    assert f"max top K is {cap}, but got {cap + 1}" in row


def test_every_wrangler_install_shown_is_exact_and_the_pinned_release() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    installs = [line for page in pages for line in page.read_text(encoding="utf-8").splitlines()
                if re.search(r"npm (install|i) .*wrangler@", line)]
    assert installs
    for line in installs:
        assert "--save-exact" in line and f"wrangler@{WRANGLER_VERSION}" in line, line
    assert "`--save-exact` writes `\"wrangler\": \"4.50.0\"`" in _text() and "Node.js 22" in _text()
    pinned = json.loads((ROOT / "tests" / "worker" / "package.json").read_text(encoding="utf-8"))
    assert pinned["dependencies"]["wrangler"] == WRANGLER_VERSION  # exact, no ^


def test_the_doc_says_how_to_stop_wrangler_and_workerd() -> None:
    text = _text()
    assert "leaves both running" in text and "workerd" in text
    assert 'setsid npx wrangler dev --env memsim' in text and 'kill -TERM -- "-$(cat wrangler.pid)"' in text
