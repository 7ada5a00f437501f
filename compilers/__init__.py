"""Vault → artifacts under `.alaya/` (FAISS tiers, lexical index, graph, agent digest)."""
