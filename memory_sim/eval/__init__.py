"""Recall-quality evaluations through the project's own API: LoCoMo (locomo.py) and the village's ground
truth (village.py)."""
