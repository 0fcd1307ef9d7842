"""Condensing memories into summaries: a day's plan (pure) and the summarisers (extractive, or a chat model)."""
