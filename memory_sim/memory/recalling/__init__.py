"""Recalling memories: candidates, keyword and hybrid ranking, presets, recent D1-only memories."""
