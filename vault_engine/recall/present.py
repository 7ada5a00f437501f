"""Recall stage 6, presentation: the documented JSON nodes (docs/schemas/recall.schema.json),
the relations left to explore, and the prompt block of one memory per line (seed 004)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from vault_engine.primitives import fit_lines
from vault_engine.store.relations import query_relations, relation_similarity

from .fusion import Hit
from .index import RecallIndex

_CHUNK_RE = re.compile(r"\s+")


_DATE_PREFIX_RE = re.compile(r"^\[[^\]]*\]\s*")


def node_json(index: RecallIndex, hit: Hit) -> dict[str, Any]:
    unit = hit.units[0][0] if hit.units else int(index.node_unit[hit.node])
    row = index.row(unit) if unit >= 0 else {}
    kind = index.node_kind(hit.node)
    key = index.node_key(hit.node)
    out: dict[str, Any] = {
        "id": key, "title": row.get("title", key),
        "kind": kind, "type": row.get("type"), "path": row.get("path"),
        "score": round(hit.score, 4), "h_distance": round(hit.h, 4),
        "matched_rel": hit.matched_rel, "rel_similarity": hit.rel_similarity,
        "depth": hit.depth, "via": index.node_key(hit.via) if hit.via is not None else None,
        "tier": row.get("tier"), "namespace": row.get("namespace"),
        "source_sessions": row.get("source_sessions") or [],
        "snippet": row.get("snippet", ""),
        # seed 003 §3.3: corrected often (decays twice as fast), or depends on a correction
        "volatile": bool(row.get("volatile")), "stale": bool(row.get("stale")),
    }
    if row.get("stale"):
        out["stale_reason"] = str(row["stale"])
    if kind == "entity":  # an entity page: the facts the question matched, with their turns
        facts = [index.row(u) for u, score in hit.units if u >= 0 and score > 0]
        out["facts"] = [{"text": r.get("snippet", ""), "source": f"[[{r['cites']}]]"}
                        for r in facts if r.get("cites")]
    if kind == "session":
        anchors = [index.row(u).get("anchor") for u, _ in hit.units if u >= 0]
        out["session_id"] = key
        out["anchors"] = [a for a in anchors if a]
        out["turns"] = [{"anchor": index.row(u).get("anchor"),
                         "text": index.row(u).get("snippet", ""),
                         "before": _turn_before(index, u)} for u, _ in hit.units if u >= 0]
    return out


def _turn_before(index: RecallIndex, unit: int) -> str | None:
    """The turn before a session turn (the question an answer answers), or None for the
    first: an answer shown alone ("Three years now.") often says nothing of its subject."""
    prev = unit - 1
    if prev < 0 or int(index.unit_node[prev]) != int(index.unit_node[unit]):
        return None
    return str(index.row(prev).get("snippet", "")) or None


def explorable_relations(index: RecallIndex, hits: Sequence[Hit], wanted: Sequence[str], text: str,
                shown: set[int], namespaces: set[str] | None = None) -> list[dict[str, Any]]:
    counts: dict[str, set[int]] = {}
    for h in hits:
        for target, rel, _w in index.neighbours(h.node, "out"):
            if target not in shown and index.visible(target, namespaces):
                counts.setdefault(rel, set()).add(target)
    cues = list(wanted) or query_relations(text)
    rows: list[tuple[float, int, str]] = []
    for rel, targets in counts.items():
        sim = max((relation_similarity(rel, c) for c in cues), default=0.3)
        rows.append((round(sim, 2), len(targets), rel))
    rows.sort(key=lambda r: (-r[0], -r[1], r[2]))
    return [{"rel": rel, "count": count, "rel_sim_to_query": sim} for sim, count, rel in rows]


def prompt_block(result: Mapping[str, Any], *, max_chars: int = 4000) -> str:
    """Memory formatted for an agent's context (seed 004): one line per memory."""
    lines = []
    for n in result["nodes"]:
        kind = n.get("type") or n["kind"]
        label = f"[{kind}]" if n["kind"] != "session" else "[episodic]"
        text = _CHUNK_RE.sub(" ", n.get("snippet") or n["title"]).strip()
        ref = f"[[{n['id']}#^{n['anchors'][0]}]]" if n.get("anchors") else f"[[{n['id']}]]"
        if n["kind"] == "session":
            before = (n.get("turns") or [{}])[0].get("before")
            if before:  # the question before the answer, without its date
                text = _DATE_PREFIX_RE.sub("", _CHUNK_RE.sub(" ", before)).strip() + " → " + text
            line = f"- {label} {text} ({ref})"
        else:
            line = f"- {label} {n['title']}"
            line += f" — {text} ({ref})" if text and text != n["title"] else f" ({ref})"
        lines.append(line + caution(n))
    return "\n".join(fit_lines(lines, max_chars)[0])


def caution(node: Mapping[str, Any]) -> str:
    """What a reader must know before trusting a memory: it may be outdated (something it
    depends on was corrected) or it changes often (corrected three times or more)."""
    notes = (["may be outdated"] if node.get("stale") else []) + (
        ["changes often"] if node.get("volatile") else [])
    return f" ⚠ {', '.join(notes)}" if notes else ""


def flag_warnings(nodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """One warning per shown memory that is stale or volatile, naming it and why."""
    out = []
    for n in nodes:
        if n.get("stale"):
            why = n.get("stale_reason") or "it depends on something that changed"
            out.append(f"{n['id']} may be outdated: {why}")
        if n.get("volatile"):
            out.append(f"{n['id']} changes often (corrected three or more times): check it "
                       "before relying on it")
    return out
