"""docs/cloudflare.md runs as written against `memory-sim serve` on loopback, whose Workers AI answers as
production's does (BGE, stood in by the hashing embedder; no MiniLM): the move step by step, and the Python."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount
from memory_sim.testing import TEST_TOKEN, ServerForTests

from tests.cloudflare.move_helpers import CLI, ProductionCatalogue, folder_contents

DOC = Path(__file__).resolve().parents[2] / "docs" / "cloudflare.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text("utf-8"), re.S)


def account_env(server: ServerForTests) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_SIM_", "CLOUDFLARE_", "OPENAI_"))}
    return {**env, "CLOUDFLARE_ACCOUNT_ID": server.fresh_account_id(), "CLOUDFLARE_API_TOKEN": TEST_TOKEN,
            "CLOUDFLARE_BASE_URL": server.base_url}


@pytest.mark.timeout(240)
def test_the_move_step_by_step(production: ServerForTests, catalogue: ProductionCatalogue, tmp_path: Path) -> None:
    (script,) = blocks("bash")
    env = account_env(production)
    for line in script.strip().splitlines():
        argv = shlex.split(line, comments=True)
        assert argv[0] == "memory-sim"
        done = subprocess.run([*CLI, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{line}\n{done.stderr}"
        if "recall" in argv:  # answered by meaning, on the account and offline alike
            assert "vectorize" in done.stdout, done.stdout
    account = CloudflareVectorizeAccount(production.client(env["CLOUDFLARE_ACCOUNT_ID"]))
    try:  # re-embedded on the account with BGE, every memory the pulled copy holds
        assert "model=@cf/baai/bge-base-en-v1.5" in account.get_index("memories").description
        pulled = folder_contents(tmp_path / "pulled")[0]
        assert account.index("memories").describe().vector_count == len(pulled) > 0
    finally:
        account.close()
    assert "sentence-transformers/all-MiniLM-L6-v2" not in catalogue.calls  # MiniLM ran here, never on Workers AI


@pytest.mark.timeout(120)
def test_python_example_prints_what_its_comments_say(production: ServerForTests, tmp_path: Path) -> None:
    (code,) = blocks("python")
    expected = [m.group(1).strip() for line in code.splitlines() if (m := re.search(r"print\(.*\)\s+#\s*(.+)$", line))]
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=account_env(production),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == expected


def test_the_refusal_shown_is_the_one_given() -> None:
    from memory_sim.builder.embedding import index_needs
    from memory_sim.local.ai.models import BGE_MISSING

    (shown,) = blocks("text")
    recorded = {"model": "@cf/baai/bge-base-en-v1.5", "dimensions": "768", "pooling": "cls"}
    assert shown.strip() == index_needs("memories", recorded, BGE_MISSING)
