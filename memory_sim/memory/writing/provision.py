"""The memory system's vector index: created once with the metadata indexes recall filters by, and bound to the
embedder that fills it. It uses only the Vectorize contract, so it provisions a local index and a Cloudflare one
alike (as `wrangler vectorize create` + `create-metadata-index` would).
"""

from __future__ import annotations

from memory_sim.bindings.ai import Embedder
from memory_sim.bindings.vectorize import MetadataIndexType, VectorizeAccount, VectorizeIndex
from memory_sim.embedding.index_model import check_index_model, describe_model

# What the memory system filters by; metadata indexes must exist before vectors are written (as on Cloudflare).
MEMORY_METADATA_INDEXES: tuple[tuple[str, MetadataIndexType], ...] = (
    ("npcId", "string"),
    ("type", "string"),
    ("day", "number"),
    ("importance", "number"),
)


def ensure_index(
    account: VectorizeAccount, name: str, embedder: Embedder, *, check_model: bool = True
) -> VectorizeIndex:
    """The index `name`, created for `embedder` when missing; an existing one must match the embedder's model
    (unless `check_model` is False: re-embedding fills a staged index for it, memory/jobs/staged_reembed.py)."""
    existing = {d.name: d for d in account.list_indexes()}
    if name in existing:
        if check_model:
            check_index_model(existing[name].description, embedder)
        return account.index(name)
    return create_index(account, name, embedder)


def recreate_index(account: VectorizeAccount, name: str, embedder: Embedder) -> VectorizeIndex:
    """Drops the index (if any) and creates it for `embedder`; the vectors are rebuilt from D1 afterwards."""
    if name in {d.name for d in account.list_indexes()}:
        account.delete_index(name)
    return create_index(account, name, embedder)


def create_index(account: VectorizeAccount, name: str, embedder: Embedder) -> VectorizeIndex:
    """A new index for `embedder`: its width, its model in the description, the memory's metadata indexes."""
    account.create_index(name, embedder.dimensions, "cosine", describe_model(embedder))
    index = account.index(name)
    for prop, kind in MEMORY_METADATA_INDEXES:
        index.create_metadata_index(prop, kind)
    return index


def refuse_deleting_declared(index_name: str, property_name: str) -> None:
    """Deleting one of `MEMORY_METADATA_INDEXES` from the index the memory system uses is refused (Vectorize's
    METADATA_INDEX code, 40011): every vector and hybrid recall would fail with 40009, and vectors written while it
    is missing stay unfilterable after it is re-created."""
    from memory_sim.bindings import vectorize_codes as codes
    from memory_sim.errors import VectorizeInputError

    if property_name in dict(MEMORY_METADATA_INDEXES):
        raise VectorizeInputError(
            "METADATA_INDEX_DELETE",
            f"metadata index on {property_name!r} of index {index_name!r} is in use: the memory system filters recall "
            "by it, so it cannot be deleted",
            codes.METADATA_INDEX,
        )
