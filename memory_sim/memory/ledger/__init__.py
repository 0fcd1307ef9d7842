"""D1, the ledger: the schema, every statement the memory system runs, and the counts read from it."""
