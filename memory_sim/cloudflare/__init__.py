"""Production backends: the same contracts over Cloudflare's REST API (and OpenAI for embeddings)."""
