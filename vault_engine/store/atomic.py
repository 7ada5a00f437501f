"""Atomic file writes with a compare-and-swap at the replace (docs/architecture.md, "The write
gateway").

`atomic_write(full, data, expected=…)` writes a temp file in the same folder, fsyncs it, and
only then — as late as possible — checks that the target still holds the bytes the caller read
(`expected`, a SHA-256; `MISSING`: the file must not exist). The check opens the target, so
right after `os.replace` the replaced inode can be read once more through that descriptor: an
editor that saved in place between the check and the replace wrote into the old inode, and
its save comes back as `LateSave` instead of being lost. An editor that saves by renaming its
own temp file over the target can still land in the few microseconds between the check and
the replace; nothing in POSIX closes that gap without the editor's help.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from vault_engine.primitives import checksum

TMP_MARKER = ".alaya-tmp-"
MISSING = "<missing>"  # expected checksum meaning "the file must not exist yet"


class Moved(Exception):
    """The target no longer holds what the caller read (or exists when it must not)."""

    def __init__(self, exists: bool) -> None:
        super().__init__("moved")
        self.exists = exists


class LateSave(Exception):
    """Someone saved into the target in place while it was being replaced: `saved` is what
    they wrote (now only in the replaced inode), `ours` the checksum now on disk."""

    def __init__(self, saved: bytes, ours: str) -> None:
        super().__init__("late save")
        self.saved = saved
        self.ours = ours


def _read_fd(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def atomic_write(full: Path, data: bytes, *, durable: bool = True,
                 expected: str | None = None) -> None:
    """Write `data` to `full` via a temp file in the same folder and `os.replace`.

    `durable=False` skips the fsync: for rebuildable caches, where a lost write after a power
    cut costs a recompute, not knowledge. `expected` (a checksum, or MISSING) is checked right
    before the replace: `Moved` when it no longer holds, `LateSave` when a save landed in the
    replaced file during the replace.
    """
    full.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + full.name[:40] + TMP_MARKER, dir=full.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        try:
            os.chmod(tmp, full.stat().st_mode & 0o7777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        if expected is None:
            os.replace(tmp, full)
        elif expected == MISSING:
            _create(tmp, full)
        else:
            _swap(tmp, full, expected, checksum(data))
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _create(tmp: str, full: Path) -> None:
    """Publish `tmp` as `full` only if `full` does not exist (a hard link fails if it does)."""
    try:
        os.link(tmp, full)
    except FileExistsError:
        raise Moved(exists=True) from None
    except OSError:  # a filesystem without hard links: check, then replace
        if full.exists():
            raise Moved(exists=True) from None
        os.replace(tmp, full)
        return
    os.unlink(tmp)


def _swap(tmp: str, full: Path, expected: str, ours: str) -> None:
    try:
        old = os.open(full, os.O_RDONLY)
    except FileNotFoundError:
        raise Moved(exists=False) from None
    try:
        before = _read_fd(old)
        if checksum(before) != expected:
            raise Moved(exists=True)
        os.replace(tmp, full)
        after = _read_fd(old)  # the inode just replaced: did anyone write into it meanwhile?
        if after != before:
            raise LateSave(_settled(old, after), ours)
    finally:
        os.close(old)


def _settled(fd: int, seen: bytes) -> bytes:
    """The replaced inode once its writer is done (an in-place save truncates, then writes:
    read until two reads ~1 ms apart agree, for at most ~50 ms)."""
    import time

    for _ in range(50):
        time.sleep(0.001)
        now = _read_fd(fd)
        if now == seen:
            return now
        seen = now
    return seen
