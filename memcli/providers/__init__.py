"""Model providers: embedding backends (`embedding/`), LLM backends (`llm/`) and the one
httpx client factory they all use (`http`). Nothing here imports httpx at module level."""
