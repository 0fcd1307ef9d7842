"""Writing memories: into the vector index, and out of it again (forgetting, correcting, re-deriving)."""
