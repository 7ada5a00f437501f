"""What the vault looked like when it was compiled, and whether it still does — cheaply.

Recall must say when it answers from artifacts older than the vault (`stale: true`), on every
call, without re-reading the vault: a one-shot `alaya recall` has ~150 ms in all, and stating
every note costs ~60 ms at 10k notes and ~0.7 s at 100k on this project's machine. So a build
records (`recall/stamps.json` and `recall/stamps/<i>.json`, written by the compile):

- every folder the note walk enters, with its mtime: creating, deleting or renaming a note —
  and saving one the way most editors do, a new file renamed over the old — changes its
  folder's mtime;
- for each folder, its notes' mtime, size and checksum prefix: read only for a folder whose
  mtime moved (or for every folder in a vault of at most `FULL_CHECK_NOTES` notes, where
  stating everything costs a few milliseconds), then each note is compared; a note whose mtime moved but whose
  bytes hash the same (a `touch`) is not a change;
- each graph node's file stamp (`node_stamp.npy`): the notes a recall returns are compared
  one by one, which catches an in-place edit (Obsidian's own save) of anything the agent is
  about to read, in a vault of any size.

What this misses, in a vault of more than `FULL_CHECK_NOTES` notes: an in-place edit of a
note the recall does not return. `alaya status` and `alaya compile --check` hash everything.

A note outside `shared` carries its namespace in its stamp (a fourth value), so what a
recall tells an agent about changed notes can leave out another agent's private ones
(`Staleness.namespaces`; the filter is the recall pipeline's, it knows the caller).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from .primitives import record

STAMPS = "stamps.json"  # in a build's recall/ folder
STAMP_DIR = "stamps"
NODE_STAMP = "node_stamp.npy"  # int64 (nodes, 3): mtime_ns, size, checksum prefix
FULL_CHECK_NOTES = 1000  # at most this many notes: every folder is compared on every call
SHOWN = 20  # changed paths listed in a recall's JSON


def sha_prefix(checksum: str) -> int:
    """The first 63 bits of a hex SHA-256, as a non-negative int64."""
    return int(checksum[:16], 16) >> 1


def note_dirs(root: Path, skip: Iterable[str], untracked: Iterable[str] = ()) -> list[str]:
    """Every folder the note walk enters (vault-relative, "" for the root), sorted: dot-folders,
    `skip` and symlinked folders are never entered, nor the top-level `untracked` ones."""
    skip = frozenset(skip)
    top_skip = skip | frozenset(untracked)
    out = []
    base = str(root)
    for dirpath, dirnames, _files in os.walk(base):
        names = top_skip if dirpath == base else skip
        dirnames[:] = sorted(d for d in dirnames if d not in names and not d.startswith(".")
                             and not os.path.islink(os.path.join(dirpath, d)))
        rel = os.path.relpath(dirpath, base).replace(os.sep, "/")
        out.append("" if rel == "." else rel)
    return sorted(out)


def dir_mtimes(root: Path, dirs: Sequence[str]) -> dict[str, int]:
    out = {}
    for d in dirs:
        try:
            out[d] = os.stat(os.path.join(root, d)).st_mtime_ns
        except OSError:
            continue
    return out


def stamp_files(dirs: Mapping[str, int], notes: Mapping[str, tuple[int, int, str]], *,
                skip: Iterable[str], tmp_marker: str, untracked_dirs: Iterable[str] = (),
                untracked_files: Iterable[str] = (),
                namespaces: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """The folder and note stamps of one build, as {path under recall/: bytes}. `dirs` is
    taken before the notes are stated; `notes` maps a path to (mtime_ns, size, sha256 hex)
    as the compile read it. Notes in the top-level `untracked_dirs` and the root's
    `untracked_files` are not recall targets (reports, archive, templates, MEMORY.md …):
    they are left out, so writing a report does not make recall stale. `namespaces`: the
    namespace of each note outside `shared`, kept in its stamp."""
    top = frozenset(untracked_dirs)
    root_files = frozenset(untracked_files)
    by_dir: dict[str, dict[str, list[Any]]] = {d: {} for d in dirs}
    for rel, (mtime, size, sha) in notes.items():
        if rel in root_files or rel.split("/", 1)[0] in top and "/" in rel:
            continue
        d, _, name = rel.rpartition("/")
        ns = (namespaces or {}).get(rel)
        by_dir.setdefault(d, {})[name] = [mtime, size, sha_prefix(sha), *([ns] if ns else [])]
    order = sorted(by_dir)

    def dump(obj: Any) -> bytes:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    files = {f"{STAMP_DIR}/{i}.json": dump(by_dir[d]) for i, d in enumerate(order)}
    files[STAMPS] = dump({"version": 1, "notes": len(notes), "skip_dirs": sorted(skip),
                          "tmp_marker": tmp_marker, "untracked_dirs": sorted(top),
                          "untracked_files": sorted(root_files),
                          "dirs": [[d, dirs.get(d, -1)] for d in order]})
    return files


def node_stamps(paths: Sequence[str | None], notes: Mapping[str, tuple[int, int, str]]) -> Any:
    """The (nodes, 3) int64 array of `node_stamp.npy` for graph nodes with these paths."""
    import numpy as np

    out = np.full((len(paths), 3), -1, dtype=np.int64)
    for i, p in enumerate(paths):
        if p is not None and p in notes:
            mtime, size, sha = notes[p]
            out[i] = (mtime, size, sha_prefix(sha))
    return out


@record
class Staleness:
    """Whether the vault changed since the build: `stale` None when the build cannot tell."""

    stale: bool | None
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    # the namespace a changed or deleted note had at compile time, when not `shared`
    namespaces: dict[str, str] = field(default_factory=dict)

    @property
    def paths(self) -> list[str]:
        return sorted({*self.added, *self.changed, *self.deleted})

    def warning(self) -> str | None:
        if self.stale is None:
            return ("this build cannot tell whether the vault changed since it was compiled "
                    "(an older alaya wrote it): run `alaya compile`")
        if not self.stale:
            return None
        parts = [f"{len(v)} {k}" for k, v in (("edited", self.changed), ("added", self.added),
                                              ("deleted", self.deleted)) if v]
        shown = ", ".join(self.paths[:3]) + (" …" if len(self.paths) > 3 else "")
        return (f"the vault changed since the last compile ({', '.join(parts)}: {shown}); these "
                "results may miss or misstate them — run `alaya compile`, or keep `alaya watch` "
                "(or `alaya serve`) running")


def _same(path: str, stamp: Sequence[int], entry: os.DirEntry[str] | None = None) -> bool | None:
    """Is the file at `path` the one stamped? None: it is gone."""
    try:
        st = entry.stat(follow_symlinks=False) if entry is not None else os.stat(path)
    except OSError:
        return None
    if st.st_mtime_ns == stamp[0] and st.st_size == stamp[1]:
        return True
    if st.st_size != stamp[1]:
        return False
    import hashlib  # only here: loading OpenSSL costs a one-shot recall ~3 ms, and a recall
    # hashes a note only when its mtime moved

    try:
        with open(path, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None
    return sha_prefix(digest) == stamp[2]


def check(recall_dir: Path, root: Path, results: Sequence[tuple[int, str | None]] = (),
          node_stamp: Any = None) -> Staleness:
    """Compare the build's stamps with the disk: every folder's mtime, the notes of any folder
    that moved (of every folder in a small vault), and the notes of `results` — (graph node,
    path) pairs — against `node_stamp`."""
    try:
        info = json.loads((recall_dir / STAMPS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Staleness(None)
    out = Staleness(False)
    base = str(root)
    skip = frozenset(info.get("skip_dirs") or ())
    marker = str(info.get("tmp_marker") or "\0")
    untracked = (frozenset(info.get("untracked_dirs") or ()),
                 frozenset(info.get("untracked_files") or ()))
    recorded = {d: (i, m) for i, (d, m) in enumerate(info["dirs"])}
    full = int(info.get("notes", 0)) <= FULL_CHECK_NOTES
    checked: set[str] = set()
    for d, (i, mtime) in recorded.items():
        full_dir = os.path.join(base, d)
        try:
            now_mtime = os.stat(full_dir).st_mtime_ns
        except OSError:
            now_mtime = None
        if not full and now_mtime == mtime:
            continue
        try:
            stamps = json.loads((recall_dir / STAMP_DIR / f"{i}.json").read_text("utf-8"))
        except (OSError, ValueError):
            return Staleness(None)
        prefix = d + "/" if d else ""
        present = _listing(full_dir, skip, marker, recorded, prefix, out,
                           untracked if not d else (frozenset(), frozenset())) \
            if now_mtime is not None else {}
        for name, entry in present.items():
            stamp = stamps.get(name)
            if stamp is None:
                out.added.append(prefix + name)
            elif not _same(entry.path, stamp, entry):
                out.changed.append(prefix + name)
                if len(stamp) > 3:
                    out.namespaces[prefix + name] = str(stamp[3])
        checked.update(prefix + name for name in present)
        for name in set(stamps) - set(present):
            out.deleted.append(prefix + name)
            checked.add(prefix + name)
            if len(stamps[name]) > 3:
                out.namespaces[prefix + name] = str(stamps[name][3])
    if node_stamp is not None:
        for node, rel in results:
            if not rel or rel in checked or node < 0 or node >= len(node_stamp):
                continue
            stamp = [int(x) for x in node_stamp[node]]
            if stamp[1] < 0:
                continue  # a node with no file of its own (a link target that does not exist)
            same = _same(os.path.join(base, rel), stamp)
            if same is None:
                out.deleted.append(rel)
            elif not same:
                out.changed.append(rel)
    out.stale = bool(out.added or out.changed or out.deleted)
    return out


def _listing(full_dir: str, skip: frozenset[str], marker: str, recorded: Mapping[str, Any],
             prefix: str, out: Staleness,
             untracked: tuple[frozenset[str], frozenset[str]]) -> dict[str, os.DirEntry[str]]:
    """The note files in a folder now, by name; a folder that was not there at compile time
    and holds notes counts its notes as added. `untracked`: the folders and files (of the
    root) that hold no recall targets."""
    names: dict[str, os.DirEntry[str]] = {}
    try:
        with os.scandir(full_dir) as it:
            entries = list(it)
    except OSError:
        return {}
    for e in entries:
        if e.name.startswith(".") or marker in e.name:
            continue
        if e.is_dir(follow_symlinks=False):
            rel = prefix + e.name
            if rel not in recorded and e.name not in skip and e.name not in untracked[0]:
                out.added.extend(_new_notes(e.path, rel, skip, marker))
        elif e.name.endswith(".md") and e.name not in untracked[1] and \
                e.is_file(follow_symlinks=False):
            names[e.name] = e
    return names


def _new_notes(path: str, rel: str, skip: frozenset[str], marker: str) -> list[str]:
    found = []
    for dirpath, dirnames, files in os.walk(path):
        dirnames[:] = [d for d in dirnames if d not in skip and not d.startswith(".")
                       and not os.path.islink(os.path.join(dirpath, d))]
        sub = os.path.relpath(dirpath, path).replace(os.sep, "/")
        base = rel if sub == "." else f"{rel}/{sub}"
        found += [f"{base}/{f}" for f in files if f.endswith(".md") and not f.startswith(".")
                  and marker not in f]
    return sorted(found)
