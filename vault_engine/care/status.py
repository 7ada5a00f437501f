"""`alaya schema`, `alaya status`, `alaya export`: what the compiled vault holds.

All three read the current build (digest, manifest, graph pickle) — none is on the recall
path, so they may use the heavier artifacts.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from vault_engine import artifacts as A
from vault_engine.errors import NotCompiledError
from vault_engine.store.model import CORE_RELATIONS, SYMMETRIC_RELATIONS
from vault_engine.telemetry import read_events

GENERIC_RELATIONS = {"RELATES_TO"}
PROMOTE_AT = 100  # a custom relation used this often should become a core one (seed 000)


def _build(state_dir: Path) -> A.Build:
    build = A.current_build(state_dir)
    if build is None:
        raise NotCompiledError("the vault has not been compiled yet", fix="run `alaya compile`")
    return build


def relation_counts(digest: dict[str, Any]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for page in digest["pages"]:
        for rel in page["relations"]:
            counts[rel["type"]] += 1
    for rel in SYMMETRIC_RELATIONS:  # listed on both ends in the digest: one edge
        if rel in counts:
            counts[rel] = (counts[rel] + 1) // 2
    return counts


def schema_relations(state_dir: Path) -> dict[str, Any]:
    counts = relation_counts(_build(state_dir).digest())
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


def schema_node_types(state_dir: Path) -> dict[str, Any]:
    digest = _build(state_dir).digest()
    kinds = Counter(p["kind"] for p in digest["pages"])
    card_types = Counter(p["type"] or "untyped" for p in digest["pages"] if p["kind"] == "card")
    entity_types = Counter(p["type"] or "untyped" for p in digest["pages"]
                           if p["kind"] == "entity")
    return {"kinds": dict(sorted(kinds.items())), "card_types": dict(card_types.most_common()),
            "entity_types": dict(entity_types.most_common()),
            "cards": kinds.get("card", 0), "sessions": kinds.get("session", 0)}


def status(state_dir: Path) -> dict[str, Any]:
    build = _build(state_dir)
    manifest = build.manifest()
    digest = build.digest()
    pages = digest["pages"]
    sessions = [p for p in pages if p["kind"] == "session"]
    starts = sorted(p["created"] for p in sessions if p.get("created"))
    # every note the build holds, whatever its kind; temperatures are in [0, 1] (the top bin
    # includes 1.0, the bottom one 0.0)
    notes = list((manifest.get("notes") or {}).values())
    if not all("temperature" in n for n in notes):  # a build from before temperatures
        notes = pages
    temps = [min(1.0, max(0.0, float(n.get("temperature") or 0.0))) for n in notes]
    bins = [(0.9, 1.0), (0.7, 0.9), (0.5, 0.7), (0.3, 0.5), (0.0, 0.3)]
    histogram = [{"range": f"{lo:.1f}-{hi:.1f}",
                  "count": sum(1 for t in temps if lo <= t < hi or (hi == 1.0 and t == 1.0))}
                 for lo, hi in bins]
    sizes = {tier: (build.path(name).stat().st_size if build.path(name).exists() else 0)
             for tier, name in A.VECTORS.items()}
    tiers = Counter(n.get("tier") for n in notes)
    events = sum(1 for _ in read_events(state_dir))
    return {
        "sessions": {"count": len(sessions), "oldest": starts[0] if starts else None,
                     "newest": starts[-1] if starts else None,
                     "turns": sum(p.get("turns", 0) for p in sessions)},
        "graph": {"nodes": len(pages), "by_kind": dict(Counter(p["kind"] for p in pages)),
                  "card_types": dict(Counter(p["type"] or "untyped" for p in pages
                                             if p["kind"] == "card").most_common()),
                  "links": dict(relation_counts(digest).most_common()),
                  "claims": digest["counts"]["claims"]},
        "vectors": {"units": manifest["counts"]["units"],
                    "context_vectors": manifest["counts"].get("context_vectors", 0),
                    "tiers": {t: tiers.get(t, 0) for t in A.TIERS},
                    "vectors": manifest["counts"]["vectors"],
                    "bytes": sizes, "embedder": manifest["embedder"]},
        "temperature": histogram,
        "compile": {"build": build.build_id, "compiled_at": manifest.get("compiled_at"),
                    "timings_ms": manifest.get("timings_ms", {}),
                    "malformed": manifest.get("malformed", {})},
        "telemetry": {"recall_events": events},
    }


def export(state_dir: Path, vault_root: Path, fmt: str, output: Path) -> dict[str, Any]:
    """GraphML (read back by networkx with the same nodes and edges) or a markdown copy of
    the cards by type with an index."""
    build = _build(state_dir)
    output = Path(output).expanduser()
    if fmt == "graphml":
        import networkx as nx

        graph = build.graph()
        output.parent.mkdir(parents=True, exist_ok=True)
        nx.write_graphml(graph, output)
        return {"format": fmt, "output": str(output), "nodes": graph.number_of_nodes(),
                "edges": graph.number_of_edges()}
    if fmt != "markdown":
        raise ValueError(fmt)
    digest = build.digest()
    output.mkdir(parents=True, exist_ok=True)
    by_type: dict[str, list[dict[str, Any]]] = {}
    copied = 0
    for page in digest["pages"]:
        if page["kind"] != "card":
            continue
        ctype = page["type"] or "untyped"
        by_type.setdefault(ctype, []).append(page)
        src = vault_root / page["path"]
        dest = output / "cards" / ctype / Path(page["path"]).name
        if src.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            copied += 1
    lines = ["# alaya export", "", f"{copied} cards, build {build.build_id}.", ""]
    for ctype in sorted(by_type):
        lines += [f"## {ctype} ({len(by_type[ctype])})", ""]
        for page in sorted(by_type[ctype], key=lambda p: p["title"].casefold()):
            name = Path(page["path"]).name[:-3]
            claim = page["claims"][0]["text"] if page["claims"] else ""
            lines.append(f"- [[{name}]]" + (f" — {claim}" if claim else ""))
        lines.append("")
    (output / "index.md").write_text("\n".join(lines), encoding="utf-8")
    (output / "export.json").write_text(json.dumps({"build": build.build_id,
                                                    "cards": copied}), encoding="utf-8")
    return {"format": fmt, "output": str(output), "cards": copied,
            "types": {t: len(v) for t, v in sorted(by_type.items())}}
