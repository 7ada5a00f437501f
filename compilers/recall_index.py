"""Compact, memory-mappable arrays for recall (`recall/` in a build).

Recall runs on every agent turn, so it must not unpickle the networkx graph (1.4 s at 100k
cards) or parse the digest (3.4 s). This writes what recall needs as numpy arrays, opened with
`mmap_mode="r"`:

- `unit_offsets.npy` (int64): byte offset of each line of units.jsonl, so a hit's row is read
  with one seek instead of parsing the file;
- `unit_node.npy` (int32): the graph node of each unit; `node_unit.npy`: the first unit of
  each node (-1 when it has none);
- `out_indptr/out_indices/out_types/out_weights.npy` and the same `in_*`: the graph's
  adjacency (CSR) in both directions, relation types as indexes into `meta.json`;
- `unit_ns.npy` (int16): each unit's namespace, as an index into info.json's `namespaces`;
  `node_ns.npy` (int16) the same per graph node (traverse and expansion check every node
  they reach against the caller's namespaces);
  `unit_tier.npy` (int8): 0 HOT, 1 WARM, 2 COLD — so the common query filters and looks up
  vectors without decoding a unit's JSON row;
- `unit_timed.npy` (int8): 1 for a session turn that says when (a date, a relative day, how
  long ago — `vault_engine/text/timed.py`): a time question ranks it up;
- `node_kind.npy` (int8): each node's kind, as an index into info.json's `kinds`;
  `unit_superseded.npy` (int8): 1 for a unit of a card whose every claim a later card
  superseded; `node_speakers_indptr.npy` / `node_speakers.npy` (int32, CSR): the name forms
  of who spoke in each session, as indexes into info.json's `speakers` — what recall filters
  and ranks by for every candidate, without decoding hundreds of unit rows (the rows say the
  same: `kind`, `superseded`, `speakers`);
- `context_row.npy` (int32) and `context_vectors.npy` (float32): for each unit, its row in
  `context_vectors` (-1 for none) — the vector of a session turn read with the turn before it
  (`[embedding] turn_context`), blended into the turn's dense score at query time;
- `info.json`: relation type names, node count, namespaces, kinds, speakers, embedder id,
  compile time (read per query);
- `meta.json`: node keys and kinds (read only to resolve --from-nodes or unit-less nodes).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .digest import retired
from .graph import Edge
from .records import GRAPH_KINDS, NoteRecord

TIER_CODES = {"HOT": 0, "WARM": 1}  # anything else (COLD): 2, no vector


def write_recall_arrays(folder: Path, records: Sequence[NoteRecord], edges: Sequence[Edge],
                        unit_lines: Sequence[str], *, unit_tiers: Sequence[str] | None = None,
                        embedder: str | None = None, compiled_at: str | None = None,
                        context: tuple[Sequence[int], Any] | None = None,
                        quality: dict[str, float] | None = None) -> None:
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    nodes = [r for r in records if r.kind in GRAPH_KINDS]
    index = {r.key: i for i, r in enumerate(nodes)}
    unit_node: list[int] = []
    node_unit = np.full(len(nodes), -1, dtype=np.int32)
    namespaces = sorted({r.namespace for r in records})
    ns_index = {n: i for i, n in enumerate(namespaces)}
    unit_ns: list[int] = []
    unit_timed: list[int] = []
    for rec in records:
        node = index.get(rec.key, -1)
        unit_ns += [ns_index[rec.namespace]] * len(rec.units)
        unit_timed += [1 if u.timed else 0 for u in rec.units]
        for _ in rec.units:
            if node >= 0 and node_unit[node] < 0:
                node_unit[node] = len(unit_node)
            unit_node.append(node)
    offsets = np.zeros(len(unit_lines) + 1, dtype=np.int64)
    pos = 0
    for i, line in enumerate(unit_lines):
        offsets[i] = pos
        pos += len(line.encode("utf-8"))
    offsets[-1] = pos
    rel_types = sorted({e.type for e in edges})
    type_index = {t: i for i, t in enumerate(rel_types)}
    pairs_out: list[tuple[int, int, int, float]] = []
    for e in edges:
        s, t = index.get(e.source), index.get(e.target)
        if s is None or t is None:
            continue
        pairs_out.append((s, t, type_index[e.type], e.weight))
        if e.symmetric:
            pairs_out.append((t, s, type_index[e.type], e.weight))
    for name, pairs in (("out", pairs_out), ("in", [(t, s, k, w) for s, t, k, w in pairs_out])):
        pairs.sort()
        indptr = np.zeros(len(nodes) + 1, dtype=np.int32)
        for s, *_ in pairs:
            indptr[s + 1] += 1
        np.cumsum(indptr, out=indptr)
        np.save(folder / f"{name}_indptr.npy", indptr)
        np.save(folder / f"{name}_indices.npy", np.array([p[1] for p in pairs], dtype=np.int32))
        np.save(folder / f"{name}_types.npy", np.array([p[2] for p in pairs], dtype=np.int16))
        np.save(folder / f"{name}_weights.npy", np.array([p[3] for p in pairs],
                                                         dtype=np.float32))
    np.save(folder / "unit_offsets.npy", offsets)
    np.save(folder / "unit_node.npy", np.array(unit_node, dtype=np.int32))
    np.save(folder / "node_unit.npy", node_unit)
    np.save(folder / "unit_ns.npy", np.array(unit_ns, dtype=np.int16))
    np.save(folder / "unit_timed.npy", np.array(unit_timed, dtype=np.int8))
    np.save(folder / "node_ns.npy", np.array([ns_index[r.namespace] for r in nodes],
                                             dtype=np.int16))
    kinds = sorted({r.kind for r in nodes})
    kind_index = {k: i for i, k in enumerate(kinds)}
    np.save(folder / "node_kind.npy", np.array([kind_index[r.kind] for r in nodes],
                                               dtype=np.int8))
    np.save(folder / "unit_superseded.npy", np.array(
        [flag for rec in records for flag in [1 if retired(rec) else 0] * len(rec.units)],
        dtype=np.int8))
    node_forms = [list(r.extra.get("speakers") or []) for r in nodes]
    speakers = sorted({f for forms in node_forms for f in forms})
    form_index = {f: i for i, f in enumerate(speakers)}
    np.save(folder / "node_speakers_indptr.npy", np.cumsum(
        [0] + [len(forms) for forms in node_forms], dtype=np.int32))
    np.save(folder / "node_speakers.npy", np.array(
        [form_index[f] for forms in node_forms for f in forms], dtype=np.int32))
    if context is not None and len(context[0]):
        rows, matrix = context
        context_row = np.full(len(unit_lines), -1, dtype=np.int32)
        context_row[np.asarray(rows, dtype=np.int64)] = np.arange(len(rows), dtype=np.int32)
        np.save(folder / "context_row.npy", context_row)
        np.save(folder / "context_vectors.npy", np.ascontiguousarray(matrix, dtype=np.float32))
    # a ranking factor per node: < 1 for notes whose feedback is poor (compilers/usage.py)
    node_quality = np.ones(len(nodes), dtype=np.float32)
    for key, factor in (quality or {}).items():
        if key in index:
            node_quality[index[key]] = factor
    np.save(folder / "node_quality.npy", node_quality)
    if unit_tiers is not None:
        np.save(folder / "unit_tier.npy", np.array([TIER_CODES.get(t, 2) for t in unit_tiers],
                                                   dtype=np.int8))
    (folder / "info.json").write_text(json.dumps(
        {"relation_types": rel_types, "nodes": len(nodes), "embedder": embedder,
         "compiled_at": compiled_at, "namespaces": namespaces, "kinds": kinds,
         "speakers": speakers}, ensure_ascii=False), encoding="utf-8")
    (folder / "meta.json").write_text(json.dumps(
        {"nodes": [r.key for r in nodes], "kinds": [r.kind for r in nodes],
         "relation_types": rel_types}, ensure_ascii=False, separators=(",", ":")),
        encoding="utf-8")
