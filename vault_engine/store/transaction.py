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

    What it writes and its commit message pass the redactor (`redact=False` only for
    `ingest --no-redact`): see `Vault.write_text`.
    """

    def __init__(self, vault: Vault, message: str, *, commit: bool = True,
                 redact: bool = True) -> None:
        from vault_engine.redaction import redact as mask_text

        self.vault = vault
        self.redact = redact
        message = mask_text(message) if redact else message
        self.message = message
        self.commit = commit
        self.written: list[str] = []
        self.sha: str | None = None
        self.uncommitted: list[str] = []  # written, but not separable from a person's edits
        self._backup: dict[str, bytes | None] = {}
        self._ours: dict[str, str] = {}  # path → checksum of what this change last wrote
        self._stack = contextlib.ExitStack()
        from .journal import Journal, Reserve

        # what this change has written, on disk until it commits (store/journal.py)
        self._journal = Journal(vault.state_dir, message, vault.caller.agent) if commit else None
        # the space putting the files back would need, held until the change is done
        self._reserve = Reserve(vault.state_dir)

    def __enter__(self) -> Transaction:
        self._stack.enter_context(self.vault.locked())
        if self.commit:
            from .journal import recover

            recover(self.vault)  # an earlier command killed before its commit: commit it now
        return self

    def _remember(self, rel: str) -> None:
        if rel not in self._backup:
            full = self.vault.abspath(rel)
            before = full.read_bytes() if full.exists() else None
            if before is not None:
                self._reserve.grow(len(before))  # no room to undo it: refused before writing
            self._backup[rel] = before
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
        self._ours[rel] = self.vault.write_text(rel, text, MISSING, redact=self.redact)
        return self._ours[rel]

    def write(self, rel: str, text: str, expected: str | None) -> str:
        self._remember(rel)
        self._ours[rel] = self.vault.write_text(rel, text, expected, redact=self.redact)
        return self._ours[rel]

    def write_raw(self, rel: str, data: bytes) -> None:
        """Write a non-note file the tool owns (a session's raw input), atomically — its
        secrets masked in its own format (what ingest already redacted is not scanned again)."""
        if self.redact:
            from vault_engine.redaction_input import redact_input, scrubbed

            if not scrubbed(data):
                data = redact_input(data)
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
        from vault_engine.errors import WriteRefusedError

        try:
            if exc_type is not None:
                self._undo()
                return
            if self.commit and self.written:
                # a failed commit keeps the journal: the next command commits these files —
                # except when the machine refused it (a full disk): then nothing is committed
                # and the change is put back, so the vault is as it was before the command
                try:
                    self.sha = self._commit(self.written, self.message)
                except WriteRefusedError:
                    self._undo()
                    raise
            self._reserve.release()
            from .late import reap

            # a save that landed while we wrote: merged back into the file, and left the
            # person's to commit (alaya's change is in the commit above)
            reap(self.vault)
            if self._journal is not None:
                self._journal.close()
        finally:
            self._reserve.release()
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

    def _undo(self) -> None:
        """Put every file back; the journal goes once nothing of this change is left. A file
        the machine would not let us put back (no space for its temp file) keeps this change's
        whole text, and the journal stays: the next command commits it (store/journal.py)."""
        from vault_engine.errors import WriteRefusedError

        left = self._rollback()
        if self._journal is not None and not left:
            self._journal.close()
        if left:
            raise WriteRefusedError(
                f"the machine refused a write, and {len(left)} file(s) of the change could not "
                "be put back: " + ", ".join(left), path=str(self.vault.root),
                fix="free space on the vault's disk; the next alaya write commits them as "
                    "'recovered' (or run `alaya doctor --fix`)" if self._journal is not None
                else "free space on the vault's disk; they hold this change, uncommitted "
                     "(--no-commit): `git diff` shows it")

    def _rollback(self) -> list[str]:
        """Put each file back as it was; returns those that could not be. New files are
        removed first: that frees the space the others need."""
        from vault_engine.errors import WriteRefusedError
        from vault_engine.primitives import checksum

        left = []
        restore = sorted(self._backup.items(), key=lambda kv: kv[1] is not None)
        released = False
        for rel, data in restore:
            if data is not None and not released:
                self._reserve.release()  # new files are gone: now the space held back
                released = True
            full = self.vault.abspath(rel)
            if rel in self._ours and full.exists() and \
                    checksum(full.read_bytes()) != self._ours[rel]:
                continue  # someone saved over this change's write: theirs stays, never undone
            try:
                if data is None:
                    full.unlink(missing_ok=True)
                elif not full.exists() or full.read_bytes() != data:
                    atomic_write(full, data)
            except (OSError, WriteRefusedError):
                left.append(rel)
        return left
