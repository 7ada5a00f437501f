"""Recall stage 1, the query: what was asked (free text, concepts, relations, depth, nodes to
continue from, filters; the agent JSON form), the settings it runs with, the dates it names,
and the filters every candidate must pass (namespace, type, tag, kind, --as-of validity)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from vault_engine.errors import UsageError
from vault_engine.primitives import record, to_datetime

MODES = ("hybrid", "bm25", "vector")  # fused, lexical only, vectors only
KINDS = ("card", "entity", "session", "note", "scene", "query")  # what a recalled node is


@record(frozen=True)
class RecallQuery:
    """What was asked: text and concepts, relations to follow, nodes to continue from,
    filters (the agent JSON form: `from_json`)."""

    text: str = ""
    concepts: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    depth: int | None = None
    from_nodes: tuple[str, ...] = ()
    top_k: int | None = None
    namespaces: tuple[str, ...] = ()
    all_namespaces: bool = False
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    as_of: dt.datetime | None = None
    mode: str = "hybrid"  # hybrid | bm25 | vector
    expand: bool = True

    @property
    def query_text(self) -> str:
        return " ".join(x for x in (self.text, *self.concepts) if x).strip()

    @classmethod
    def from_json(cls, obj: Any) -> RecallQuery:
        """The agent JSON mode: {"query"|"text", "concepts", "relations", "depth",
        "from_nodes", "top_k", "namespace", "type", "tag", "kind", "as_of"}."""
        if not isinstance(obj, Mapping):
            raise UsageError("recall JSON input must be an object",
                             fix='e.g. {"concepts": ["gateway restart"], "relations": ["CAUSED_BY"]}')

        def strs(key: str, *alts: str) -> tuple[str, ...]:
            for k in (key, *alts):
                v = obj.get(k)
                if v is None:
                    continue
                if isinstance(v, str):
                    return tuple(x.strip() for x in v.split(",") if x.strip())
                if isinstance(v, list) and all(isinstance(x, str) for x in v):
                    return tuple(v)
                raise UsageError(f"`{k}` must be a string or a list of strings",
                                 fix=f'"{k}": ["…"]')
            return ()

        def integer(key: str) -> int | None:
            v = obj.get(key)
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise UsageError(f"`{key}` must be a non-negative integer", fix=f'"{key}": 2')
            return v

        known = {"query", "text", "concepts", "relations", "rel", "depth", "from_nodes",
                 "top_k", "namespace", "namespaces", "type", "types", "tag", "tags", "kind",
                 "kinds", "as_of", "mode", "all_namespaces"}
        unknown = set(obj) - known
        if unknown:
            raise UsageError(f"unknown recall keys: {sorted(unknown)}",
                             fix="see docs/recall.md for the JSON input")
        text = obj.get("query", obj.get("text", ""))
        if not isinstance(text, str):
            raise UsageError("`query` must be a string", fix='"query": "…"')
        as_of = parse_as_of(obj["as_of"]) if obj.get("as_of") else None
        mode = obj.get("mode") or "hybrid"
        if mode not in MODES:
            raise UsageError(f"`mode` must be one of {', '.join(MODES)}, not {mode!r}",
                             fix='"mode": "hybrid" (vectors + BM25), "bm25" or "vector"')
        kinds = strs("kind", "kinds")
        if set(kinds) - set(KINDS):
            raise UsageError(f"unknown kind {sorted(set(kinds) - set(KINDS))}: kinds are "
                             + ", ".join(KINDS), fix='e.g. "kind": ["card"]')
        return cls(text=text, concepts=strs("concepts"), relations=tuple(
            r.upper() for r in strs("relations", "rel")), depth=integer("depth"),
            from_nodes=strs("from_nodes"), top_k=integer("top_k"),
            namespaces=strs("namespace", "namespaces"), types=strs("type", "types"),
            tags=strs("tag", "tags"), kinds=kinds, as_of=as_of, mode=str(mode),
            all_namespaces=bool(obj.get("all_namespaces")))


def parse_as_of(value: Any) -> dt.datetime:
    when = to_datetime(value)
    if when is None:
        raise UsageError(f"--as-of {value!r} is not a date", fix="use YYYY-MM-DD or ISO 8601")
    return when


@record
class RecallSettings:
    """How recall ranks: `[recall]` of alaya.toml (`from_config`), defaults as there."""

    alpha: float = 0.5
    beta: float = 0.3
    gamma: float = 0.2
    rrf_k: int = 60
    top_k: int = 10
    depth: int = 1
    rel_threshold: float = 0.75
    mmr_lambda: float = 0.7
    default_namespace: str = "shared"
    fusion: str = "weighted"  # weighted | rrf (docs/recall.md: why weighted is the default)
    dense_weight: float = 0.7  # weighted fusion: share of the dense score
    context_weight: float = 0.5  # share of a turn's dense score read with the turn before it
    session_bm25_weight: float = 0.4  # a note's BM25 evidence over all its units
    date_weight: float = 0.3  # notes dated on a day or month the query names
    time_weight: float = 0.1  # a time question: turns that say when gain this (fused 0–1)
    expand_exclude: tuple[str, ...] = ()  # relation types a free-text search does not follow
    intent_weight: float = 1.5  # a step the way the question asks ("why" → CAUSED_BY)
    diversify: bool = True  # a search gives each session that adds something new a slot
    complete_scores: bool = True  # score every candidate on both sides (see retrieval.complete_rankings)
    other_speaker_factor: float = 0.6  # the turns a session shows: others' than the person named
    asking_factor: float = 0.6  # … and turns that mostly ask (recall/anchors.py)

    @classmethod
    def from_config(cls, config: Any) -> RecallSettings:
        r = config.section("recall")
        return cls(alpha=r["alpha"], beta=r["beta"], gamma=r["gamma"], rrf_k=r["rrf_k"],
                   top_k=r["top_k"], depth=r["depth"],
                   rel_threshold=r["rel_similarity_threshold"], mmr_lambda=r["mmr_lambda"],
                   default_namespace=config.get("vault", "default_namespace"),
                   fusion=r["fusion"], dense_weight=r["dense_weight"],
                   context_weight=r["context_weight"],
                   session_bm25_weight=r["session_bm25_weight"], date_weight=r["date_weight"],
                   time_weight=r["time_weight"], diversify=r["diversify"],
                   expand_exclude=tuple(r["expand_exclude"]),
                   intent_weight=r["intent_weight"],
                   other_speaker_factor=r["other_speaker_factor"],
                   asking_factor=r["asking_factor"])


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")


_DATE_IN_QUERY = (
    r"(?i)\b(?:(\d{1,2})\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
    r"(?:\s+(\d{1,2})(?:st|nd|rd|th)?)?(?:,?\s+(\d{4}))?\b|\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")


_ZH_DATE_IN_QUERY = r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(?:(\d{1,2})\s*[日号]|份)?"


@cache
def _date_res() -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(_ZH_DATE_IN_QUERY), re.compile(_DATE_IN_QUERY)


def dates_in_query(text: str) -> list[tuple[int | None, int, int | None]]:
    """(year, month, day) the query names ("in May 2023", "on 8 May", "2023-05-08",
    "4 月 29 日", "2026年5月", "五月份" is not read)."""
    folded = (text or "").casefold()
    if not any(c.isdigit() for c in folded) and not any(m[:3] in folded for m in _MONTHS):
        return []  # nothing a date could be made of: the patterns are not even compiled
    zh_re, date_re = _date_res()
    out = []
    for m in zh_re.finditer(text or ""):
        month = int(m.group(2))
        if 1 <= month <= 12 and (m.group(3) or m.group(1) or m.group(0).endswith("份")):
            out.append((int(m.group(1)) if m.group(1) else None, month,
                        int(m.group(3)) if m.group(3) else None))
    for m in date_re.finditer(text or ""):
        if m.group(2):
            month = [x[:3] for x in _MONTHS].index(m.group(2).lower()[:3]) + 1
            if m.group(2).lower() == "may" and not (m.group(1) or m.group(3) or m.group(4)):
                continue  # "may" alone is a verb far more often than a month
            day = m.group(1) or m.group(3)
            out.append((int(m.group(4)) if m.group(4) else None, month,
                        int(day) if day else None))
        else:
            out.append((int(m.group(5)), int(m.group(6)),
                        int(m.group(7)) if m.group(7) else None))
    return out


def passes(row: Mapping[str, Any], q: RecallQuery, namespaces: set[str] | None) -> bool:
    if namespaces is not None and row.get("namespace", "shared") not in namespaces:
        return False
    if q.types and row.get("type") not in q.types:
        return False
    if q.tags and not set(q.tags) & set(row.get("tags") or []):
        return False
    if q.kinds and row.get("kind") not in q.kinds:
        return False
    if q.as_of is not None:
        valid = row.get("valid") or []
        if valid:
            ok = False
            for start, end in valid:
                s, e = to_datetime(start), to_datetime(end)
                if (s is None or s <= q.as_of) and (e is None or q.as_of < e):
                    ok = True
            if not ok:
                return False
        else:
            when = to_datetime(row.get("when"))
            if when is not None and when > q.as_of:
                return False
    return True
