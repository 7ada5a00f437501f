"""`agent-digest.json` and `claims.jsonl`: the compact view for agents that read files.

Schema: docs/schemas/agent-digest.schema.json (`schema_version` 1). Deterministic: pages sorted
by id, keys in a fixed order, no wall-clock time — the same vault gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from vault_engine.tiers import TierResult

from .graph import Edge
from .records import GRAPH_KINDS, NoteRecord

DIGEST_SCHEMA_VERSION = 1
TOP_CLAIMS = 5


def fingerprint(records: Sequence[NoteRecord]) -> str:
    h = hashlib.sha256()
    for rec in sorted(records, key=lambda r: r.path):
        h.update(f"{rec.path}\0{rec.checksum}\n".encode())
    return h.hexdigest()


def _top_claims(rec: NoteRecord) -> list[dict[str, Any]]:
    live = [c for c in rec.claims if c.get("status") not in ("refuted", "superseded")]
    live.sort(key=lambda c: (-(c.get("confidence") or 0.0), c.get("id") or ""))
    return [{"id": c["id"], "text": c["text"], "confidence": c.get("confidence"),
             "status": c.get("status"), "valid_from": c.get("valid_from"),
             "valid_until": c.get("valid_until"), "evidence_count": len(c.get("evidence") or [])}
            for c in live[:TOP_CLAIMS]]


def build_digest(records: Sequence[NoteRecord], edges: Sequence[Edge],
                 tiers: Mapping[str, TierResult]) -> dict[str, Any]:
    out_edges: dict[str, list[dict[str, Any]]] = {}
    for e in edges:
        out_edges.setdefault(e.source, []).append(
            {"type": e.type, "target": e.target, "weight": e.weight})
        if e.symmetric:
            out_edges.setdefault(e.target, []).append(
                {"type": e.type, "target": e.source, "weight": e.weight})
    pages = []
    counts: dict[str, int] = {}
    n_claims = 0
    for rec in sorted(records, key=lambda r: r.key):
        if rec.kind not in GRAPH_KINDS:
            continue
        counts[rec.kind] = counts.get(rec.kind, 0) + 1
        n_claims += len(rec.claims)
        tier = tiers.get(rec.key)
        page: dict[str, Any] = {
            "id": rec.key, "title": rec.title, "kind": rec.kind, "type": rec.type,
            "path": rec.path, "namespace": rec.namespace, "aliases": list(rec.aliases),
            "tags": list(rec.tags), "tier": tier.tier if tier else "COLD",
            "temperature": round(tier.temperature, 3) if tier else 0.0,
            "created": rec.created, "updated": rec.updated, "importance": rec.importance,
            "pinned": rec.pinned, "claim_count": len(rec.claims), "claims": _top_claims(rec),
            "relations": sorted(out_edges.get(rec.key, []),
                                key=lambda r: (r["type"], r["target"])),
            "source_sessions": list(rec.source_sessions),
        }
        for key in ("lane", "ask_for", "turns", "channel", "agent"):
            if key in rec.extra:
                page[key] = rec.extra[key]
        pages.append(page)
    return {
        "schema": "alaya/agent-digest",
        "schema_version": DIGEST_SCHEMA_VERSION,
        "vault_fingerprint": fingerprint(records),
        "counts": {"pages": len(pages), "claims": n_claims, "relations": len(edges),
                   "by_kind": dict(sorted(counts.items()))},
        "pages": pages,
    }


def claims_lines(records: Sequence[NoteRecord]) -> list[str]:
    lines = []
    for rec in sorted(records, key=lambda r: r.key):
        for c in rec.claims:
            row = {"note": rec.key, "path": rec.path, "title": rec.title, "claim": c["id"],
                   "text": c["text"], "confidence": c.get("confidence"),
                   "status": c.get("status"), "valid_from": c.get("valid_from"),
                   "valid_until": c.get("valid_until"), "evidence": c.get("evidence") or []}
            lines.append(json.dumps(row, ensure_ascii=False, sort_keys=False))
    return lines
