"""Changes alaya wants to make to a person's note, proposed instead of made.

Maintenance (introspect, forget, feedback) never rewrites a person's note
(`vault_engine.store.authorship`): what it would have done becomes a `Proposal`, listed in the
report and put in the review queue — the proposal branch a person approves or rejects with
`alaya review` (`vault_engine.collab.review.queue`). `apply_proposals` makes them on a vault
(the proposal branch's worktree), skipping what is already there, so proposing the same thing
twice changes nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .vault import Transaction, Vault


@dataclass(frozen=True)
class Proposal:
    """One change to one person's note.

    `action`: `add-relation` (append `item` to the note's `relations:`), `claim-status` (set
    claim `item["claim"]`'s `status`, and the item's other keys), `archive` (move it to
    archive/ with `reason`), `merge` (archive it with `merged_into` pointing at `into`), or
    `report` (said in the report only; nothing to apply).
    """

    path: str
    action: str
    summary: str  # one markdown line for the report
    item: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""
    into: str | None = None

    def line(self) -> str:
        return f"- proposed (a person's note, not changed): {self.summary}"


def _same_relation(a: Any, b: Mapping[str, Any]) -> bool:
    if not isinstance(a, Mapping):
        return False
    return (str(a.get("type", "")).upper() == str(b.get("type", "")).upper()
            and str(a.get("target", "")).split("|")[0].strip("[]").casefold()
            == str(b.get("target", "")).split("|")[0].strip("[]").casefold())


def apply_proposals(vault: Vault, proposals: Sequence[Proposal], message: str,
                    when: dt.datetime) -> str | None:
    """Make `proposals` on `vault` in one commit; returns its sha (None: nothing new)."""
    from .archive import archive_note
    from .frontmatter import FlowMap, NoteText

    with vault.locked():
        index = vault.load()
        todo = []
        for p in proposals:
            note = index.by_path(p.path)
            if note is None or p.action == "report":
                continue  # not on this branch (untracked there), already archived, or
                # nothing to apply
            if p.action == "add-relation":
                raw = note.meta.get("relations")
                if any(_same_relation(r, p.item) for r in (raw if isinstance(raw, list) else [])):
                    continue
            todo.append((p, note))
        if not todo:
            return None
        with vault.transaction(message) as tx:
            for p, note in todo:
                if p.action == "add-relation":
                    item = FlowMap(p.item)

                    def edit(doc: NoteText, item: Any = item) -> None:
                        doc.ensure_frontmatter()
                        doc.frontmatter.append_item("relations", item)

                    tx.update(p.path, edit)
                elif p.action == "claim-status":
                    tx.update(p.path, _claim_edit(dict(p.item)))
                elif p.action in ("archive", "merge"):
                    into = index.by_path(p.into) if p.into else None
                    archive_note(tx, vault, note, p.reason, when, merged_into=into,
                                 resolver=index.resolver)
        return _sha(tx)


def _claim_edit(item: dict[str, Any]) -> Any:
    from .frontmatter import NoteText, flow_claims

    claim_id = str(item.pop("claim"))

    def edit(doc: NoteText) -> None:
        claims = [dict(c) for c in doc.frontmatter.data.get("claims") or [] if isinstance(c, dict)]
        for c in claims:
            if str(c.get("id")) == claim_id:
                c.update(item)
        doc.frontmatter.set("claims", flow_claims(claims))

    return edit


def _sha(tx: Transaction) -> str | None:
    return tx.sha
