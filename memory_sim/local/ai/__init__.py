"""Workers AI on this machine: embedding models run locally (sentence-transformers), found by name or folder."""
