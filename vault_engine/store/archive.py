"""Archiving and restoring a note: archive/ holds tombstones (the note as it was, plus why, when
and from where it was archived, and `merged_into` for a merge); `restore` reverses one."""

from __future__ import annotations

import datetime as dt

from .frontmatter import NoteText
from .links import LinkResolver, link_to
from .model import Note
from .vault import Transaction, Vault


def _archive_path(vault: Vault, note: Note) -> str:
    base = f"archive/{note.stem}"
    rel, n = f"{base}.md", 2
    while (vault.root / rel).exists():
        rel, n = f"{base}-{n}.md", n + 1
    return rel


def archive_note(tx: Transaction, vault: Vault, note: Note, reason: str, when: dt.datetime,
                 merged_into: Note | None = None, resolver: LinkResolver | None = None) -> str:
    """Move a note to archive/ with why and when (a Tombstone; `restore` reverses it)."""
    doc = NoteText.parse(vault.read_text(note.path)[0], note.path)
    doc.ensure_frontmatter()
    doc.frontmatter.set("archived", when.replace(microsecond=0))
    doc.frontmatter.set("archived_reason", reason)
    doc.frontmatter.set("archived_from", note.path)
    if merged_into is not None:
        resolver = resolver if resolver is not None else vault.load().resolver
        doc.frontmatter.set("merged_into", link_to(merged_into, resolver))
    rel = _archive_path(vault, note)
    tx.create(rel, doc.render())
    tx.delete(note.path, vault.current_checksum(note.path))
    return rel


def restore(vault: Vault, ref: str, *, commit: bool = True) -> tuple[str, str | None]:
    """Bring an archived note back where it was (or into cards/)."""
    from vault_engine.errors import NotFoundError, UsageError

    from .namespaces import find_writable

    with vault.locked():
        index = vault.load()
        note = find_writable(index, ref, vault.caller)
        if note.kind != "archive":
            raise UsageError(f"{note.path} is not archived", fix="pass an archived note's id")
        doc = NoteText.parse(vault.read_text(note.path)[0], note.path)
        origin = str(doc.frontmatter.data.get("archived_from") or f"cards/{note.stem}.md")
        if (vault.root / origin).exists():
            raise NotFoundError(f"{origin} exists again; restore would overwrite it",
                                fix="rename or move that note first")
        for key in ("archived", "archived_reason", "archived_from", "merged_into"):
            doc.frontmatter.delete(key)
        with vault.transaction(f"restore: {note.title} → {origin}", commit=commit) as tx:
            tx.create(origin, doc.render())
            tx.delete(note.path, vault.current_checksum(note.path))
    return origin, tx.sha
