"""Beliefs that change: which newer memory corrects or updates an older one (detect.py), how recall ranks the
newest state of a belief above the stale one (ranking.py), and how an NPC's opinion of another is told, the
current one first, then how it changed (story.py). Pure functions; recall and the contexts call them."""
