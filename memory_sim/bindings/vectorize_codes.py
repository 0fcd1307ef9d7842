"""Vectorize's error codes, in one place: those production is seen to answer, and this project's own.

Cloudflare publishes no Vectorize error-code table. The codes under "production" are those users quote from
production (`<OP>_ERROR (code = N): <text>` from the Workers binding, `[code: N]` from wrangler), gathered in
../shared/reference/cloudflare-contract.md ("Corrections"); the wording beside each is production's, and the
validators use it. Every other code is this project's choice for a rule whose production code nobody has quoted:
a script may rely on it here, not on Cloudflare.
"""

from __future__ import annotations

# --- production -----------------------------------------------------------------------------------------------
QUERY_DIMENSIONS = 40006  # "invalid query vector, expected N dimensions, and got M dimensions"
ID_TOO_LONG = 40008  # "id too long; max is 64 bytes, got N bytes"
WRITE_DIMENSIONS = 40012  # 'invalid vector for id="ID", expected N dimensions, and got M dimensions'
UNPARSABLE_VECTORS = 40023  # "failed to parse upsert vectors request in json format"
TOP_K = 40025  # "max top K is 50, but got 60"
BAD_BODY = 40026  # "Failed to parse the request body as JSON: returnMetadata: expected value at line 1 column N"
INDEX_NOT_FOUND = 3000  # 'vectorize.index.not_found - Index name "NAME"' (HTTP 404 here; one source saw 400)
INDEX_DUPLICATE = 3002  # 'vectorize.index.duplicate_name - Index name "NAME"'
# Metadata over 10,240 bytes of compact JSON fails the whole batch (kayac/nepp-chan#1126, 2026-09, quotes only
# "VECTOR_UPSERT_ERROR (code = 40016)"; the text after it is this project's: "metadata too large: N bytes > ...").
METADATA_TOO_LARGE = 40016
# Also quoted, with no rule of this emulator behind them: 40007 "too many ids in payload; max id count is 20"
# (getByIds), 40041 "Too Many Requests", 3005 "vectorize.index.deleted".

# --- this project's own ---------------------------------------------------------------------------------------
BAD_VECTOR = 40001  # values that are not finite numbers; a vector object without id or values
BAD_ID = 40002  # an id that is not a non-empty string (too long: ID_TOO_LONG)
BAD_METADATA = 40003  # metadata keys and value types (the size cap: METADATA_TOO_LARGE)
BAD_NAMESPACE = 40004
BATCH = 40005  # an empty write, or more vectors or ids than one request takes
UNINDEXED = 40009  # a filter on a property without a metadata index (production reportedly matches nothing)
INDEX_CONFIG = 40010  # index name, dimensions, metric, description, presets
METADATA_INDEX = 40011
LIST = 40015  # list-vectors count or cursor
FILTER = 40018  # a malformed metadata filter
FULL = 40019  # the index's vector cap
QUERY_SOURCE = 40020  # a REST query with both `vector` and `vectorId`, or with neither

PRODUCTION = frozenset({QUERY_DIMENSIONS, ID_TOO_LONG, WRITE_DIMENSIONS, UNPARSABLE_VECTORS, TOP_K, BAD_BODY,
                        INDEX_NOT_FOUND, INDEX_DUPLICATE, METADATA_TOO_LARGE})
OWN = frozenset({BAD_VECTOR, BAD_ID, BAD_METADATA, BAD_NAMESPACE, BATCH, UNINDEXED, INDEX_CONFIG, METADATA_INDEX, LIST,
                 FILTER, FULL, QUERY_SOURCE})
