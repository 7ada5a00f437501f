"""Recall stage 5, ranking: the heuristic distance h = α·concept_distance + β·relation_distance
+ γ·depth_penalty (seed 000 §4.4), the order it gives, and MMR diversity over the top."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .fusion import Hit
from .index import RecallIndex
from .query import RecallSettings

SEEDS = 10  # graph expansion starts from the best 10 hits, whatever --top-k asks
POOL = 30  # ordering and MMR work on the best 30 candidates (more when --top-k asks more)
SUPERSEDED_FACTOR = 0.6  # a card every claim of which a later card superseded
CURRENT_FACTOR = 0.35  # … when the question asks for the current value ("现在…", "currently")
_CURRENT = (r"(?i)现在|目前|当前|如今|最新|眼下|\bcurrent(?:ly)?\b|\bnow\b|\blatest\b"
            r"|\bthese\s+days\b|\bat\s+the\s+moment\b|\bas\s+of\s+today\b")
# a word each alternative needs: a question with none of them is not searched (the pattern
# is compiled only for one that has one — re caches it)
_CURRENT_WORDS = ("现在", "目前", "当前", "如今", "最新", "眼下", "current", "now", "latest",
                  "these", "moment", "today")


def wants_current(text: str) -> bool:
    """Does the question ask for the value that holds now ("现在…是多少", "currently")?"""
    folded = (text or "").casefold()  # as (?i) reads it: ſ is s
    return any(w in folded for w in _CURRENT_WORDS) and bool(re.search(_CURRENT, text))


def rank(index: RecallIndex, hits: dict[int, Hit], qvec: Any, wanted: Sequence[str],
         top_k: int, settings: RecallSettings, *, current: bool = False,
         listing: bool = False, query: str = "",
         namespaces: set[str] | None = None) -> list[Hit]:
    """The heuristic distance h = α·concept + β·relation + γ·depth for the hits that can be
    shown, their order (by score for a search, by h when navigating relations), then MMR.

    The order is a function of the query alone: the first k results are the same whatever
    `top_k` asks for (up to POOL; beyond, the pool grows with it). Cards whose every claim was
    superseded by a later card rank lower, and much lower when the question asks for the
    current value — as does a session whose value a later session replaced
    (`superseded_sessions`). A search is diversified across sessions before MMR (`diversify`)."""
    import numpy as np

    # heuristic distance: for every hit when navigating (it orders them), else only for the
    # candidates that can still be shown
    qv = np.asarray(qvec, dtype=np.float32) if qvec is not None else None
    pool = max(POOL, top_k)
    for hit in hits.values():
        if _superseded(index, hit):
            hit.score *= CURRENT_FACTOR if current else SUPERSEDED_FACTOR
    if current:
        later = superseded_sessions(index, hits, namespaces)
        for node in later:
            hits[node].score *= CURRENT_FACTOR
        _demote_stale_cards(index, hits, later, query)
    candidates = list(hits.values()) if wanted else sorted(
        hits.values(), key=lambda h: (-h.score, h.node))[:pool]
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
    return mmr(index, ranked, pool, settings.mmr_lambda)[:top_k]


def _superseded(index: RecallIndex, hit: Hit) -> bool:
    unit = hit.units[0][0] if hit.units else int(index.node_unit[hit.node])
    return unit >= 0 and bool(index.superseded(unit))


def sessions_of(index: RecallIndex, hit: Hit) -> frozenset[str]:
    """The sessions a hit stands for: a session itself, else the sessions its claims came
    from; a note that cites none stands for itself."""
    unit = hit.units[0][0] if hit.units else int(index.node_unit[hit.node])
    row = index.row(unit) if unit >= 0 else {}
    if row.get("kind") == "session":
        return frozenset({str(row.get("note"))})
    if row.get("kind") == "entity":  # an entity page stands for the sessions of the facts shown
        cited = {str(index.row(u).get("cites") or "").split("#", 1)[0].rsplit("/", 1)[-1]
                 for u, score in hit.units if u >= 0 and score > 0}
        cited.discard("")
        return frozenset(cited) if cited else frozenset({f"node:{hit.node}"})
    sources = [str(s).strip("[]").split("|")[0].split("#")[0]
               for s in row.get("source_sessions") or []]
    return frozenset(sources) if sources else frozenset({f"node:{hit.node}"})


def diversify(index: RecallIndex, ranked: list[Hit], listing: bool) -> list[Hit]:
    """Each session that adds something new gets a slot before a hit that repeats sessions
    already shown: a hit whose sessions are all covered by hits above it moves below the
    hits that bring a new one. For a list question ("what … all", "哪些") every hit is held to
    that — the answer is spread over sessions; otherwise only a hit graph expansion added
    (it earns a place by reaching a new session, not by restating its parent's) and an entity
    page (its facts restate turns of the sessions it stands for)."""
    covered: set[str] = set()
    fresh: list[Hit] = []
    repeats: list[Hit] = []
    for hit in ranked:
        sessions = sessions_of(index, hit)
        held = listing or hit.depth > 0 or index.node_kind(hit.node) == "entity"
        if held and sessions <= covered:
            repeats.append(hit)
            continue
        covered |= sessions
        fresh.append(hit)
    return fresh + repeats


def superseded_sessions(index: RecallIndex, hits: dict[int, Hit],
                        namespaces: set[str] | None = None) -> dict[int, set[int]]:
    """Sessions among the hits whose value a later session among the hits replaced: a card
    of the later one SUPERSEDES a card of the earlier one, and one of the two cards is itself
    a hit (the question is about that value). For "现在… / currently" the later session then
    ranks first, as its card does. Each earlier session maps to the cards of those pairs
    (the superseding card and the one it supersedes). Only cards of `namespaces` (None: every
    one) take part: another agent's card never demotes what the caller reads."""
    sessions = {n for n in hits if index.node_kind(n) == "session"}
    if len(sessions) < 2:
        return {}
    out: dict[int, set[int]] = {}
    everything = index.searches_all(namespaces)
    for new_session in sessions:
        for card, rel, _ in index.neighbours(new_session, "in"):
            if rel != "EXTRACTED_FROM" or not (everything or index.visible(card, namespaces)):
                continue
            for old_card, rel2, _ in index.neighbours(card, "out"):
                if rel2 != "SUPERSEDES" or (card not in hits and old_card not in hits) or not (
                        everything or index.visible(old_card, namespaces)):
                    continue
                for s, rel3, _ in index.neighbours(old_card, "out"):
                    if rel3 == "EXTRACTED_FROM" and s in sessions and s != new_session:
                        out.setdefault(s, set()).update({card, old_card})
    return out


def _demote_stale_cards(index: RecallIndex, hits: dict[int, Hit], later: dict[int, set[int]],
                        query: str) -> None:
    """For "现在…": a card that comes from a superseded session alone goes down with its
    session when every word of the question it matches is matched by the pair of cards of
    the change too (the new value's card and the old one's) — it is about the value that
    changed: "checkpoint 一直超时" under "risk-feature-agg 现在的 checkpoint interval", where
    the card that moved the interval from 2min to 5min matches all it does. A card of that
    session that matches what the change does not ("P1 和 P2 的告警现在通知到哪里", after an
    on-call swap) answers something else and stays where it is."""
    from vault_engine.text.tokens import tokenize

    asked = frozenset(tokenize(query))
    if not asked:
        return
    for old_session, pair in later.items():
        names = sessions_of(index, hits[old_session])
        covered = frozenset().union(*(asked & _terms(index, c) for c in pair))
        for node, hit in hits.items():
            if node == old_session or index.node_kind(node) == "session" or _superseded(index, hit) \
                    or not sessions_of(index, hit) <= names:
                continue
            if asked & _terms(index, node) <= covered:
                hit.score *= CURRENT_FACTOR


def _terms(index: RecallIndex, node: int) -> frozenset[str]:
    from vault_engine.text.tokens import tokenize

    unit = int(index.node_unit[node])
    row = index.row(unit) if unit >= 0 else {}
    return frozenset(tokenize(f"{row.get('title') or ''} {row.get('snippet') or ''}"))


def mmr(index: RecallIndex, ranked: list[Hit], k: int, lam: float) -> list[Hit]:
    """Maximal marginal relevance over the best `k` candidates (vectors of each hit's best
    unit), in the order it picks them: a prefix of the result does not depend on how much of
    it is shown. Relevance comes from the position in the ranking, so MMR keeps whichever
    order was chosen (by score for search, by heuristic distance for navigation)."""
    import numpy as np

    pool = ranked[:k]
    if len(pool) <= 1 or lam >= 1.0:
        return pool
    dim = 0
    vecs: list[Any] = []
    for h in pool:
        unit = h.units[0][0] if h.units else int(index.node_unit[h.node])
        v = index.unit_vector(unit) if unit >= 0 else None
        vecs.append(None if v is None else np.asarray(v, dtype=np.float32))
        dim = dim or (len(v) if v is not None else 0)
    has = np.array([v is not None for v in vecs])
    mat = np.stack([v if v is not None else np.zeros(dim or 1, np.float32) for v in vecs])
    sims = mat @ mat.T
    relevance = 1.0 - np.arange(len(pool)) / len(pool)
    redundancy = np.zeros(len(pool), np.float32)
    left = np.ones(len(pool), bool)
    chosen: list[int] = []
    while left.any():
        value = np.where(left, lam * relevance - (1 - lam) * redundancy, -np.inf)
        pick = int(np.argmax(value))
        chosen.append(pick)
        left[pick] = False
        if has[pick]:
            redundancy = np.maximum(redundancy, np.where(has, sims[pick], 0.0))
    return [pool[i] for i in chosen]
