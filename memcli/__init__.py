"""mem: long-term memory for AI agents, kept as plain Markdown files."""

__version__ = "0.1.0"
