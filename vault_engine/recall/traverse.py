"""`alaya traverse`: paths between two notes, or the neighbourhood of one (seed 003 §2.5.4).

Works on the compiled CSR adjacency (`RecallIndex`), never on the pickled graph. Paths are
found with a bidirectional breadth-first search over edges in both directions (an edge
walked backwards is marked `reverse`), every simple path up to `max_hops` is scored by the
product of its edge weights, and the best three are returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_engine.store.namespaces import Caller
from vault_engine.store.relations import relation_similarity

from .expansion import resolve_node
from .index import RecallIndex, open_index

MAX_PATHS_PER_NODE = 50  # caps the enumeration on hubs


@dataclass(frozen=True)
class Step:
    source: str
    target: str
    rel: str
    weight: float
    reverse: bool


def _title(index: RecallIndex, node: int) -> str:
    unit = int(index.node_unit[node])
    return str(index.row(unit).get("title")) if unit >= 0 else index.node_key(node)


def _edges(index: RecallIndex, node: int, namespaces: set[str] | None
           ) -> list[tuple[int, str, float, bool]]:
    """A node's edges both ways, to nodes the caller may see only."""
    out = [(t, r, w, False) for t, r, w in index.neighbours(node, "out")]
    out += [(t, r, w, True) for t, r, w in index.neighbours(node, "in")]
    return [e for e in out if index.visible(e[0], namespaces)]


def _half_paths(index: RecallIndex, start: int, hops: int,
                namespaces: set[str] | None) -> dict[int, list[list[tuple]]]:
    """Every simple path of up to `hops` steps from `start`, keyed by its end node."""
    paths: dict[int, list[list[tuple]]] = {start: [[]]}
    frontier: list[tuple[int, list[tuple]]] = [(start, [])]
    for _ in range(hops):
        nxt: list[tuple[int, list[tuple]]] = []
        for node, path in frontier:
            visited = {start} | {step[1] for step in path}
            for target, rel, weight, reverse in _edges(index, node, namespaces):
                if target in visited:
                    continue
                bucket = paths.setdefault(target, [])
                if len(bucket) >= MAX_PATHS_PER_NODE:
                    continue
                new = path + [(node, target, rel, weight, reverse)]
                bucket.append(new)
                nxt.append((target, new))
        frontier = nxt
    return paths


def find_paths(state_dir: Path, a: str, b: str, *, max_hops: int = 3, best: int = 3,
               caller: Caller | None = None) -> dict[str, Any]:
    """Paths among the notes `caller` (omitted: the owner) may see."""
    index = open_index(state_dir)
    scope = (caller or Caller.owner()).readable()
    start, goal = resolve_node(index, a, scope), resolve_node(index, b, scope)
    if start == goal:
        return {"from": index.node_key(start), "to": index.node_key(goal), "paths": []}
    forward = _half_paths(index, start, (max_hops + 1) // 2, scope)
    backward = _half_paths(index, goal, max_hops // 2, scope)
    found: dict[tuple, tuple[float, list[Step]]] = {}
    for meet, left in forward.items():
        for right in backward.get(meet, []):
            back = [(t, s, r, w, not rev) for s, t, r, w, rev in reversed(right)]
            for lpath in left:
                walk = lpath + back
                sequence = [start] + [step[1] for step in walk]
                if not walk or len(walk) > max_hops or len(set(sequence)) != len(sequence):
                    continue  # empty, too long, or not a simple path
                steps = [Step(index.node_key(s), index.node_key(t), r, w, rev)
                         for s, t, r, w, rev in walk]
                key = tuple((s.source, s.target, s.rel) for s in steps)
                score = 1.0
                for step in steps:
                    score *= step.weight
                found[key] = (score, steps)
    ranked = sorted(found.values(), key=lambda x: (-x[0], len(x[1])))[:best]
    titles: dict[str, str] = {}

    def title(key: str) -> str:
        if key not in titles:
            titles[key] = _title(index, index.node_index[key])
        return titles[key]

    return {
        "from": index.node_key(start), "to": index.node_key(goal), "max_hops": max_hops,
        "paths": [{"score": round(score, 4), "hops": len(steps),
                   "steps": [{"source": s.source, "source_title": title(s.source),
                              "rel": s.rel, "reverse": s.reverse, "weight": round(s.weight, 3),
                              "target": s.target, "target_title": title(s.target)}
                             for s in steps]}
                  for score, steps in ranked],
    }


def neighbourhood(state_dir: Path, a: str, *, rels: Sequence[str] = (), depth: int = 1,
                  threshold: float = 0.75, caller: Caller | None = None) -> dict[str, Any]:
    index = open_index(state_dir)
    scope = (caller or Caller.owner()).readable()
    start = resolve_node(index, a, scope)
    seen = {start: 0}
    rows = []
    frontier = [start]
    for d in range(1, depth + 1):
        nxt = []
        for node in frontier:
            for target, rel, weight, reverse in _edges(index, node, scope):
                if rels and (reverse or max(relation_similarity(rel, r) for r in rels)
                             < threshold):
                    continue
                if target in seen:
                    continue
                seen[target] = d
                nxt.append(target)
                rows.append({"depth": d, "from": index.node_key(node), "rel": rel,
                             "reverse": reverse, "weight": round(weight, 3),
                             "id": index.node_key(target),
                             "title": _title(index, target), "kind": index.node_kind(target)})
        frontier = nxt
    return {"from": index.node_key(start), "title": _title(index, start), "relations": list(rels),
            "depth": depth, "nodes": rows}
