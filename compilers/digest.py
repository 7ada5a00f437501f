"""`agent-digest.json`, `claims.jsonl` and `units.jsonl`, assembled from per-note fragments.

Schema: docs/schemas/agent-digest.schema.json (`schema_version` 1). Each note's page, claim
lines and unit rows are serialised once and cached (`Fragment`) until the note, its tier or its
resolved out-edges change, so an incremental compile re-serialises only what changed.
Deterministic: pages sorted by path, keys in a fixed order, no wall-clock time — the same
vault gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vault_engine.care.tiers import TierResult

from .graph import Edge
from .records import GRAPH_KINDS, NoteRecord

DIGEST_SCHEMA_VERSION = 1
TOP_CLAIMS = 5
# One C-accelerated encoder for everything (indent= would fall back to pure Python).
_ENC = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Fragment:
    key: tuple[Any, ...]  # (checksum, tier, temperature, out-edges): valid while equal
    page: str  # the digest page as JSON ("" for notes that are not pages)
    claims: str  # claims.jsonl lines
    n_claims: int
    units: str  # units.jsonl lines (row i = FAISS id i)


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


def page_dict(rec: NoteRecord, tier: TierResult, out: Sequence[Edge]) -> dict[str, Any]:
    page: dict[str, Any] = {
        "id": rec.key, "title": rec.title, "kind": rec.kind, "type": rec.type,
        "path": rec.path, "namespace": rec.namespace, "aliases": list(rec.aliases),
        "tags": list(rec.tags), "tier": tier.tier, "temperature": round(tier.temperature, 3),
        "created": rec.created, "updated": rec.updated, "importance": rec.importance,
        "pinned": rec.pinned, "claim_count": len(rec.claims), "claims": _top_claims(rec),
        "relations": sorted(({"type": e.type, "target": e.target, "weight": e.weight}
                             for e in out), key=lambda r: (r["type"], r["target"])),
        "source_sessions": list(rec.source_sessions),
    }
    for key in ("lane", "ask_for", "turns", "channel", "agent"):
        if key in rec.extra:
            page[key] = rec.extra[key]
    return page


def retired(rec: NoteRecord) -> bool:
    """Every claim superseded (or refuted) by a later card: recall ranks the card lower (each
    unit row's `superseded`, and recall/unit_superseded.npy)."""
    return bool(rec.claims) and all(c.get("status") in ("refuted", "superseded")
                                    for c in rec.claims)


def make_fragment(rec: NoteRecord, tier: TierResult, out: Sequence[Edge],
                  key: tuple[Any, ...]) -> Fragment:
    page = _ENC.encode(page_dict(rec, tier, out)) if rec.kind in GRAPH_KINDS else ""
    claims = "".join(_ENC.encode({
        "note": rec.key, "path": rec.path, "title": rec.title, "claim": c["id"],
        "text": c["text"], "confidence": c.get("confidence"), "status": c.get("status"),
        "valid_from": c.get("valid_from"), "valid_until": c.get("valid_until"),
        "evidence": c.get("evidence") or []}) + "\n" for c in rec.claims)
    valid = [[c.get("valid_from"), c.get("valid_until")] for c in rec.claims
             if c.get("status") not in ("refuted", "superseded")]
    flags: dict[str, Any] = {}
    if rec.volatile:
        flags["volatile"] = True
    if rec.stale is not None:
        flags["stale"] = rec.stale
    superseded = retired(rec)
    units = "".join(_ENC.encode({
        "note": rec.key, "kind": rec.kind, "anchor": u.anchor, "title": rec.title,
        "path": rec.path, "tier": tier.tier, "namespace": rec.namespace, "type": rec.type,
        "tags": list(rec.tags),
        # an entity page's fact is as old as the turn it cites (--as-of, the date match)
        "when": f"{u.dates[0]}T00:00:00Z" if u.cites and u.dates else rec.created,
        "valid": valid, "superseded": superseded,
        "speakers": rec.extra.get("speakers") or [],
        "source_sessions": list(rec.source_sessions), "snippet": u.snippet,
        **({"dates": list(u.dates)} if u.dates else {}),
        **({"cites": u.cites} if u.cites else {}), **flags}) + "\n"
        for u in rec.units)
    return Fragment(key=key, page=page, claims=claims, n_claims=len(rec.claims), units=units)


def public_claims(records: Sequence[NoteRecord], frags: Sequence[Fragment]) -> str:
    """The lines of `.alaya/claims.jsonl`: the claims of the notes every reader may see
    (`shared`), in the build's order — the same lines as the build's claims.jsonl has for
    them."""
    from vault_engine.store.namespaces import Caller

    public = Caller.public()
    return "".join(f.claims for rec, f in zip(records, frags, strict=True)
                   if f.claims and public.may_read(rec.namespace))


def digest_header(records: Sequence[NoteRecord], edges: Sequence[Edge],
                  pages: Sequence[Fragment]) -> str:
    """The digest without its pages: `"pages":null` is replaced by the joined fragments."""
    counts: dict[str, int] = {}
    n_claims = 0
    for rec in records:
        if rec.kind in GRAPH_KINDS:
            counts[rec.kind] = counts.get(rec.kind, 0) + 1
            n_claims += len(rec.claims)
    return _ENC.encode({
        "schema": "alaya/agent-digest",
        "schema_version": DIGEST_SCHEMA_VERSION,
        "vault_fingerprint": fingerprint(records),
        "counts": {"pages": len(pages), "claims": n_claims, "relations": len(edges),
                   "by_kind": dict(sorted(counts.items()))},
        "pages": None,
    })


def audience_digests(records: Sequence[NoteRecord], tiers: dict[str, TierResult],
                     out_edges: Mapping[str, Sequence[Edge]], frags: Sequence[Fragment]
                     ) -> dict[str | None, str]:
    """The digest every reader may see (key None: `shared` only) and one per agent (shared
    plus that agent's own namespaces) — the files `.alaya/agent-digest.json` and
    `.alaya/digest/<agent>.json`. A page keeps only the relations that point at another page
    of the same digest; the cached page text is reused when nothing had to go."""
    from vault_engine.errors import UsageError
    from vault_engine.store.namespaces import Caller, agent_of

    audiences: dict[str | None, Caller] = {None: Caller.public()}
    for rec in records:
        name = agent_of(rec.namespace)
        if name and name not in audiences:
            try:
                audiences[name] = Caller.of_agent(name)
            except UsageError:
                continue  # a namespace no agent can be named after: nobody's digest
    out: dict[str | None, str] = {}
    for name, caller in audiences.items():
        mine = [(rec, f) for rec, f in zip(records, frags, strict=True)
                if caller.may_read(rec.namespace)]
        keys = {rec.key for rec, _ in mine}
        pages: list[str] = []
        n_edges = 0
        for rec, frag in mine:
            if not frag.page:
                continue
            edges = out_edges.get(rec.key, ())
            kept = [e for e in edges if e.target in keys]
            n_edges += len(kept)
            pages.append(frag.page if len(kept) == len(edges) else
                         _ENC.encode(page_dict(rec, tiers[rec.key], kept)))
        header = digest_header([rec for rec, _ in mine], [], [f for _, f in mine if f.page])
        header = header.replace('"relations":0', f'"relations":{n_edges}', 1)
        out[name] = header.replace('"pages":null', '"pages":[' + ",".join(pages) + "]") + "\n"
    return out
