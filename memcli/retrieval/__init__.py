"""Tokenizer, BM25 and vector scoring, fusion, link expansion."""
