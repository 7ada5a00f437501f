"""sessions — conversations in, knowledge out: `ingest` (session files → session notes with
turn anchors and the raw file beside them), `capture` (a running conversation, checkpointed)
and `distill/` (the quality gate, the offline rules, the LLM distiller, applying results as
cards with claims and evidence, persona and scenes).

May import: store, text, providers and the ground. Not recall or care.
"""
