"""Extraction: what is worth keeping, decided by an LLM or by offline rules.

One subpackage per job it serves: conversation/ (ingest: a conversation into a daily
note), dream/ (daily notes into digest nodes), resource/ (an external file into a
note). ask.py holds what they share: asking a model for JSON, validating the reply
and retrying once with the error fed back.
"""
