"""Records → networkx MultiDiGraph (`graph.pickle`).

Nodes are keyed by note id (`path:<path>` for a note without one) with `title`, `kind`,
`type`, `path`, `namespace`, `tier`. Edges carry `type`, `weight`, `reason`, `origin`:

- frontmatter relations and inline fields: their own type;
- body wikilinks: RELATES_TO, unless a typed relation already joins the same pair;
- claim evidence and `source_sessions` pointing at a session: EXTRACTED_FROM;
- symmetric types (SIMILAR_TO, CONTRADICTS, CO_OCCURS): one edge stored, added both ways with
  `symmetric=True` so traversal works from either end.

Unresolved and ambiguous targets are skipped (lint reports them). Nodes and edges are added in
sorted order, so the same vault always pickles to the same bytes.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from vault_engine.store.links import LinkResolver
from vault_engine.store.model import SYMMETRIC_RELATIONS

from .records import GRAPH_KINDS, NoteRecord


class Edge(NamedTuple):
    """A resolved edge (a NamedTuple: cheap to create, compare and pickle in bulk)."""

    source: str
    target: str
    type: str
    weight: float
    reason: str
    origin: str
    symmetric: bool = False


def resolve_edges(records: Sequence[NoteRecord], resolver: LinkResolver) -> list[Edge]:
    """Every edge of the vault, resolved, deduplicated (max weight wins), sorted."""
    best: dict[tuple[str, str, str], Edge] = {}

    def add(edge: Edge) -> None:
        if edge.source == edge.target:
            return
        if edge.symmetric and edge.target < edge.source:  # one edge, whichever end holds it
            edge = Edge(edge.target, edge.source, edge.type, edge.weight, edge.reason,
                        edge.origin, True)
        k = (edge.source, edge.target, edge.type)
        old = best.get(k)
        if old is None or edge.weight > old.weight:
            best[k] = edge

    def resolve(target: str, source: str, extras: bool):  # type: ignore[no-untyped-def]
        # Obsidian's rules from the source note; links alaya keeps in frontmatter (relations,
        # evidence, source sessions) also accept an id, title or alias. The resolver memoises.
        return resolver.resolve(target, source, extras=extras).note

    body: list[Edge] = []
    for rec in records:
        if rec.kind not in GRAPH_KINDS:
            continue
        for rel in rec.relations:
            hit = resolve(rel.target, rec.path, rel.origin == "frontmatter")
            if hit is None or hit.kind not in GRAPH_KINDS:
                continue
            edge = Edge(rec.key, hit.key, rel.type, rel.weight, rel.reason, rel.origin,
                        rel.type in SYMMETRIC_RELATIONS)
            if rel.origin in ("body", "embed"):
                body.append(edge)
            else:
                add(edge)
        sessions = [(s, 1.0) for s in rec.source_sessions] + list(rec.evidence_targets)
        for target, conf in sessions:
            hit = resolve(target, rec.path, True)
            if hit is not None and hit.kind == "session":
                add(Edge(rec.key, hit.key, "EXTRACTED_FROM", conf, "", "evidence"))
    joined = {frozenset((s, t)) for s, t, _ in best}
    for edge in body:
        if frozenset((edge.source, edge.target)) not in joined:
            add(edge)
    return sorted(best.values(), key=lambda e: (e.source, e.target, e.type))


def build_graph(records: Sequence[NoteRecord], edges: Sequence[Edge],
                tiers: Mapping[str, str]):  # type: ignore[no-untyped-def]
    """The graph, with every string interned: pickle shares equal strings by identity, so
    interning makes the bytes depend only on the content, not on which objects came from the
    record cache (incremental) and which were freshly parsed."""
    import networkx as nx

    s = sys.intern
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(
        (s(rec.key), {"title": s(rec.title), "kind": s(rec.kind), "type": s(rec.type or ""),
                      "path": s(rec.path), "namespace": s(rec.namespace),
                      "tier": s(tiers.get(rec.key, "COLD"))})
        for rec in sorted(records, key=lambda r: r.key) if rec.kind in GRAPH_KINDS)
    rows = []
    for e in edges:
        attrs = {"type": s(e.type), "weight": e.weight, "reason": s(e.reason),
                 "origin": s(e.origin), "symmetric": e.symmetric}
        rows.append((s(e.source), s(e.target), s(e.type), attrs))
        if e.symmetric:
            rows.append((s(e.target), s(e.source), s(e.type), dict(attrs)))
    graph.add_edges_from(rows)
    return graph


def edges_by_source(edges: Sequence[Edge]) -> dict[str, list[Edge]]:
    """Out-edges per node; a symmetric edge is listed on both ends (reversed on the target)."""
    out: dict[str, list[Edge]] = {}
    for e in edges:
        out.setdefault(e.source, []).append(e)
        if e.symmetric:
            out.setdefault(e.target, []).append(
                Edge(e.target, e.source, e.type, e.weight, e.reason, e.origin, True))
    return out
