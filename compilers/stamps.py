"""Compile: the stamps that let recall tell, cheaply, that the vault changed since this build
(the format and the check: vault_engine/stamps.py).

The folders' mtimes are taken before the scan states a single note, so a note created while
the compile runs always shows up later as a change, never as part of this build. When the
vault is unchanged but a folder's or a note's mtime moved (an editor's swap file came and
went, a `touch`), no new build is written: the current build's stamps are replaced instead,
so recall does not re-check that folder on every call.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from vault_engine import artifacts as A
from vault_engine import stamps as S
from vault_engine.primitives import checksum
from vault_engine.store.notes import FOLDER_KINDS, ROOT_KINDS
from vault_engine.store.vault import SKIP_DIRS, TMP_MARKER, Vault, atomic_write

from .options import Malformed
from .records import GRAPH_KINDS, UNIT_KINDS, NoteRecord

Stamp = tuple[int, int, str]


# File systems stamp mtimes from a coarse clock (one tick: 1–10 ms on Linux). Two changes in
# one tick get the same mtime, so a stamp taken in the tick of a change could miss the next.
TICK_NS = 20_000_000


# notes that are not recall targets (reports, archive, templates; MEMORY.md, persona.md,
# AGENTS.md): recall does not watch them, so writing a report leaves recall fresh
UNTRACKED_DIRS = sorted(f for f, kind in FOLDER_KINDS.items() if kind not in UNIT_KINDS)
UNTRACKED_FILES = sorted(f for f, kind in ROOT_KINDS.items() if kind not in UNIT_KINDS)


def folder_stamps(vault: Vault) -> tuple[dict[str, int], int]:
    """Every folder the note walk enters with its mtime, and the time the scan may start
    (call before the scan). A folder changed within the last tick — the write a refresh
    follows — is stamped again once that tick has passed (git's "racy clean" problem)."""
    dirs = S.note_dirs(vault.root, SKIP_DIRS, UNTRACKED_DIRS)
    stamps = S.dir_mtimes(vault.root, dirs)
    wait = max(stamps.values(), default=0) + TICK_NS - time.time_ns()
    if wait > 0:
        time.sleep(wait / 1e9)
        stamps = S.dir_mtimes(vault.root, dirs)
    return stamps, time.time_ns()


def note_stamps(vault: Vault, entries: Mapping[str, tuple[int, int, NoteRecord]],
                malformed: Sequence[Malformed], scan_start: int) -> dict[str, Stamp]:
    """(mtime_ns, size, sha256) of every note the scan read. A note changed within a tick of
    the scan gets mtime -1: recall then compares its bytes, not its mtime. A malformed note
    is stamped too, so it counts as unchanged (compile reports it) until someone edits it."""
    racy = scan_start - TICK_NS
    out = {rel: (mtime if mtime < racy else -1, size, rec.checksum)
           for rel, (mtime, size, rec) in entries.items()}
    for m in malformed:
        full = os.path.join(vault.root, m.path)
        try:
            st = os.stat(full)
            with open(full, "rb") as fh:
                out[m.path] = (st.st_mtime_ns if st.st_mtime_ns < racy else -1, st.st_size,
                               checksum(fh.read()))
        except OSError:
            continue
    return out


def _files(records: Sequence[NoteRecord], dirs: Mapping[str, int],
           notes: Mapping[str, Stamp]) -> dict[str, bytes]:
    import numpy as np

    private = {r.path: r.namespace for r in records if r.namespace and r.namespace != "shared"}
    files = S.stamp_files(dirs, notes, skip=SKIP_DIRS, tmp_marker=TMP_MARKER,
                          untracked_dirs=UNTRACKED_DIRS, untracked_files=UNTRACKED_FILES,
                          namespaces=private)
    nodes = [r.path for r in records if r.kind in GRAPH_KINDS]  # recall_index's node order
    buf = io.BytesIO()
    np.save(buf, S.node_stamps(nodes, notes))
    files[S.NODE_STAMP] = buf.getvalue()
    return files


def write_stamps(recall_dir: Path, records: Sequence[NoteRecord], dirs: Mapping[str, int],
                 notes: Mapping[str, Stamp]) -> None:
    """Into a build being written."""
    for name, data in _files(records, dirs, notes).items():
        path = recall_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def refresh_stamps(build: A.Build, records: Sequence[NoteRecord], dirs: Mapping[str, int],
                   notes: Mapping[str, Stamp]) -> int:
    """Into the published build the vault still matches: each stamp file that differs is
    replaced atomically (a reader sees the old file or the new). Returns how many changed."""
    recall_dir = build.path(A.RECALL)
    if not recall_dir.is_dir():
        return 0
    changed = 0
    for name, data in _files(records, dirs, notes).items():
        path = recall_dir / name
        try:
            if path.read_bytes() == data:
                continue
        except OSError:
            pass
        atomic_write(path, data, durable=False)
        changed += 1
    return changed
