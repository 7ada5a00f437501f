"""Atomic file writes with a compare-and-swap at the replace (docs/architecture.md, "The write
gateway").

`atomic_write(full, data, expected=…)` writes a temp file in the same folder, fsyncs it, and
only then — as late as possible — checks that the target still holds the bytes the caller read
(`expected`, a SHA-256; `MISSING`: the file must not exist). The check opens the target, so
right after `os.replace` the replaced inode can be read once more through that descriptor: an
editor that saved in place between the check and the replace wrote into the old inode, and
its save comes back as `LateSave` instead of being lost. The replaced inode is read once more
a millisecond later (an editor that opened the file just before the replace writes into it
just after). An editor that saves by renaming its own temp file over the target can still
land in the few microseconds between the check and the replace; nothing in POSIX closes that
gap without the editor's help.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from vault_engine.errors import refused_write
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
    they wrote (now only in the replaced inode), `base` what it held when it was checked,
    `ours` the checksum of what is on disk now."""

    def __init__(self, saved: bytes, base: bytes, ours: str) -> None:
        super().__init__("late save")
        self.saved = saved
        self.base = base
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
                 expected: str | None = None, sync_after: bool = False,
                 keep: list[Replaced] | None = None,
                 rebase: Callable[[bytes], bytes | None] | None = None) -> None:
    """Write `data` to `full` via a temp file in the same folder and `os.replace`.

    `durable=False` skips the fsync: for rebuildable caches, where a lost write after a power
    cut costs a recompute, not knowledge. `expected` (a checksum, or MISSING) is checked right
    before the replace: `Moved` when it no longer holds, `LateSave` when a save landed in the
    replaced file during the replace. `sync_after` moves the fsync after the replace: the
    gateway's retry against an editor saving faster than a disk syncs (an fsync takes ~4 ms;
    with it inside the window, a file saved every 2 ms could never be written). With `keep`,
    the replaced file stays open (a `Replaced`, appended to it) so a save that lands in it
    later still is found (store/late.py reads it again once the change is committed). With
    `rebase`, a target that moved is handed to it (the bytes now there) and what it returns
    is written instead, checked again — a cheap merge at the replace (see `rebase_regions`)
    so a write keeps up with an editor saving every few milliseconds.

    A write the machine refuses (no space, a quota, a read-only file system, no permission)
    raises WriteRefusedError naming `full`; the temp file is removed and the target keeps
    its old bytes.
    """
    try:
        full.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="." + full.name[:40] + TMP_MARKER, dir=full.parent)
    except OSError as exc:
        raise (refused_write(exc, full) or exc) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable and not sync_after:
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
            for _ in range(200):
                try:
                    _swap(tmp, full, expected, checksum(data), keep)
                    break
                except Moved as moved:
                    current = _current(full) if rebase is not None and moved.exists else None
                    new = rebase(current) if current is not None and rebase is not None else None
                    if new is None:
                        raise
                    data, expected = new, checksum(current)  # type: ignore[arg-type]
                    with open(tmp, "wb") as fh:
                        fh.write(data)
            else:
                raise Moved(exists=True)
        if durable and sync_after:
            with contextlib.suppress(OSError):
                synced = os.open(full, os.O_RDONLY)
                try:
                    os.fsync(synced)
                finally:
                    os.close(synced)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        refused = refused_write(exc, full) if isinstance(exc, OSError) else None
        if refused is not None:
            raise refused from exc
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


def _current(full: Path) -> bytes | None:
    try:
        return read_settled(full)
    except FileNotFoundError:
        return None


def _split(text: bytes) -> tuple[bytes, bytes]:
    """(frontmatter with its fences, body) of a note's bytes, without parsing YAML."""
    start = 3 if text.startswith(b"\xef\xbb\xbf") else 0
    if not text.startswith(b"---", start):
        return b"", text
    first = text.find(b"\n", start)
    if first < 0:
        return text, b""
    pos = first + 1
    while pos < len(text):
        end = text.find(b"\n", pos)
        line = text[pos:end if end >= 0 else len(text)].rstrip(b"\r")
        if line in (b"---", b"..."):
            cut = end + 1 if end >= 0 else len(text)
            return text[:cut], text[cut:]
        if end < 0:
            break
        pos = end + 1
    return text, b""


def rebase_regions(base: bytes, ours: bytes) -> Callable[[bytes], bytes | None]:
    """A `rebase` for notes: the frontmatter and the body are two regions; a region only one
    side changed takes that side's version (alaya edits the frontmatter while a person types
    in the body: both survive). Both sides changed one region: None (re-read, re-apply)."""
    b_head, b_body = _split(base)
    o_head, o_body = _split(ours)

    def rebase(current: bytes) -> bytes | None:
        c_head, c_body = _split(current)
        parts = []
        for b, o, c in ((b_head, o_head, c_head), (b_body, o_body, c_body)):
            if c == b:
                parts.append(o)
            elif o == b:
                parts.append(c)
            else:
                return None
        return b"".join(parts)
    return rebase


class Replaced:
    """A file alaya replaced, still open: what it held when checked, and the descriptor."""

    def __init__(self, full: Path, fd: int, before: bytes) -> None:
        self.full, self.fd, self.before = full, fd, before

    def late_save(self) -> bytes | None:
        """What someone saved into it after the check (None: nothing), and close it."""
        try:
            after = _filled(self.fd, _settled(self.fd, _read_fd(self.fd)))
        finally:
            os.close(self.fd)
        return after if after and after != self.before else None


def _swap(tmp: str, full: Path, expected: str, ours: str,
          keep: list[Replaced] | None = None) -> None:
    try:
        old = os.open(full, os.O_RDONLY)
    except FileNotFoundError:
        raise Moved(exists=False) from None
    kept = False
    try:
        before = _read_fd(old)
        if checksum(before) != expected:
            raise Moved(exists=True)
        os.replace(tmp, full)
        # did anyone write into the replaced inode? (empty: a save begun, not a version)
        after = _filled(old, _settled(old, _read_fd(old)))
        if after and after != before:
            raise LateSave(after, before, ours)
        if keep is not None:
            keep.append(Replaced(full, old, before))
            kept = True
    finally:
        if not kept:
            os.close(old)


def read_settled(full: Path) -> bytes:
    """A file's bytes, not the moment inside someone's in-place save: an editor truncates the
    file, then writes it, and an empty read in between is not a version of the note — it is
    given ~50 ms to fill and settle (a note is not saved empty on purpose mid-edit)."""
    fd = os.open(full, os.O_RDONLY)
    try:
        return _filled(fd, _read_fd(fd))
    finally:
        os.close(fd)


def _filled(fd: int, data: bytes) -> bytes:
    """`data`, or — while it is empty, for up to ~50 ms — what the file fills with."""
    import time

    for _ in range(50):
        if data:
            return data
        time.sleep(0.001)
        data = _settled(fd, _read_fd(fd))
    return data


def _settled(fd: int, seen: bytes) -> bytes:
    """The replaced inode once writers that opened it before the replace are done (an
    in-place save truncates, then writes): read until two reads 1 ms apart agree, for at
    most ~50 ms."""
    import time

    for _ in range(50):
        time.sleep(0.001)
        now = _read_fd(fd)
        if now == seen:
            return now
        seen = now
    return seen
