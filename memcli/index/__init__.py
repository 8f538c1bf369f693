"""Chunking, stores (jsonl.zst chunk store, graph, catalogs) and incremental sync."""

# Bumped whenever chunk boundaries or texts change for the same input: forces a rebuild.
PARSER_VERSION = 2
