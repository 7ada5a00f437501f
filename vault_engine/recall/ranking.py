"""Recall stage 5, ranking: the heuristic distance h = α·concept_distance + β·relation_distance
+ γ·depth_penalty (seed 000 §4.4), the order it gives, and MMR diversity over the top."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .fusion import Hit
from .index import RecallIndex
from .query import RecallSettings


def rank(index: RecallIndex, hits: dict[int, Hit], qvec: Any, wanted: Sequence[str],
         top_k: int, settings: RecallSettings, *, listing: bool = False) -> list[Hit]:
    """The heuristic distance h = α·concept + β·relation + γ·depth for the hits that can be
    shown, their order (by score for a search, by h when navigating relations), then MMR.
    A search is diversified across sessions first (`diversify`)."""
    import numpy as np

    # heuristic distance: for every hit when navigating (it orders them), else only for the
    # candidates that can still be shown
    qv = np.asarray(qvec, dtype=np.float32) if qvec is not None else None
    candidates = list(hits.values()) if wanted else sorted(
        hits.values(), key=lambda h: (-h.score, h.node))[:top_k * 3]
    for hit in candidates:
        if hit.cosine is None and qv is not None:
            unit = hit.units[0][0] if hit.units else int(index.node_unit[hit.node])
            unit_vec = index.unit_vector(unit) if unit >= 0 else None
            if unit_vec is not None:
                hit.cosine = float(np.dot(unit_vec, qv))
        concept = 1.0 - hit.cosine if hit.cosine is not None else 1.0 - min(1.0, hit.score)
        # With relations asked for, a node reached through none of them is a full relation
        # step away; without, relation distance plays no part.
        rel_sim = hit.rel_similarity if hit.rel_similarity is not None else (
            0.0 if wanted else 1.0)
        hit.h = (settings.alpha * max(0.0, concept) + settings.beta * (1.0 - rel_sim)
                 + settings.gamma * 0.1 * hit.depth)

    if wanted:  # navigation: nearest by the heuristic distance first (seed 000 §4.4)
        ranked = sorted(candidates, key=lambda h: (h.h, -h.score, h.node))
    else:
        ranked = sorted(candidates, key=lambda h: (-h.score, h.h, h.node))
        if settings.diversify:
            ranked = diversify(index, ranked, listing)
    ranked = mmr(index, ranked, top_k, settings.mmr_lambda)
    return ranked


def sessions_of(index: RecallIndex, hit: Hit) -> frozenset[str]:
    """The sessions a hit stands for: a session itself, else the sessions its claims came
    from; a note that cites none stands for itself."""
    unit = hit.units[0][0] if hit.units else int(index.node_unit[hit.node])
    row = index.row(unit) if unit >= 0 else {}
    if row.get("kind") == "session":
        return frozenset({str(row.get("note"))})
    sources = [str(s).strip("[]").split("|")[0].split("#")[0]
               for s in row.get("source_sessions") or []]
    return frozenset(sources) if sources else frozenset({f"node:{hit.node}"})


def diversify(index: RecallIndex, ranked: list[Hit], listing: bool) -> list[Hit]:
    """Each session that adds something new gets a slot before a hit that repeats sessions
    already shown: a hit whose sessions are all covered by hits above it moves below the
    hits that bring a new one. For a list question ("what … all", "哪些") every hit is held to
    that — the answer is spread over sessions; otherwise only a hit graph expansion added
    (it earns a place by reaching a new session, not by restating its parent's)."""
    covered: set[str] = set()
    fresh: list[Hit] = []
    repeats: list[Hit] = []
    for hit in ranked:
        sessions = sessions_of(index, hit)
        if (listing or hit.depth > 0) and sessions <= covered:
            repeats.append(hit)
            continue
        covered |= sessions
        fresh.append(hit)
    return fresh + repeats


def mmr(index: RecallIndex, ranked: list[Hit], k: int, lam: float) -> list[Hit]:
    """Maximal marginal relevance over the top candidates (vectors of each hit's best unit)."""
    import numpy as np

    pool = ranked[:k * 3]
    if len(pool) <= k or lam >= 1.0:
        return pool[:k]
    order = {id(h): i for i, h in enumerate(pool)}
    dim = 0
    vecs: list[Any] = []
    for h in pool:
        unit = h.units[0][0] if h.units else int(index.node_unit[h.node])
        v = index.unit_vector(unit) if unit >= 0 else None
        vecs.append(v)
        dim = dim or (len(v) if v is not None else 0)
    if not dim:
        return pool[:k]
    # every pair's similarity at once (one matrix product instead of a dot per pair)
    has = np.array([v is not None for v in vecs])
    matrix = np.stack([np.asarray(v, dtype=np.float32) if v is not None
                       else np.zeros(dim, dtype=np.float32) for v in vecs])
    sims = matrix @ matrix.T
    # relevance from the position in the ranking, so MMR keeps whichever order was chosen
    # (by score for search, by heuristic distance for navigation)
    relevance = 1.0 - np.arange(len(pool)) / len(pool)
    # max similarity to a chosen hit (0 until one with a vector is chosen, and for hits
    # without a vector)
    redundancy = np.full(len(pool), -np.inf, dtype=np.float32)
    chosen: list[int] = []
    left = np.ones(len(pool), dtype=bool)
    while left.any() and len(chosen) < k:
        value = lam * relevance - (1 - lam) * np.where(np.isfinite(redundancy), redundancy, 0.0)
        value[~left] = -np.inf
        pick = int(np.argmax(value))
        chosen.append(pick)
        left[pick] = False
        if has[pick]:
            redundancy = np.where(has, np.maximum(redundancy, sims[pick]), redundancy)
            redundancy[~has] = -np.inf
    # MMR chooses which k; they are shown in the ranking's own order
    return sorted((pool[i] for i in chosen), key=lambda h: order[id(h)])
