"""Recall stage 2, retrieval: vector search over the HOT and WARM FAISS indexes and BM25 over
the unit shards, each candidate completed with its score from the other side, a turn's dense
score blended with the turn read in context, and whole-note BM25 for sessions."""

from __future__ import annotations

import re
from typing import Any

from vault_engine.errors import NotCompiledError

from .index import RecallIndex

COMMON_TERM_RATIO = 0.35  # query words in more than this share of units leave the dense query


def vector_ranking(index: RecallIndex, qvec: Any, k: int,
                   namespaces: set[str] | None = None) -> list[tuple[int, float]]:
    """The best `k` units by cosine among the units of `namespaces` (None: every one): the
    search itself skips the others (a FAISS ID selector), so the cut at `k` is made among
    what the caller may read and no other agent's vectors push a unit out of it."""
    import numpy as np

    out: list[tuple[int, float]] = []
    q = np.asarray(qvec, dtype=np.float32).reshape(1, -1)
    params = None
    if not index.searches_all(namespaces):
        import faiss

        bitmap = index.unit_bitmap(namespaces)
        selector = faiss.IDSelectorBitmap(index.n_units, faiss.swig_ptr(bitmap))
        params = faiss.SearchParameters()
        params.sel = selector
    for tier in ("HOT", "WARM"):
        idx = index.vectors(tier)
        if idx is None or idx.ntotal == 0:
            continue
        if idx.d != q.shape[1]:
            raise NotCompiledError(f"the query vector has {q.shape[1]} dimensions, the index "
                                   f"{idx.d}", fix="compile again with the current embedder")
        scores, ids = idx.search(q, min(k, idx.ntotal), params=params) if params is not None \
            else idx.search(q, min(k, idx.ntotal))
        out += [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
    out.sort(key=lambda x: -x[1])
    return out[:k]


def bm25_scores(index: RecallIndex, text: str, namespaces: set[str] | None = None) -> Any:
    """BM25 score of every unit for `text` (None when nothing in the query is indexed), from
    the shards of `namespaces` only (None: every one) — each scored by its own namespace's
    statistics; every other unit scores 0."""
    import numpy as np

    from vault_engine.text.glossary import expand
    from vault_engine.text.tokens import tokenize

    shards = index.lexical_for(namespaces)
    tokens = expand(tokenize(text))  # Chinese words ↔ English words: cross-lingual questions
    if not shards or not tokens:
        return None
    scores = np.zeros(index.n_units, dtype=np.float32)
    found = False
    mixed = False
    for retriever, units in shards:
        ids = retriever.ids_for(tokens)
        if ids:
            scores[units] = retriever.get_scores(ids)
            found = True
            mixed = mixed or retriever.namespace is None
    if found and mixed and namespaces is not None:  # a build of mixed shards: keep the scope's
        scores[~index.unit_mask(namespaces)] = 0.0
    return scores if found else None


def bm25_ranking(scores: Any, k: int) -> list[tuple[int, float]]:
    import numpy as np

    if scores is None:
        return []
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return sorted(((int(i), float(scores[i])) for i in top if scores[i] > 0),
                  key=lambda x: -x[1])


def note_bm25_scores(index: RecallIndex, text: str, namespaces: set[str] | None = None) -> Any:
    """BM25 over whole notes (a session as one document), scaled 0–1 by the best note of the
    searched namespaces (None: every one): a session whose turns together cover the query's
    words, even if no single turn does."""

    from vault_engine.text.tokens import tokenize

    groups = index.notes_lexical()
    if not groups:
        return {}
    tokens = tokenize(text)
    scores: list[Any] = []
    top = 0.0
    for retriever, nodes in groups:
        ns = retriever.namespace
        ids = retriever.ids_for(tokens) if namespaces is None or ns is None \
            or ns in namespaces else []
        got = retriever.get_scores(ids) if ids else None
        if got is not None and ns is None and namespaces is not None:
            import numpy as np

            got = np.where([index.visible(int(n), namespaces) for n in nodes.tolist()], got, 0.0)
        scores.append(got)
        if got is not None and len(got):
            top = max(top, float(got.max()))
    if top <= 0:
        return {}
    return _Scaled(scores, index.notes_lexical_rows(), top)


class _Scaled:
    """A note's whole-note BM25 scaled 0–1, looked up only for the notes that are candidates
    (building a dict over every matching note costs more than the rest of the scoring)."""

    def __init__(self, scores: list[Any], rows: dict[int, tuple[int, int]], top: float) -> None:
        self.scores, self.rows, self.top = scores, rows, top

    def get(self, node: int, default: float = 0.0) -> float:
        where = self.rows.get(node)
        if where is None or self.scores[where[0]] is None:
            return default
        return float(self.scores[where[0]][where[1]]) / self.top


def dense_query(index: RecallIndex, text: str, namespaces: set[str] | None = None) -> str:
    """The query without words that nearly every unit contains (speaker names at the start of
    every turn, a project's own name): they pull every passage equally close and drown what
    the question is about. BM25 weighs them down by itself; the dense side cannot. Counted
    over the units of `namespaces` (None: every one), the ones the search reads."""
    from vault_engine.text.tokens import tokenize

    if not index.lexical_for(namespaces):
        return text
    n = max(1, index.searched_units(namespaces))
    words = re.findall(r"[\w'’-]+|[^\w\s]", text)
    kept = []
    for word in words:
        toks = tokenize(word)
        common = any(index.doc_freq(t, namespaces) / n > COMMON_TERM_RATIO for t in toks)
        if not common:
            kept.append(word)
    out = " ".join(kept).strip()
    return out or text


def complete_rankings(index: RecallIndex, rankings: list[list[tuple[int, float]]], lexical: Any,
              qvec: Any) -> list[list[tuple[int, float]]]:
    """Both scores for every candidate: a unit one retriever found but the other ranked below
    its cut-off gets its real score from the other side (its BM25 score is already computed;
    its cosine is one reconstructed vector away) instead of nothing."""
    import numpy as np

    vec, lex = rankings
    seen_vec = {u for u, _ in vec}
    q = np.asarray(qvec, dtype=np.float32)
    extra = []
    for unit, _ in lex:
        if unit not in seen_vec:
            v = index.unit_vector(unit)
            if v is not None:
                extra.append((unit, float(np.dot(v, q))))
    seen_lex = {u for u, _ in lex}
    lex_extra = [(u, float(lexical[u])) for u, _ in vec if u not in seen_lex and lexical[u] > 0]
    return [sorted(vec + extra, key=lambda x: -x[1]), sorted(lex + lex_extra, key=lambda x: -x[1])]


def blend_context(index: RecallIndex, ranking: list[tuple[int, float]], qvec: Any,
                   weight: float) -> list[tuple[int, float]]:
    """A turn's dense score blended with the query's cosine to the turn read together with the
    one before it: an answer ("I've had them for three years") is found through the question
    it answers ("How long have you had your turtles?"). Turns without a context vector (a
    session's first turn, cards, entities) keep their own score."""
    import numpy as np

    ctx = index.context()
    if ctx is None or not weight or not ranking:
        return ranking
    rows_of, vectors = ctx
    units = np.fromiter((u for u, _ in ranking), dtype=np.int64, count=len(ranking))
    rows = np.asarray(rows_of[units])
    has = rows >= 0
    if not has.any():
        return ranking
    scores = np.fromiter((s for _, s in ranking), dtype=np.float32, count=len(ranking))
    q = np.asarray(qvec, dtype=np.float32).reshape(-1)
    scores[has] = (1.0 - weight) * scores[has] + weight * (np.asarray(vectors[rows[has]]) @ q)
    order = np.argsort(-scores, kind="stable")
    return [(int(units[i]), float(scores[i])) for i in order]
