"""The keyword segment engine: what a keyword search reads, and how it is scored.

The index is a list of immutable segments named by a manifest (segments: the commit point,
read as one View); each segment is one memory-mapped file of chunk texts, file records and
postings (snapshot), whose arrays are built from parsed files or carried over by a merge
(assemble). The tokenizer turns text and queries into terms (words, identifiers, CJK
n-grams) and bm25 scores a query over the live chunks. Imports nothing else of the index.
"""
