"""Upstream reference data by lockfile: `upstream.lock.json` pins every file, `make upstream` fills the cache."""
