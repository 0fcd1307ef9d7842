"""Embedding providers other than Workers AI, each exposed as an `Ai` so the same `AiEmbedder` runs over it."""
