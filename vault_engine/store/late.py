"""Saves that land in a file while alaya replaces it (docs/architecture.md, "The write
gateway"): found in the replaced file — right after the replace, and again once the change is
committed, for an editor that opened the file just before and wrote just after — and merged
back into what is on disk: the frontmatter field by field (store/merge.py, as `alaya sync`
does), the text line by line, keeping both sides where both changed the same lines. Nothing
of either side is dropped. It is all in-process and quick: against an editor that saves
every few milliseconds, a slow merge would never land."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from vault_engine.primitives import checksum

from .atomic import LateSave, Moved, _split, atomic_write, read_settled

Vault = Any  # store/vault.py's Vault, typed loosely: vault.py calls this module

def merge_lines(base: str, ours: str, theirs: str) -> str:
    """A three-way merge of text by lines; where both sides changed the same lines, ours
    then theirs (a union, as `git merge-file --union`: nothing dropped)."""
    a, b, c = base.splitlines(True), ours.splitlines(True), theirs.splitlines(True)
    hunks = []
    for side, other in ((0, b), (1, c)):
        ops = difflib.SequenceMatcher(None, a, other, autojunk=False).get_opcodes()
        hunks += [(i1, i2, other[j1:j2], side) for tag, i1, i2, j1, j2 in ops if tag != "equal"]
    hunks.sort(key=lambda h: (h[0], h[1], h[3]))
    out: list[str] = []
    pos = k = 0
    while k < len(hunks):
        start, end = hunks[k][0], hunks[k][1]
        group = [hunks[k]]
        k += 1
        while k < len(hunks) and (hunks[k][0] < end or hunks[k][0] == start):
            end = max(end, hunks[k][1])
            group.append(hunks[k])
            k += 1
        out += a[pos:start]
        segments = []
        for side in (0, 1):
            mine = [h for h in group if h[3] == side]
            if not mine:
                continue
            seg, at = [], start
            for i1, i2, lines, _ in mine:
                seg += a[at:i1] + lines
                at = i2
            segments.append(seg + a[at:end])
        out += segments[0] if len(segments) == 1 or segments[0] == segments[1] else \
            segments[0] + segments[1]
        pos = end
    return "".join(out + a[pos:])


def merge_versions(base: bytes, ours: bytes, theirs: bytes, rel: str) -> bytes:
    """Two versions of a note from one base: frontmatter field by field, text by lines."""
    from .merge import merge_text

    regions = [_split(x) for x in (base, ours, theirs)]
    head = [r[0].decode("utf-8", "replace") for r in regions]
    for side in (1, 2):  # a frontmatter gone whole is a save caught half-way, not a choice
        if head[0] and not head[side]:
            head[side] = head[0]
    body = [r[1].decode("utf-8", "replace") for r in regions]
    if head[2] == head[0]:
        merged_head = head[1]
    elif head[1] == head[0]:
        merged_head = head[2]
    else:  # both changed the frontmatter: by field (bodies empty: no text merge to run)
        merged_head = merge_text(head[0], head[1], head[2], rel)
    if body[2] == body[0]:
        merged_body = body[1]
    elif body[1] == body[0]:
        merged_body = body[2]
    else:
        merged_body = merge_lines(body[0], body[1], body[2])
    return (merged_head + merged_body).encode("utf-8")


def merge_late_save(rel: str, full: Path, base: bytes, saved: bytes) -> str | None:
    """Merge `saved` (a version made from `base`) into the file as it is now; returns the new
    checksum, or None when the file kept changing for 200 tries."""
    pending = [(base, saved)]
    for _ in range(200):
        if not pending:
            return checksum(full.read_bytes())
        base, saved = pending[0]
        current = read_settled(full)
        merged = merge_versions(base, current, saved, rel)
        try:
            atomic_write(full, merged, expected=checksum(current), sync_after=True)
        except Moved:
            continue
        except LateSave as again:  # yet another save, into the version just merged
            pending.append((again.base, again.saved))
        pending.pop(0)
    return None if pending else checksum(full.read_bytes())


def reap(vault: Vault) -> list[str]:
    """Read every file this vault replaced (and still holds open) once more; merge back what
    someone saved into one meanwhile. Returns the paths that changed. Caller holds the lock."""
    changed: list[str] = []
    held, vault._replaced = vault._replaced, []
    for rel, replaced in held:
        saved = replaced.late_save()
        if saved is not None and merge_late_save(rel, replaced.full, replaced.before,
                                                 saved) is not None:
            changed.append(rel)
    return sorted(set(changed))
