"""A seeded village world that produces memories tick by tick."""
