"""A Transaction: one logical change — the vault lock held, what it writes recorded and
journaled, one commit at the end, every file put back if the command fails half-way
(docs/architecture.md, "The write gateway")."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import history
from .atomic import MISSING, atomic_write

if TYPE_CHECKING:
    from .frontmatter import NoteText

Vault = Any  # store/vault.py's Vault, typed loosely: vault.py re-exports this class


class Transaction:
    """One logical change: holds the vault lock, records what it writes, commits once.

    ```
    with vault.transaction("link: A DEPENDS_ON B") as tx:
        tx.update(path, edit)
    tx.sha  # the commit, or None (nothing changed / --no-commit)
    ```
    On an exception every file written in the transaction is put back as it was.
    """

    def __init__(self, vault: Vault, message: str, *, commit: bool = True) -> None:
        self.vault = vault
        self.message = message
        self.commit = commit
        self.written: list[str] = []
        self.sha: str | None = None
        self.uncommitted: list[str] = []  # written, but not separable from a person's edits
        self._backup: dict[str, bytes | None] = {}
        self._ours: dict[str, str] = {}  # path → checksum of what this change last wrote
        self._stack = contextlib.ExitStack()
        from .journal import Journal

        # what this change has written, on disk until it commits (store/journal.py)
        self._journal = Journal(vault.state_dir, message, vault.caller.agent) if commit else None

    def __enter__(self) -> Transaction:
        self._stack.enter_context(self.vault.locked())
        if self.commit:
            from .journal import recover

            recover(self.vault)  # an earlier command killed before its commit: commit it now
        return self

    def _remember(self, rel: str) -> None:
        if rel not in self._backup:
            full = self.vault.abspath(rel)
            self._backup[rel] = full.read_bytes() if full.exists() else None
        if rel not in self.written:
            if self._journal is not None:
                self._journal.add(rel)
            self.written.append(rel)

    def changed(self) -> list[str]:
        """The paths written so far whose bytes differ from before the transaction."""
        out = []
        for rel in self.written:
            full = self.vault.abspath(rel)
            now = full.read_bytes() if full.exists() else None
            if now != self._backup.get(rel):
                out.append(rel)
        return sorted(out)

    def create(self, rel: str, text: str) -> str:
        self._remember(rel)
        self._ours[rel] = self.vault.write_text(rel, text, MISSING)
        return self._ours[rel]

    def write(self, rel: str, text: str, expected: str | None) -> str:
        self._remember(rel)
        self._ours[rel] = self.vault.write_text(rel, text, expected)
        return self._ours[rel]

    def write_raw(self, rel: str, data: bytes) -> None:
        """Write a non-note file the tool owns (a session's raw input), atomically."""
        self._remember(rel)
        with self.vault.locked():
            atomic_write(self.vault.abspath(rel), data)

    def update(self, rel: str, edit: Callable[[NoteText], None]) -> str:
        self._remember(rel)
        self._ours[rel] = self.vault.update_note(rel, edit)
        return self._ours[rel]

    def delete(self, rel: str, expected: str | None) -> None:
        self._remember(rel)
        self.vault.delete(rel, expected)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is not None:
                self._rollback()
                if self._journal is not None:
                    self._journal.close()
                return
            if self.commit and self.written:
                # a failed commit keeps the journal: the next command commits these files
                self.sha = self._commit(self.written, self.message)
            from .late import reap

            # a save that landed while we wrote: merged back into the file, and left the
            # person's to commit (alaya's change is in the commit above)
            reap(self.vault)
            if self._journal is not None:
                self._journal.close()
        finally:
            self._stack.close()

    def _commit(self, paths: list[str], message: str) -> str | None:
        """Commit, retrying: git reading a file while an editor rewrites it in place fails
        ("short read while indexing"); a moment later it reads the whole file."""
        import time

        from vault_engine.errors import GitError

        for attempt in range(5):
            self.uncommitted.clear()
            try:
                return history.commit_paths(self.vault.root, paths, message,
                                            self.vault.config.git_identity(),
                                            before=self._backup, skipped=self.uncommitted,
                                            agent=self.vault.caller.agent)
            except GitError:
                if attempt == 4:
                    raise
                time.sleep(0.05 * 2 ** attempt)  # 0.05 … 0.8 s
        return None

    def _rollback(self) -> None:
        from vault_engine.primitives import checksum

        for rel, data in self._backup.items():
            full = self.vault.abspath(rel)
            if rel in self._ours and full.exists() and \
                    checksum(full.read_bytes()) != self._ours[rel]:
                continue  # someone saved over this change's write: theirs stays, never undone
            if data is None:
                full.unlink(missing_ok=True)
            else:
                atomic_write(full, data)
