"""Which piece of state a memory sets (keys.py: its state key, inferred when the game gives none), which NPCs a
memory is about (subjects.py), and how one NPC's opinion of another is told from its opinion key, the current view
first (story.py). Pure functions; writing/keying.py, recalling/current.py and the schema's migration call them."""
