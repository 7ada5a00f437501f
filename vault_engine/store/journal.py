"""The write journal: what a command had written when it was killed before its commit.

A `Transaction` appends each path it is about to write to `.alaya/journal/<pid>-<id>.jsonl`
(the first line holds its commit message) and removes the file once it has committed or put
everything back. A journal left behind names files that are written (every write is atomic)
but not committed — a `kill -9`, a power cut, a full disk at the commit. The next command
that writes (or ingests) commits them first, as their own commit, with the original message
and a line saying they were recovered; `alaya doctor` names the state and `doctor --fix`
does the same.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Vault = Any  # store/vault.py's Vault, typed loosely: vault.py calls this module

JOURNAL_DIR = "journal"
RECOVERED = "recovered: the command that wrote these files was interrupted before its commit"


@dataclass
class Interrupted:
    file: Path
    message: str
    paths: list[str] = field(default_factory=list)
    agent: str = ""  # the caller of the interrupted change ("" the owner)


class Journal:
    """One transaction's journal (created on its first write)."""

    def __init__(self, state_dir: Path, message: str, agent: str | None = None) -> None:
        self.folder = state_dir / JOURNAL_DIR
        self.message = message
        self.agent = agent
        self.path: Path | None = None
        self._fd: int | None = None

    def add(self, rel: str) -> None:
        """Journal `rel` before it is written. A journal the machine refuses to write (no
        space, read-only, no permission) is WriteRefusedError — and then nothing is written."""
        from vault_engine.errors import refused_write

        try:
            if self._fd is None:
                self.folder.mkdir(parents=True, exist_ok=True)
                self.path = self.folder / f"{os.getpid()}-{secrets.token_hex(4)}.jsonl"
                self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                self._write({"message": self.message, "agent": self.agent or ""})
            self._write({"path": rel})
        except OSError as exc:
            raise (refused_write(exc, self.folder) or exc) from exc

    def _write(self, obj: dict[str, str]) -> None:
        assert self._fd is not None
        line = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
        if os.write(self._fd, line) != len(line):  # a line cut short: the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))

    def close(self) -> None:
        """The transaction committed or rolled back: nothing is left to recover."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None


class Reserve:
    """Disk space held back while a change is written, so that putting it back never needs
    space the disk no longer has: for each file the change replaces, its size (rounded up to
    whole pages, plus one) is allocated in `.alaya/journal/<pid>-<id>.reserve` before the
    file is written — a disk too full for that refuses the change before anything is written
    — and released just before the files are put back (or once the change is committed).
    A file system that cannot allocate ahead (no fallocate) simply gets no reserve."""

    PAGE = 4096

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / JOURNAL_DIR
        self.path: Path | None = None
        self._fd: int | None = None
        self._size = 0
        self._off = False

    def grow(self, nbytes: int) -> None:
        """Hold `nbytes` more (WriteRefusedError when the disk has no room for them)."""
        from vault_engine.errors import refused_write

        if self._off:
            return
        want = self._size + (-(-nbytes // self.PAGE) + 1) * self.PAGE
        try:
            if self._fd is None:
                self.folder.mkdir(parents=True, exist_ok=True)
                self.path = self.folder / f"{os.getpid()}-{secrets.token_hex(4)}.reserve"
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            os.posix_fallocate(self._fd, 0, want)
        except OSError as exc:
            refused = refused_write(exc, self.folder)
            if refused is None or exc.errno not in _NO_ROOM:
                self._off = True  # cannot allocate ahead here: no reserve, as before
                self.release()
                if refused is not None:
                    raise refused from exc
                return
            raise refused from exc
        self._size = want

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.path is not None:
            try:
                self.path.unlink(missing_ok=True)
            except OSError:
                pass  # a read-only disk by now: `doctor --fix` or the next change removes it
            self.path = None
        self._size = 0


_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT})


def remove_dead_reserves(state_dir: Path) -> None:
    """Reserves left by killed commands (under the vault lock, only a dead one's can be
    there — or this process's own, which stay)."""
    folder = state_dir / JOURNAL_DIR
    if not folder.is_dir():
        return
    for file in folder.glob("*.reserve"):
        pid = file.name.split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                file.unlink(missing_ok=True)
            except OSError:
                pass


def interrupted(state_dir: Path) -> list[Interrupted]:
    """Journals left by commands that did not finish (only meaningful under the vault lock:
    a live transaction holds it, so any journal seen then is a dead one's)."""
    folder = state_dir / JOURNAL_DIR
    if not folder.is_dir():
        return []
    out = []
    for file in sorted(folder.glob("*.jsonl")):
        message, paths, agent = "", [], ""
        try:
            for line in file.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a line cut by the crash
                if "message" in row:
                    message = str(row["message"])
                    agent = str(row.get("agent") or "")
                elif "path" in row and row["path"] not in paths:
                    paths.append(str(row["path"]))
        except OSError:
            continue
        out.append(Interrupted(file, message, paths, agent))
    return out


def _clear_git_locks(vault: Vault, item: Interrupted) -> None:
    """git's lock files (`index.lock`, `HEAD.lock`, a branch's `.lock`) the dead command's
    commit left: made after its last journaled write, so by that commit — a kill inside
    `git update-ref` would otherwise block every later commit. Older ones are not alaya's."""
    from .history import is_repo

    if not is_repo(vault.root):
        return
    from .repo_recovery import stale_locks

    try:
        since = item.file.stat().st_mtime
    except OSError:
        return
    for lock in stale_locks(vault.root, since)[0]:
        lock.unlink(missing_ok=True)


def recover(vault: Vault) -> list[str]:
    """Commit what interrupted commands wrote (caller holds the vault lock). Returns the
    commits made."""
    from . import history

    shas = []
    remove_dead_reserves(vault.state_dir)
    for item in interrupted(vault.state_dir):
        _clear_git_locks(vault, item)
        if item.paths and vault.config.get("git", "commit"):
            head = (item.message or "alaya").split("\n", 1)[0]
            sha = history.commit_paths(vault.root, item.paths,
                                       f"{head}\n\n{RECOVERED}.\n" + "\n".join(
                                           f"- {p}" for p in item.paths),
                                       vault.config.git_identity(),
                                       agent=item.agent or None)
            if sha:
                shas.append(sha)
        item.file.unlink(missing_ok=True)
    return shas
