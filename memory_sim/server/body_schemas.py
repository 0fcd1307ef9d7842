"""The request bodies of the routes, as the OpenAPI description shows them (`openapi_extra=` of each route).

Documentation and a map for fuzzers (schemathesis generates bodies from it, valid and not), not the check: the
routes read bodies themselves (bodies.py) and the bindings' front doors validate them, so a body the schema
would refuse gets the binding's own wording, as from Cloudflare.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
STRINGS: Schema = {"type": "array", "items": STRING}
VECTOR: Schema = {
    "type": "object",
    "required": ["id", "values"],
    "properties": {"id": STRING, "values": {"type": "array", "items": {"type": "number"}},
                   "metadata": {"type": "object"}, "namespace": STRING},
}
QUERY: Schema = {"type": "object", "properties": {
    "vector": {"type": "array", "items": {"type": "number"}}, "vectorId": STRING, "topK": {"type": "integer"},
    "filter": {"type": "object"}, "returnValues": {"type": "boolean"},
    "returnMetadata": {"enum": ["none", "indexed", "all"]}, "namespace": STRING}}
CREATE_INDEX: Schema = {"type": "object", "required": ["name", "config"], "properties": {
    "name": STRING, "description": STRING, "config": {"type": "object", "properties": {
        "dimensions": {"type": "integer"}, "metric": {"enum": ["cosine", "euclidean", "dot-product"]}}}}}
IDS: Schema = {"type": "object", "required": ["ids"], "properties": {"ids": STRINGS}}
METADATA_INDEX: Schema = {"type": "object", "required": ["propertyName"], "properties": {
    "propertyName": STRING, "indexType": {"enum": ["string", "number", "boolean"]}}}
STATEMENT: Schema = {"type": "object", "required": ["sql"], "properties": {
    "sql": STRING, "params": {"type": "array", "items": {"type": ["string", "number", "null"]}}}}
STATEMENTS: Schema = {"type": "object", "properties": {
    **STATEMENT["properties"], "batch": {"type": "array", "minItems": 1, "items": STATEMENT}}}
CREATE_DATABASE: Schema = {"type": "object", "required": ["name"], "properties": {"name": STRING}}
AI_RUN: Schema = {"type": "object", "required": ["text"], "properties": {
    "text": {"oneOf": [STRING, STRINGS]}, "pooling": {"enum": ["cls", "mean"]}}}


def json_body(schema: Schema) -> Any:
    """`openapi_extra` for a route whose body is one JSON value of `schema`."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def ndjson_body() -> Any:
    """`openapi_extra` for insert/upsert: one vector object per line (also accepted: the multipart part `vectors`)."""
    lines = {"schema": {"type": "array", "items": VECTOR}}
    return {"requestBody": {"required": True, "content": {"application/x-ndjson": lines}}}
