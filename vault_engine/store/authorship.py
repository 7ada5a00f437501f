"""Whose is a note? The one question maintenance asks before it touches a file.

A note is **a person's** when alaya did not write it, or when a person has edited it since.
The git history says which: a commit is alaya's when its author is alaya's identity
(`[git] author`, see `Config.git_identity`) or it carries the `Alaya-Command:` trailer; any
other commit that touched the file is a person's. A file with uncommitted changes, or one git
does not track at all, is a person's too (alaya commits everything it writes, unless told not
to). Without a git repository nothing is known, and every note counts as a person's except
the ones alaya's distiller made (`source_sessions` in the frontmatter) and session notes.
Notes `alaya import` copied in are a person's: alaya committed the copy, a person wrote it.

Introspect, forget and feedback ask this before they archive a note or rewrite its body: a
person's note gets a proposal (report, review queue), never an edit of their text.

    from vault_engine.store.authorship import Authorship, is_persons_note
    is_persons_note(vault, "cards/fact/Redis.md")      # one question
    owners = Authorship.load(vault)                    # many: one `git log` pass
    owners.is_persons("Notes/Plan.md")
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .history import COMMAND_TRAILER, COPY_COMMANDS, is_repo

if TYPE_CHECKING:
    from .model import Note
    from .vault import Vault

_FORMAT = f"%x1e%an%x1f%ae%x1f%(trailers:key={COMMAND_TRAILER},valueonly,separator=%x2C)%x1f"


@dataclass(frozen=True)
class Authorship:
    """Who wrote which path, read once from the history and the working tree."""

    tracked: bool  # False: no git repository (nothing known)
    alaya: frozenset[str] = frozenset()  # paths touched only by alaya's commits
    person: frozenset[str] = frozenset()  # paths a person's commit touched
    dirty: frozenset[str] = frozenset()  # uncommitted changes or untracked
    distilled: frozenset[str] = field(default_factory=frozenset)  # no-git fallback

    @classmethod
    def load(cls, vault: Vault, notes: Iterable[Note] = ()) -> Authorship:
        """Read the vault's history (one `git log`, one `git status`)."""
        distilled = frozenset(n.path for n in notes
                              if n.meta.get("source_sessions") or n.kind == "session")
        root = vault.root
        if not is_repo(root):
            return cls(tracked=False, distilled=distilled)
        name, email = vault.config.git_identity()
        alaya: set[str] = set()
        person: set[str] = set()
        log = _git(root, "log", "-z", "--name-only", "--no-renames", f"--format={_FORMAT}")
        for chunk in log.split("\x1e"):
            parts = chunk.split("\x1f")
            if len(parts) < 4:
                continue
            an, ae, trailer, rest = parts[0], parts[1], parts[2], parts[3]
            # `alaya import` (and sync's placing of a note apart) copies a person's
            # notes: their text, whoever committed the copy
            command = trailer.strip()
            mine = ((an == name and ae == email) or bool(command)) and command not in COPY_COMMANDS
            for path in rest.split("\x00"):
                path = path.strip("\n")
                if path:
                    (alaya if mine else person).add(path)
        status = _git(root, "status", "-z", "--porcelain", "--untracked-files=all",
                      "--no-renames")
        dirty = {entry[3:] for entry in status.split("\x00") if len(entry) > 3}
        return cls(tracked=True, alaya=frozenset(alaya - person), person=frozenset(person),
                   dirty=frozenset(dirty), distilled=distilled)

    def is_persons(self, rel: str) -> bool:
        """True when `rel` is a person's note: see the module docstring."""
        if not self.tracked:
            return rel not in self.distilled
        if rel in self.dirty or rel in self.person:
            return True
        return rel not in self.alaya


def is_persons_note(vault: Vault, rel: str) -> bool:
    """Is the note at vault-relative `rel` a person's? (alaya did not write it, or a person
    edited it since, per git history and alaya's commit author.) For many notes, load an
    `Authorship` once instead."""
    note = None
    if not is_repo(vault.root):
        try:
            note = vault.read_note(rel)
        except Exception:  # unreadable: certainly not something alaya may rewrite
            return True
    return Authorship.load(vault, [note] if note is not None else []).is_persons(rel)


def _git(root: object, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "core.quotepath=false", *args], cwd=str(root),
                          capture_output=True)
    if proc.returncode != 0:
        return ""  # a repository with no commits yet: nothing in the history
    return proc.stdout.decode("utf-8", errors="surrogateescape")
