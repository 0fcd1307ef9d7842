"""A local HTTP emulator of Cloudflare's v4 REST API over the embedded backends."""
