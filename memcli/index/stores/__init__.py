"""The ReMe-format stores under mem_metadata/: chunk store, graph and catalog.

mem's own searches never read them; ReMe and other tools do. store holds the line formats
and the zstd JSONL reading and writing, frames keeps each store as runs of zstd frames, one
run per keyword segment, and mirror rewrites the three stores as a mirror of the segments
(in batches once the vault is large) and gives a segment's store lines to a merge.
"""
