"""Recall stage 6, the optional reranker: the best `top_n` candidates (20) re-ordered by a
model behind an OpenAI-compatible endpoint (vault_engine.providers.rerank), the rest kept
behind them in the offline order. Off unless `[rerank] provider` is set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def rerank_text(node: Mapping[str, Any]) -> str:
    """What the reranker reads of a hit: a memory's title and snippet; a session hit's best
    turns, each after the turn it answers."""
    if node.get("kind") == "session" and node.get("turns"):
        parts = []
        for turn in node["turns"]:
            if turn.get("before"):
                parts.append(str(turn["before"]))
            parts.append(str(turn.get("text") or ""))
        return "\n".join(p for p in parts if p)
    title, snippet = str(node.get("title") or ""), str(node.get("snippet") or "")
    return title if not snippet or snippet == title else f"{title}\n{snippet}"


def rerank_order(reranker: Any, query: str, nodes: Sequence[Mapping[str, Any]]) -> list[int]:
    """Positions of `nodes` in the reranked order: the first `top_n` by the model's score
    (ties keep the offline order), the rest after them unchanged."""
    n = min(len(nodes), reranker.top_n)
    scores = reranker.scores(query, [rerank_text(node) for node in nodes[:n]])
    head = sorted(range(n), key=lambda i: (-scores[i], i))
    return head + list(range(n, len(nodes)))
