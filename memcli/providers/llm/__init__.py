"""LLM backends: OpenAI-compatible chat completions (OpenAI, DashScope compatible mode,
vLLM, Ollama `/v1`) over the shared httpx client factory. `registry.get_chat` picks
one from `llm_model_config`, or None when the offline extractor should run."""
