"""Cloudflare's Agent Memory, offline: namespaces, profiles, ingest, recall and the rest of its API on memory_sim's
memory (local.py), with memories extracted by word rules (extraction.py) and answers quoted from them or written by
a chat model (answer.py). The contract it keeps is memory_sim/bindings/agent_memory.py; docs/agent-memory.md."""

from memory_sim.agent_memory.answer import ChatAnswerer, ExtractiveAnswerer
from memory_sim.agent_memory.local import AgentMemoryService, LocalAccount, LocalNamespace, LocalProfile

__all__ = ["AgentMemoryService", "ChatAnswerer", "ExtractiveAnswerer", "LocalAccount", "LocalNamespace",
           "LocalProfile"]
