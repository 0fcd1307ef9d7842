"""What the move tests share: a Workers AI that answers as production's does (only `@cf/...` models; BGE base
stood in by the hashing embedder, 768-d, as no BGE weights are on the test machine), a server answering with it
(the `production` fixture, with `catalogue`: tests/cloudflare/conftest.py and the Cloudflare doc's test take
them from here), folders to compare."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_sim.bindings.ai import BGE_BASE
from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.errors import AiError
from memory_sim.testing import ServerForTests, scratch_folder

CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]


class ProductionCatalogue:
    """The server's `Ai`: Workers AI's catalogue, which has BGE and no MiniLM. Counts the calls per model."""

    is_local = False

    def __init__(self) -> None:
        self.bge = HashingEmbedder(768, model=BGE_BASE)
        self.calls: dict[str, int] = {}

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        self.calls[model] = self.calls.get(model, 0) + 1
        if model != BGE_BASE:
            raise AiError(f"No such model {model} or task")
        texts = inputs["text"] if isinstance(inputs["text"], list) else [inputs["text"]]
        data = self.bge.embed(texts).tolist()
        return {"shape": [len(data), 768], "data": data, "pooling": inputs.get("pooling", "mean")}


def vectors_of(account: Any, index: str) -> dict[str, Any]:
    """Every vector of an index by id, as (values, metadata, namespace), read through list + get-by-ids."""
    target = account.index(index)
    found: dict[str, Any] = {}
    cursor = None
    while True:
        page = target.list_vectors(1000, cursor)
        for start in range(0, len(page.ids), 20):
            for v in target.get_by_ids(page.ids[start : start + 20]):
                found[v.id] = (list(v.values), v.metadata, v.namespace)
        if not page.is_truncated or page.next_cursor is None:
            return found
        cursor = page.next_cursor


def rows_of(db: Any) -> dict[str, list[Any]]:
    """Every user table's rows, in a stable order."""
    from memory_sim.transfer import paging_order, tables

    out = {}
    for item in tables(db):
        if item["type"] == "table":
            name = item["name"]
            out[name] = db.prepare(f'SELECT * FROM "{name}" ORDER BY {paging_order(db, name)}').raw()
    return out


def folder_contents(folder: Path) -> tuple[dict[str, Any], dict[str, list[Any]], str]:
    """(vectors, rows, index description) of a local data folder, opened without a model."""
    from memory_sim.builder import local_d1_account, local_vectorize_account

    account = local_vectorize_account(folder / "vectorize")
    databases = local_d1_account(folder, "duckdb")
    db = databases.get("memory")
    try:
        return vectors_of(account, "memories"), rows_of(db), account.get_index("memories").description
    finally:
        db.close()
        account.close()


@pytest.fixture(scope="module")
def catalogue() -> ProductionCatalogue:
    return ProductionCatalogue()


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory, catalogue: ProductionCatalogue) -> Iterator[ServerForTests]:
    with scratch_folder(tmp_path_factory.mktemp("prod")) as folder, ServerForTests(folder, ai=catalogue) as running:
        yield running
