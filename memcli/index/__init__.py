"""Chunking, stores (jsonl.zst chunk store, graph, catalogs) and incremental sync."""
