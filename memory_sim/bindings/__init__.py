"""The three contracts, shaped like Cloudflare's bindings: Vectorize, D1, Workers AI.

Nothing here imports a backend; backends (local/, cloudflare/) import from here.
"""
