"""Recall stage 3, fusion: the two rankings fused (weighted scores by default, or reciprocal
rank fusion), then units grouped into one hit per note — a session scores from its best
turns, its whole-note BM25 and a match of its date against the dates the query names."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vault_engine.primitives import to_datetime

from .index import RecallIndex
from .query import RecallQuery, RecallSettings, dates_in_query, passes
from .retrieval import (
    note_bm25_scores,
)

SESSION_TURN_WEIGHTS = (1.0, 0.5, 0.25)  # a session scores from its best three turns
NOT_NAMED_FACTOR = 0.6  # a session the person a question names never spoke in


@dataclass
class Hit:
    """A note found by the search or reached by expansion, and how it scored."""

    node: int
    score: float
    units: list[tuple[int, float]] = field(default_factory=list)  # (unit, fused score)
    depth: int = 0
    matched_rel: str | None = None
    rel_similarity: float | None = None
    via: int | None = None
    cosine: float | None = None
    h: float = 0.0


def weighted_fusion(rankings: Sequence[tuple[float, list[tuple[int, float]]]]) -> dict[int, float]:
    """Score fusion: each ranking's scores scaled to 0–1 (by its best), weighted, summed."""
    fused: dict[int, float] = {}
    for weight, ranking in rankings:
        if not ranking:
            continue
        top = max(s for _, s in ranking) or 1.0
        low = min(s for _, s in ranking)
        span = (top - low) or top or 1.0
        for unit, score in ranking:
            fused[unit] = fused.get(unit, 0.0) + weight * (score - low) / span
    return fused


def boost_timed(index: RecallIndex, fused: dict[int, float], weight: float) -> dict[int, float]:
    """A time question ("when did …", "什么时候"): every candidate turn that says when (a date,
    a relative day, how long ago — compiled into `unit_timed`) gains `weight` on its fused
    score (0–1), so the turn that dates the event outranks turns that only name it."""
    timed = index.unit_timed
    if timed is None or not weight:
        return fused
    return {u: s + weight if timed[u] else s for u, s in fused.items()}


def rrf_fusion(rankings: Sequence[list[tuple[int, float]]], k: int) -> dict[int, float]:
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, (unit, _score) in enumerate(ranking):
            fused[unit] = fused.get(unit, 0.0) + 1.0 / (k + rank + 1)
    return fused


def date_match(when: str | None, dates: Sequence[tuple[int | None, int, int | None]]) -> float:
    stamp = to_datetime(when)
    if stamp is None:
        return 0.0
    best = 0.0
    for year, month, day in dates:
        if stamp.month != month or (year is not None and stamp.year != year):
            continue
        best = max(best, 1.0 if day is None or abs(stamp.day - day) <= 1 else 0.5)
    return best


def score_notes(index: RecallIndex, fused: dict[int, float], query: RecallQuery,
                namespaces: set[str] | None, lexical_scores: Any, text: str,
                cos: dict[int, float], settings: RecallSettings) -> dict[int, Hit]:
    """Fused unit scores → one hit per note: a session scores from its best three turns, plus
    its whole-note BM25 and a match of its date against dates the query names."""
    # units → nodes (a session scores from its best turns). Only the namespace to check: from
    # the per-unit array, without decoding rows; other filters read the row.
    by_node: dict[int, list[tuple[int, float]]] = {}
    unit_ns = index.unit_ns
    ns_only = not (query.types or query.tags or query.kinds or query.as_of is not None)
    allowed_ns = None if namespaces is None else {
        i for i, n in enumerate(index.namespaces) if n in namespaces}
    for unit, score in fused.items():
        if ns_only and unit_ns is not None:
            if allowed_ns is not None and int(unit_ns[unit]) not in allowed_ns:
                continue
        elif not passes(index.row(unit), query, namespaces):
            continue
        by_node.setdefault(int(index.unit_node[unit]), []).append((unit, score))
    # scaled by the best unit that can be shown (`--kind session`: entity facts and cards that
    # only seed expansion do not change how sessions compare)
    best = max((s for units in by_node.values() for _, s in units), default=1.0) or 1.0
    hits: dict[int, Hit] = {}
    node_lex: Any = {}
    lex_top = float(lexical_scores.max()) if lexical_scores is not None else 0.0
    if settings.session_bm25_weight and lex_top > 0:
        node_lex = note_bm25_scores(index, text, namespaces)  # notes of several units (sessions)

    def note_bm25(node: int) -> float:
        """A note's BM25 as one document: its unit's for a one-unit note."""
        if lex_top <= 0 or lexical_scores is None:
            return 0.0
        if index.node_units[node] > 1:
            return node_lex.get(node, 0.0)
        unit = int(index.node_unit[node])
        return float(lexical_scores[unit]) / lex_top if unit >= 0 else 0.0
    dates = dates_in_query(text)
    named = _named_speakers(index, by_node, text)
    named_keys = {str(index.row(by_node[n][0][0]).get("note")) for n in named}
    for node, units in by_node.items():
        if node < 0:
            continue
        units.sort(key=lambda x: -x[1])
        if index.node_kind(node) == "entity":
            # an entity page is as good as its best fact: its facts restate turns, and summed
            # (or read as one document) a page about someone matches every question naming them
            hits[node] = Hit(node=node, score=units[0][1] / best, units=units[:3],
                             cosine=cos.get(units[0][0]))
            continue
        score = sum(w * s / best for w, (_, s) in zip(SESSION_TURN_WEIGHTS, units, strict=False))
        score += settings.session_bm25_weight * note_bm25(node)
        if dates:  # the note's own date, or a day its best turns name ("yesterday" → 7 May)
            rows = [index.row(u) for u, _ in units[:3]]
            score += settings.date_weight * max(
                [date_match(rows[0].get("when"), dates)]
                + [date_match(day, dates) for row in rows for day in row.get("dates") or ()])
        if index.node_quality is not None:
            score *= float(index.node_quality[node])  # poor feedback: × 0.5 (seed 003 §3.2.1)
        if named and node not in named:  # the person the question names did not speak here
            row = index.row(units[0][0])
            if row.get("kind") == "session" or (row.get("kind") == "card" and row.get(
                    "source_sessions") and not set(row["source_sessions"]) & named_keys):
                score *= NOT_NAMED_FACTOR
        hits[node] = Hit(node=node, score=score, units=units[:3],
                         cosine=cos.get(units[0][0]))
    return hits


def question_names(text: str) -> Callable[[str], bool]:
    """form → does the question name it (a name form as `index.node_speakers` gives it:
    casefolded, pinyin for a Chinese name); a Latin-letter form only as a whole word."""
    import re

    query = (text or "").casefold()
    named: dict[str, bool] = {}

    def names(form: str) -> bool:
        if form not in named:
            named[form] = bool(re.search(rf"(?<![a-z]){re.escape(form)}(?![a-z])", query)
                               if form.isascii() else form in query)
        return named[form]

    return names


def _named_speakers(index: RecallIndex, by_node: dict[int, list[tuple[int, float]]],
                    text: str) -> set[int]:
    """Sessions in which a person the question names ("Tom 希望…", "talking to Li Na") spoke,
    when some candidate sessions are theirs and others are not (in a two-person conversation,
    where everyone is in every session, the name tells nothing)."""
    if not text:
        return set()
    names = question_names(text)
    sessions: dict[int, set[str]] = {}
    for node in by_node:
        if node >= 0 and index.node_kind(node) == "session":
            sessions[node] = {f for f in index.node_speakers(node) if names(f)}
    with_name = {n for n, found in sessions.items() if found}
    return with_name if len(with_name) < len(sessions) else set()
