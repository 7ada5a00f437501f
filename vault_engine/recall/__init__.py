"""recall — reading the compiled artifacts back, with zero LLM calls.

The recall pipeline (`pipeline.recall`) runs stage by stage: `query` (what was asked, settings,
filters) → `retrieval` (vectors + BM25 over `index`, the memory-mapped artifacts; `bm25` is
the saved BM25 format) → `fusion` (rankings fused, units into notes) → `expansion` (the graph)
→ `ranking` (heuristic distance, MMR) → `present` (JSON nodes, prompt lines). Beside it:
`traverse` (paths between notes), `trace` (a card back to its turns), `context` (prompt-ready
memory within a budget) and `queries` (saved queries as notes).

May import: store, text, providers and the ground. Not sessions or care.
"""
