"""Resource extraction: an external file read (data.py), summarised offline
(digest.py) or interpreted by an LLM (llm.py) into a daily note's text."""
