"""Vectorize on this machine: the queued index over a store (core), Chroma (embedded or a server) as the store,
numpy arrays and per-value row sets beside it for exact filtered queries, and the pure exact oracle."""
