"""Cloudflare's limits, in one place (../shared/reference/cloudflare-contract.md, with its sources).

Each binding's validator reads its numbers from here; messages that carry Cloudflare's wording live beside
the validator that raises them.
"""

from __future__ import annotations

# --- Vectorize V2 (contract §1.6) ---------------------------------------------------------------------------
VECTORIZE_MAX_DIMENSIONS = 1536
VECTORIZE_MAX_VECTORS_PER_INDEX = 20_000_000  # since 2026-08-04; configurable per account for tests
VECTORIZE_MAX_ID_BYTES = 64
VECTORIZE_MAX_NAMESPACE_BYTES = 64
VECTORIZE_MAX_INDEX_NAME_BYTES = 64
VECTORIZE_MAX_METADATA_BYTES = 10 * 1024
VECTORIZE_MAX_BATCH_BINDING = 1000
VECTORIZE_MAX_BATCH_REST = 5000
VECTORIZE_DEFAULT_TOP_K = 5
VECTORIZE_MAX_TOP_K = 100
VECTORIZE_MAX_TOP_K_WITH_VALUES_OR_METADATA = 50
VECTORIZE_MAX_METADATA_INDEXES = 10
VECTORIZE_METADATA_INDEX_STRING_BYTES = 64
VECTORIZE_MAX_FILTER_JSON_BYTES = 2048  # strictly less than
VECTORIZE_MAX_FILTER_KEY_CHARS = 512
VECTORIZE_LIST_DEFAULT_COUNT = 100
VECTORIZE_LIST_MAX_COUNT = 1000
VECTORIZE_GET_BY_IDS_MAX_REST = 20  # production's getByIds answers at most 20 ids per call

# --- D1 (contract §3.5) -------------------------------------------------------------------------------------
D1_MAX_BOUND_PARAMETERS = 100
D1_MAX_STATEMENT_BYTES = 100_000
D1_MAX_STRING_OR_BLOB_BYTES = 2_000_000
D1_MAX_DATABASE_BYTES = 10 * 1000**3  # D1 on a paid plan: 10 GB per database, not raisable
D1_MAX_COLUMNS_PER_TABLE = 100
D1_MAX_FUNCTION_ARGS = 32
D1_MAX_LIKE_PATTERN_BYTES = 50
D1_MAX_DATABASES_PER_ACCOUNT = 1_000_000  # Workers Paid, since 2026-09-18 (was 50,000); a soft ceiling
D1_MAX_IMPORT_BYTES = 5 * 1000**3  # the largest file `d1 execute --file` imports: 5 GB

# --- Workers AI embeddings (contract §4.1) and OpenAI (§4.2) -----------------------------------------------
AI_MAX_TEXTS_PER_CALL = 100
AI_BGE_MAX_TOKENS = 512
OPENAI_MAX_INPUTS = 2048
OPENAI_MAX_TOKENS_PER_INPUT = 8192
OPENAI_MAX_TOKENS_PER_REQUEST = 300_000
