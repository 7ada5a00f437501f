"""Knowledge gaps (seed 003 §3.2.2): questions the memory keeps answering badly, found in the
recall telemetry and triaged into the seed's four classes.

A recall is **weak** when it returned nothing, or when its best hit holds less than half of
the query's content words (the memory answered with something that does not say what was
asked). Weak recalls of the last `gap_days` days are grouped by topic (their content words
overlap by half or more), and each group is triaged against the vault:

- **C — recall failure**: one note covers ≥ 80 % of the question's words, yet recall did not
  put it first. Fix: the memory is there — check its tier, `--top-k`, or the question's words.
- **B — synonym mismatch**: recall's best hit was semantically close — a cosine of at least
  `[lifecycle] weak_similarity`; the default 0.83 is where the bundled multilingual-e5-small
  separates related from unrelated questions (set it for another embedder) — but shares few
  words. Fix: the user's words as an alias or claim of that note.
- **D — fragmented**: no note covers it, but two or more each cover part (≥ 30 %) and together
  ≥ 80 %. Fix: consolidate them into one card.
- **A — true unknown**: nothing covers it. A question to answer: a learning task.

Groups with at least `gap_min_queries` weak recalls become open questions in
reports/open-questions.md (with their queries and counts), which lint's `open-question` rule
points at.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vault_engine.primitives import to_datetime
from vault_engine.store.model import Card, Entity, Note, Session
from vault_engine.text.overlap import overlap, terms

CLASSES = {"A": "true unknown", "B": "synonym mismatch", "C": "recall failure",
           "D": "fragmented"}
COVERED, PART, GROUP = 0.8, 0.3, 0.5
WEAK_COVERAGE = 0.5


@dataclass
class Gap:
    queries: list[str]
    count: int
    cls: str
    notes: list[str] = field(default_factory=list)  # ids of the notes the triage points at
    last: str = ""

    @property
    def topic(self) -> str:
        return max(self.queries, key=lambda q: (self.queries.count(q), -len(q)))


def note_terms(note: Note) -> frozenset[str]:
    parts = [note.title, *note.aliases]
    if isinstance(note, Card | Entity):
        parts += [c.text for c in note.claims]
    if isinstance(note, Session):
        parts += [t.text for t in note.turns]
    else:
        parts.append(note.body)
    return terms(" ".join(parts))


def key_of(note: Note) -> str:
    return note.id or f"path:{note.path}"


def weak_recalls(events: Iterable[Mapping[str, Any]], known: Mapping[str, frozenset[str]],
                 now: dt.datetime, *, days: int) -> list[dict[str, Any]]:
    out = []
    since = now - dt.timedelta(days=days)
    for e in events:
        if "feedback" in e or not isinstance(e.get("hits"), list):
            continue
        when = to_datetime(e.get("ts"))
        query = str(e.get("query") or "").strip()
        if when is None or when < since or when > now or not query:
            continue
        q = terms(query)
        if not q:
            continue
        hits = [h for h in e["hits"] if isinstance(h, dict)]
        best = hits[0] if hits else None
        rel = max((float(h.get("relevance") or 0.0) for h in hits), default=0.0)
        cover = len(q & known.get(str(best.get("id")), frozenset())) / len(q) if best else 0.0
        if best is None or cover < WEAK_COVERAGE:
            out.append({"query": query, "terms": q, "best": best and best.get("id"),
                        "relevance": rel, "ts": str(e.get("ts"))})
    return out


def group(weak: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    groups: list[list[dict[str, Any]]] = []
    for w in weak:
        for g in groups:
            if any(overlap(w["terms"], x["terms"]) >= GROUP for x in g):
                g.append(w)
                break
        else:
            groups.append([w])
    return groups


def triage(members: Sequence[dict[str, Any]], known: Mapping[str, frozenset[str]],
           similarity: float) -> tuple[str, list[str]]:
    q = frozenset().union(*(m["terms"] for m in members))
    cover = sorted(((len(q & t) / len(q), k) for k, t in known.items() if q & t), reverse=True)
    if cover and cover[0][0] >= COVERED:
        return "C", [cover[0][1]]
    if any(m["best"] and m["relevance"] >= similarity for m in members):
        best = max((m for m in members if m["best"]), key=lambda m: m["relevance"])
        return "B", [str(best["best"])]
    parts = [(c, k) for c, k in cover if c >= PART][:4]
    if len(parts) >= 2:
        union = frozenset().union(*(q & known[k] for _, k in parts))
        if len(union) / len(q) >= COVERED:
            return "D", [k for _, k in parts]
    return "A", []


def find_gaps(events: Iterable[Mapping[str, Any]], notes: Sequence[Note], now: dt.datetime,
              settings: Mapping[str, Any]) -> list[Gap]:
    known = {key_of(n): note_terms(n) for n in notes
             if n.kind in ("card", "entity", "session", "note")}
    similarity = float(settings["weak_similarity"])
    weak = weak_recalls(events, known, now, days=int(settings["gap_days"]))
    gaps = []
    for members in group(weak):
        if len(members) < int(settings["gap_min_queries"]):
            continue
        cls, pointed = triage(members, known, similarity)
        gaps.append(Gap([m["query"] for m in members], len(members), cls, pointed,
                        max(m["ts"] for m in members)))
    gaps.sort(key=lambda g: (g.cls, -g.count, g.topic))
    return gaps
