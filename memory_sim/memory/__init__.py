"""The NPC memory system over an `Env`: remember, recall, weighted recall, contexts, jobs."""
