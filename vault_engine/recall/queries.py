"""Saved recalls and traversals: a note in `queries/` with wikilinks, one commit — so a person
sees in Obsidian (backlinks, graph) what the agent looked up and what it found."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vault_engine.store.cards import now_utc
from vault_engine.store.frontmatter import new_note_text
from vault_engine.store.ids import new_id, safe_filename
from vault_engine.store.links import format_link
from vault_engine.store.namespaces import home_folder
from vault_engine.store.vault import Vault, VaultIndex


def save_query(vault: Vault, *, kind: str, title: str, query: Mapping[str, Any],
               lines: Sequence[str], commit: bool = True) -> tuple[str, str | None]:
    """Write the note; return (vault-relative path, commit sha)."""
    when = now_utc()
    with vault.locked():
        index = vault.load()
        qid = new_id("query", index.ids())
        name = safe_filename(f"{when.date().isoformat()} {kind} {title}")[:120]
        folder = home_folder("queries", vault.caller.agent)
        rel = f"{folder}/{name}.md"
        if (vault.root / rel).exists():
            rel = f"{folder}/{name} ({qid}).md"
        meta = {"id": qid, "title": f"{kind}: {title}", "type": kind, "created": when,
                "query": {k: v for k, v in query.items() if v not in (None, [], "", ())},
                # an agent's saved query shows what it may read: its own, never shared
                "namespace": vault.caller.agent}
        body = f"# {kind}: {title}\n\n" + "\n".join(lines) + "\n"
        with vault.transaction(f"{kind}: save \"{title}\" → {len(lines)} result(s)",
                               commit=commit) as tx:
            tx.create(rel, new_note_text(meta, body))
    return rel, tx.sha


def node_link(index: VaultIndex | None, key: str, title: str, anchor: str | None = None) -> str:
    """A wikilink Obsidian opens for the node `key` (an id or `path:…`): the note's file name
    (or shortest unambiguous path) with its title as display text."""
    if index is not None and index.by_key(key) is not None:
        return index.link(key, anchor=anchor)
    target = key[5:].rsplit("/", 1)[-1].removesuffix(".md") if key.startswith("path:") else key
    return format_link(target, display=title, anchor=anchor)


def recall_lines(result: Mapping[str, Any], index: VaultIndex | None = None) -> list[str]:
    out = []
    for i, n in enumerate(result["nodes"], 1):
        anchor = f"^{n['anchors'][0]}" if n.get("anchors") else None
        link = node_link(index, n["id"], n["title"], anchor)
        via = n.get("via")
        how = (f", via {n['matched_rel']} from {node_link(index, via, via)}"
               if n.get("matched_rel") and via else "")
        out.append(f"{i}. {link} (score {n['score']}, h {n['h_distance']}{how})")
    return out


def path_lines(result: Mapping[str, Any], index: VaultIndex | None = None) -> list[str]:
    out = []
    for i, path in enumerate(result["paths"], 1):
        first = path["steps"][0]
        hops = [node_link(index, first["source"], first["source_title"])]
        for s in path["steps"]:
            arrow = f"←{s['rel']}—" if s["reverse"] else f"—{s['rel']}→"
            hops.append(f"{arrow} {node_link(index, s['target'], s['target_title'])}")
        out.append(f"{i}. (score {path['score']}) " + " ".join(hops))
    return out
