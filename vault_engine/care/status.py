"""`alaya schema`, `alaya status`, `alaya export`: what the compiled vault holds.

All three read the current build (digest, manifest, graph pickle) — none is on the recall
path, so they may use the heavier artifacts.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

from vault_engine import artifacts as A
from vault_engine.errors import NotCompiledError, refused_write
from vault_engine.store.atomic import atomic_write
from vault_engine.store.model import CORE_RELATIONS, SYMMETRIC_RELATIONS
from vault_engine.store.namespaces import Caller
from vault_engine.telemetry import read_events

GENERIC_RELATIONS = {"RELATES_TO"}
PROMOTE_AT = 100  # a custom relation used this often should become a core one (seed 000)


def _build(state_dir: Path) -> A.Build:
    build = A.current_build(state_dir)
    if build is None:
        raise NotCompiledError("the vault has not been compiled yet", fix="run `alaya compile`")
    return build


def visible_digest(build: A.Build, caller: Caller | None) -> dict[str, Any]:
    """The build's digest as `caller` (omitted: the owner) may see it: pages of
    readable namespaces, each with only the relations that point at another of them."""
    digest = build.digest()
    caller = caller if caller is not None else Caller.owner()
    if caller.is_owner:
        return digest
    pages = [p for p in digest["pages"] if caller.may_read(p.get("namespace"))]
    ids = {p["id"] for p in pages}
    for p in pages:
        p["relations"] = [r for r in p["relations"] if r["target"] in ids]
    digest["pages"] = pages
    digest["counts"] = {**digest["counts"], "pages": len(pages),
                        "claims": sum(p.get("claim_count", 0) for p in pages)}
    return digest


def relation_counts(digest: dict[str, Any]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for page in digest["pages"]:
        for rel in page["relations"]:
            counts[rel["type"]] += 1
    for rel in SYMMETRIC_RELATIONS:  # listed on both ends in the digest: one edge
        if rel in counts:
            counts[rel] = (counts[rel] + 1) // 2
    return counts


def schema_relations(state_dir: Path, caller: Caller | None = None) -> dict[str, Any]:
    counts = relation_counts(visible_digest(_build(state_dir), caller))
    core = [{"type": t, "uses": counts.get(t, 0), "symmetric": t in SYMMETRIC_RELATIONS}
            for t in CORE_RELATIONS]
    custom = []
    for t, n in counts.most_common():
        if t in CORE_RELATIONS:
            continue
        hint = "high frequency: consider promoting to a core type" if n >= PROMOTE_AT else None
        custom.append({"type": t, "uses": n, "hint": hint})
    for row in core:
        if row["type"] in GENERIC_RELATIONS and row["uses"]:
            row["hint"] = "generic: consider a more specific type"
    return {"core": core, "custom": custom, "total_edges": sum(counts.values()),
            "core_types": len(CORE_RELATIONS), "custom_types": len(custom)}


def schema_node_types(state_dir: Path, caller: Caller | None = None) -> dict[str, Any]:
    digest = visible_digest(_build(state_dir), caller)
    kinds = Counter(p["kind"] for p in digest["pages"])
    card_types = Counter(p["type"] or "untyped" for p in digest["pages"] if p["kind"] == "card")
    entity_types = Counter(p["type"] or "untyped" for p in digest["pages"]
                           if p["kind"] == "entity")
    return {"kinds": dict(sorted(kinds.items())), "card_types": dict(card_types.most_common()),
            "entity_types": dict(entity_types.most_common()),
            "cards": kinds.get("card", 0), "sessions": kinds.get("session", 0)}


def _visible_vectors(build: A.Build, manifest: dict[str, Any], caller: Caller | None
                     ) -> tuple[int, dict[str, int]]:
    """(units, vectors per tier) the caller may search: the manifest's totals for the owner,
    counted from the per-unit namespace and tier arrays for an agent."""
    caller = caller if caller is not None else Caller.owner()
    if caller.is_owner:
        return manifest["counts"]["units"], manifest["counts"]["vectors"]
    arrays = build.unit_namespaces()
    if arrays is None:
        return 0, {"HOT": 0, "WARM": 0}
    names, unit_ns, unit_tier = arrays
    allowed = {i for i, n in enumerate(names) if caller.may_read(n)}
    tiers = [int(t) for ns, t in zip(unit_ns.tolist(), unit_tier.tolist(), strict=True)
             if ns in allowed]
    return len(tiers), {"HOT": tiers.count(0), "WARM": tiers.count(1)}


def status(state_dir: Path, caller: Caller | None = None) -> dict[str, Any]:
    caller = caller if caller is not None else Caller.owner()
    build = _build(state_dir)
    manifest = build.manifest()
    digest = visible_digest(build, caller)
    units, vectors = _visible_vectors(build, manifest, caller)
    pages = digest["pages"]
    sessions = [p for p in pages if p["kind"] == "session"]
    starts = sorted(p["created"] for p in sessions if p.get("created"))
    # every note the build holds, whatever its kind; temperatures are in [0, 1] (the top bin
    # includes 1.0, the bottom one 0.0)
    notes = list((manifest.get("notes") or {}).values())
    if not caller.is_owner or not all("temperature" in n for n in notes):
        notes = pages  # an agent counts only what it may see (a build before temperatures too)
    temps = [min(1.0, max(0.0, float(n.get("temperature") or 0.0))) for n in notes]
    bins = [(0.9, 1.0), (0.7, 0.9), (0.5, 0.7), (0.3, 0.5), (0.0, 0.3)]
    histogram = [{"range": f"{lo:.1f}-{hi:.1f}",
                  "count": sum(1 for t in temps if lo <= t < hi or (hi == 1.0 and t == 1.0))}
                 for lo, hi in bins]
    # sizes and other agents' recalls are the whole vault's: the owner's alone to see
    sizes = {tier: (build.path(name).stat().st_size if build.path(name).exists() else 0)
             if caller.is_owner else None for tier, name in A.VECTORS.items()}
    tiers = Counter(n.get("tier") for n in notes)
    events = sum(1 for e in read_events(state_dir)
                 if caller.is_owner or (e.get("agent") == caller.agent and "query" in e))
    return {
        "sessions": {"count": len(sessions), "oldest": starts[0] if starts else None,
                     "newest": starts[-1] if starts else None,
                     "turns": sum(p.get("turns", 0) for p in sessions)},
        "graph": {"nodes": len(pages), "by_kind": dict(Counter(p["kind"] for p in pages)),
                  "card_types": dict(Counter(p["type"] or "untyped" for p in pages
                                             if p["kind"] == "card").most_common()),
                  "links": dict(relation_counts(digest).most_common()),
                  "claims": digest["counts"]["claims"]},
        "vectors": {"units": units,
                    "context_vectors": manifest["counts"].get("context_vectors", 0)
                    if caller.is_owner else None,
                    "tiers": {t: tiers.get(t, 0) for t in A.TIERS},
                    "vectors": vectors,
                    "bytes": sizes, "embedder": manifest["embedder"]},
        "temperature": histogram,
        "compile": {"build": build.build_id, "compiled_at": manifest.get("compiled_at"),
                    "timings_ms": manifest.get("timings_ms", {}) if caller.is_owner else {},
                    # an unparseable note's namespace is unknown: only the owner sees them
                    "malformed": manifest.get("malformed", {}) if caller.is_owner else {}},
        "telemetry": {"recall_events": events},
    }


def export(state_dir: Path, vault_root: Path, fmt: str, output: Path,
           caller: Caller | None = None, graph: Any = None) -> dict[str, Any]:
    """`_export` (below); a write the machine refuses is WriteRefusedError naming the output
    (each file is written whole or not at all)."""
    try:
        return _export(state_dir, vault_root, fmt, output, caller, graph)
    except OSError as exc:
        where = exc.filename if exc.filename and not str(exc.filename).startswith(
            str(vault_root)) else output
        raise (refused_write(exc, where) or exc) from exc


def _export(state_dir: Path, vault_root: Path, fmt: str, output: Path,
            caller: Caller | None = None, graph: Any = None) -> dict[str, Any]:
    """GraphML (read back by networkx with the same nodes and edges) or a markdown copy of
    the cards by type with an index — of the notes `caller` may see. Files are copied only
    through the vault's path gate: never a symlink, never a path that leaves the vault.
    `graph`: the graph built in memory, where the build's pickle may not be loaded (no
    machine key; Build.graph raises SealError)."""
    build = _build(state_dir)
    caller = caller if caller is not None else Caller.owner()
    output = Path(output).expanduser()
    if fmt == "graphml":
        import networkx as nx

        graph = build.graph() if graph is None else graph
        if not caller.is_owner:
            graph = graph.subgraph([n for n, d in graph.nodes(data=True)
                                    if caller.may_read(d.get("namespace") or None)]).copy()
        output.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        nx.write_graphml(graph, buffer)
        atomic_write(output, buffer.getvalue(), durable=False)  # whole, or not at all
        return {"format": fmt, "output": str(output), "nodes": graph.number_of_nodes(),
                "edges": graph.number_of_edges()}
    if fmt != "markdown":
        raise ValueError(fmt)
    digest = visible_digest(build, caller)
    output.mkdir(parents=True, exist_ok=True)
    by_type: dict[str, list[dict[str, Any]]] = {}
    copied = 0
    for page in digest["pages"]:
        if page["kind"] != "card":
            continue
        ctype = page["type"] or "untyped"
        by_type.setdefault(ctype, []).append(page)
        src = _inside(vault_root, page["path"])
        dest = output / "cards" / ctype / Path(page["path"]).name
        if src is not None:
            dest.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(dest, src.read_bytes(), durable=False)
            copied += 1
    lines = ["# alaya export", "", f"{copied} cards, build {build.build_id}.", ""]
    for ctype in sorted(by_type):
        lines += [f"## {ctype} ({len(by_type[ctype])})", ""]
        for page in sorted(by_type[ctype], key=lambda p: p["title"].casefold()):
            name = Path(page["path"]).name[:-3]
            claim = page["claims"][0]["text"] if page["claims"] else ""
            lines.append(f"- [[{name}]]" + (f" — {claim}" if claim else ""))
        lines.append("")
    atomic_write(output / "index.md", "\n".join(lines).encode("utf-8"), durable=False)
    atomic_write(output / "export.json", json.dumps({"build": build.build_id,
                                                     "cards": copied}).encode(), durable=False)
    return {"format": fmt, "output": str(output), "cards": copied,
            "types": {t: len(v) for t, v in sorted(by_type.items())}}


def _inside(root: Path, rel: str) -> Path | None:
    """`root/rel` if it is a regular file inside the vault reached without a symlink."""
    root = root.resolve()
    full = root / rel
    probe = root
    for part in Path(rel).parts:
        probe = probe / part
        if probe.is_symlink():
            return None
    try:
        resolved = full.resolve()
    except OSError:
        return None
    if root not in resolved.parents or not resolved.is_file():
        return None
    return full
