"""The Cloudflare doc's test runs the move against the server the move tests use (tests/cloudflare)."""

from tests.cloudflare.move_helpers import catalogue, production  # noqa: F401  (fixtures)
