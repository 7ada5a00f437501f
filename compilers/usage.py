"""What usage tells a compile (telemetry, never the markdown): temperatures and tiers from
recall events, a ranking factor for notes whose feedback is poor, and CO_OCCURS edges between
notes that are recalled together.

- **Tiers** (vault_engine.care.tiers): the same inputs introspect and status use, so the three
  agree at the same "now".
- **Quality** (seed 003 §3.2.1): a note with at least `[lifecycle] quality_min_verdicts`
  useful/not-useful verdicts whose share of useful ones is below `quality_low` is multiplied
  by `quality_factor` (0.5) in recall.
- **CO_OCCURS** (seed 003 §2.5.3): two cards or entities that sit together in the top 5 of at
  least `co_occurs_min_queries` different queries get a symmetric CO_OCCURS edge, weight =
  recalls together / min(recalls of either). Derived data only: it lives in the graph and
  the recall arrays, never in frontmatter, and graph expansion follows it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vault_engine.care.tiers import TierResult, assign_tiers, tier_input
from vault_engine.primitives import to_datetime
from vault_engine.store.vault import Vault
from vault_engine.telemetry import note_stats, read_events

from .graph import Edge
from .records import NoteRecord
from .state import signature

CO_OCCURS_TOP = 5  # seed 003: co-occurrence among the top 5 results of one recall
CO_OCCURS_KINDS = frozenset({"card", "entity"})


@dataclass
class Usage:
    tiers: dict[str, TierResult]
    quality: dict[str, float] = field(default_factory=dict)  # key → ranking factor (< 1)
    co_occurs: list[Edge] = field(default_factory=list)

    @property
    def signature(self) -> str:
        """What of usage the published artifacts depend on besides tiers and temperatures."""
        return signature([f"q|{k}|{v}" for k, v in sorted(self.quality.items())]
                         + [f"c|{e.source}|{e.target}|{e.weight}" for e in self.co_occurs])


def read_usage(vault: Vault, records: Sequence[NoteRecord], first_seen: Mapping[str, str],
               now: dt.datetime) -> Usage:
    events = list(read_events(vault.state_dir))
    stats = note_stats(vault.state_dir, events)
    inputs = [tier_input(r.key, to_datetime(r.created), to_datetime(first_seen.get(r.path)), now,
                         pinned=r.pinned, volatile=r.volatile, namespace=r.namespace)
              for r in records]
    tiers = assign_tiers(inputs, stats, now, vault.config.section("tiers"))
    life = vault.config.section("lifecycle")
    keys = {r.key: r for r in records}
    return Usage(tiers=tiers, quality=_quality(events, keys, life),
                 co_occurs=_co_occurs(events, keys, int(life["co_occurs_min_queries"])))


def _quality(events: Sequence[Mapping[str, Any]], keys: Mapping[str, NoteRecord],
             life: Mapping[str, Any]) -> dict[str, float]:
    votes: dict[str, list[int]] = {}
    for e in events:
        verdict, key = e.get("feedback"), e.get("id")
        if isinstance(key, str) and key in keys and verdict in ("useful", "not-useful"):
            v = votes.setdefault(key, [0, 0])
            v[0 if verdict == "useful" else 1] += 1
    out = {}
    for key, (useful, not_useful) in votes.items():
        total = useful + not_useful
        if total >= int(life["quality_min_verdicts"]) and \
                useful / total < float(life["quality_low"]):
            out[key] = float(life["quality_factor"])
    return out


def _co_occurs(events: Sequence[Mapping[str, Any]], keys: Mapping[str, NoteRecord],
               min_queries: int) -> list[Edge]:
    together: dict[tuple[str, str], set[str]] = {}
    pair_recalls: dict[tuple[str, str], int] = {}
    recalls: dict[str, int] = {}
    for e in events:
        hits = e.get("hits")
        if not isinstance(hits, list) or "feedback" in e:
            continue
        top = []
        for h in hits[:CO_OCCURS_TOP]:
            key = h.get("id") if isinstance(h, dict) else None
            if isinstance(key, str) and key in keys and keys[key].kind in CO_OCCURS_KINDS \
                    and key not in top:
                top.append(key)
        for key in top:
            recalls[key] = recalls.get(key, 0) + 1
        query = str(e.get("query", ""))
        for i, a in enumerate(top):
            for b in top[i + 1:]:
                pair = (a, b) if a < b else (b, a)
                together.setdefault(pair, set()).add(query)
                pair_recalls[pair] = pair_recalls.get(pair, 0) + 1
    edges = []
    for (a, b), queries in sorted(together.items()):
        if len(queries) < min_queries:
            continue
        weight = round(min(1.0, pair_recalls[(a, b)] / min(recalls[a], recalls[b])), 3)
        edges.append(Edge(a, b, "CO_OCCURS", weight,
                          f"recalled together in {len(queries)} queries", "telemetry", True))
    return edges
