"""A sync that was killed, found and finished cleanly by the next `alaya sync` or
`alaya doctor --fix` — without losing a card, a commit or a person's edit.

`alaya sync` keeps a journal (`.alaya/sync.json`: the pid, when it started, the commit HEAD
was on, the remote's commit it merges) from its start to its end, under the vault lock. A
journal found by the next holder of the lock is a sync that died. What git leaves behind
then, and what recovery does about it:

- **lock files** (`.git/index.lock`, `HEAD.lock`, a ref's `.lock`, `config.lock` …) made
  after the journal's start: made by that sync's git, removed. An older lock is not alaya's
  and is left alone (it is reported);
- **a merge or rebase in progress** (`MERGE_HEAD`, `rebase-merge/`): aborted;
- **the working tree half checked out**: at the start every tracked file matched HEAD (sync
  refuses to start otherwise), so a tracked file that now holds a version of itself from one
  of the commits involved — or a prefix of one, a write cut short — or is missing, was left by
  git: it is restored from HEAD; a file that holds anything else was edited by a person since
  the kill and stays as it is (and is named). An untracked file git created from the
  remote's commit, and git's `.merge_file_*` temp files, are removed;
- the index is reset to HEAD (it held nothing of a person's: sync starts with none staged).

Then the sync runs again from the start. A sync whose git stopped half-way on its own (a
full disk: files created empty or cut short, then "Aborting") is cleaned up the same way at
once, before its error is raised — what git created from the remote is removed first, which
is what gives the reset room on a full disk — so the next sync starts from a clean tree.
The remotes of `.git/config` are also recorded (`.alaya/remotes.json`) at every sync, so
`doctor --fix` can restore a config that another tool left empty.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from .atomic import atomic_write
from .history import run_git

JOURNAL = "sync.json"
REMOTES = "remotes.json"
REFUSED = "sync-refused.json"
GIT_LOCKS = ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "FETCH_HEAD.lock", "MERGE_HEAD.lock",
             "config.lock", "packed-refs.lock", "shallow.lock", "AUTO_MERGE.lock")
SLACK_S = 2.0  # a lock made this long before the journal is still counted as the sync's


def git_dir(root: Path) -> Path:
    out = run_git(root, "rev-parse", "--absolute-git-dir").decode().strip()
    return Path(out)


# -- the journal ---------------------------------------------------------------------------
def begin(state_dir: Path, *, head: str, remote: str, branch: str) -> dict[str, Any]:
    entry = {"pid": os.getpid(), "started": time.time(), "head": head, "remote": remote,
             "branch": branch, "target": None}
    _write(state_dir / JOURNAL, entry)
    return entry


def note_target(state_dir: Path, entry: dict[str, Any], target: str) -> None:
    entry["target"] = target
    _write(state_dir / JOURNAL, entry)


def end(state_dir: Path) -> None:
    try:
        (state_dir / JOURNAL).unlink()
    except FileNotFoundError:
        pass


def pending(state_dir: Path) -> dict[str, Any] | None:
    """The journal of a sync that did not finish (callers hold the vault lock, so no sync
    is running), or None."""
    try:
        data = json.loads((state_dir / JOURNAL).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {"pid": 0, "started": 0.0, "head": "", "remote": "", "branch": "",
                "target": None}
    return data if isinstance(data, dict) else None


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, ensure_ascii=False).encode("utf-8"))


# -- what recovery does ----------------------------------------------------------------------
def _locks(gd: Path) -> list[Path]:
    found = [gd / name for name in GIT_LOCKS if (gd / name).exists()]
    for sub in ("refs", "logs"):
        if (gd / sub).is_dir():
            found += [p for p in (gd / sub).rglob("*.lock") if p.is_file()]
    return found


def stale_locks(root: Path, since: float) -> tuple[list[Path], list[Path]]:
    """(locks made by a sync that started at `since`, older locks that are not alaya's)."""
    ours: list[Path] = []
    theirs: list[Path] = []
    for lock in _locks(git_dir(root)):
        try:
            made = lock.stat().st_mtime
        except FileNotFoundError:
            continue
        (ours if since and made >= since - SLACK_S else theirs).append(lock)
    return ours, theirs


def _blob(root: Path, rev: str | None, path: str) -> bytes | None:
    """`path` as commit `rev` holds it, None where it has no such file."""
    if not rev:
        return None
    import subprocess

    proc = subprocess.run(["git", "cat-file", "blob", f"{rev}:{path}"], cwd=root,
                          capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


def _left_by_git(current: bytes, versions: list[bytes], fresh: bool = False) -> bool:
    """A file git wrote: one of the versions, or one cut short (a prefix of one). An empty
    file counts only when `fresh` (written since the sync began): a full disk lets git create
    a file and write nothing into it."""
    return any(current == v or ((current or fresh) and v.startswith(current))
               for v in versions)


def _fresh(path: Path, since: float) -> bool:
    try:
        return path.stat().st_mtime >= since - SLACK_S
    except OSError:
        return False


def _status(root: Path) -> tuple[list[str], list[str]]:
    """(tracked paths that differ from HEAD in the index or the working tree, untracked
    files) — untracked ones as git lists them, ignored files left out."""
    raw = run_git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all",
                  "--no-renames", env={"GIT_OPTIONAL_LOCKS": "0"})  # writes no index: the
    # disk may be full
    tracked: list[str] = []
    untracked: list[str] = []
    for entry in raw.decode("utf-8", "surrogateescape").split("\x00"):
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        (untracked if code == "??" else tracked).append(path)
    return tracked, untracked


def recover(root: Path, state_dir: Path, journal: dict[str, Any]) -> list[str]:
    """Undo what a killed sync left (see the module's text); returns what was done, one line
    each, and what was left for a person."""
    done: list[str] = []
    gd = git_dir(root)
    since = float(journal.get("started") or 0.0)
    ours, theirs = stale_locks(root, since)
    for lock in ours:
        lock.unlink(missing_ok=True)
        done.append(f"removed {lock.relative_to(root) if lock.is_relative_to(root) else lock}"
                    " (left by the interrupted sync)")
    for lock in theirs:
        done.append(f"left {lock.name}: older than the interrupted sync — if no git command "
                    f"is running, remove {lock}")
    if theirs:
        return done  # another git may be at work: touch nothing else
    if (gd / "MERGE_HEAD").exists():
        run_git(root, "merge", "--abort", check=False)
        done.append("aborted the unfinished merge")
    if (gd / "rebase-merge").exists() or (gd / "rebase-apply").exists():
        run_git(root, "rebase", "--abort", check=False)
        done.append("aborted the unfinished rebase")
    revs = [r for r in (journal.get("head"), journal.get("target"), "HEAD", "ORIG_HEAD") if r]
    tracked, untracked = _status(root)
    # what git created from the remote first: on a full disk, removing it is what makes
    # room for the rest (the reset below writes the index)
    target = journal.get("target")
    for rel in untracked:
        full = root / rel
        name = full.name
        try:
            made = full.stat().st_mtime
        except FileNotFoundError:
            continue
        if name.startswith(".merge_file_") and made >= since - SLACK_S:
            full.unlink(missing_ok=True)
            done.append(f"removed git's temp file {rel}")
            continue
        theirs_blob = _blob(root, target, rel) if target else None
        if theirs_blob is not None and _left_by_git(full.read_bytes(), [theirs_blob],
                                                    made >= since - SLACK_S):
            full.unlink(missing_ok=True)
            done.append(f"removed {rel}: checked out from {str(target)[:10]} before the sync stopped "
                        "(the sync brings it again)")
    restore, kept = [], []
    for rel in tracked:
        full = root / rel
        versions = [b for b in (_blob(root, r, rel) for r in revs) if b is not None]
        if not full.exists() or _left_by_git(full.read_bytes(), versions,
                                             _fresh(full, since)):
            restore.append(rel)
        else:
            kept.append(rel)
    run_git(root, "reset", "-q", check=False)  # the index back to HEAD, the files untouched
    if restore:
        head_has = [r for r in restore if _blob(root, "HEAD", r) is not None]
        if head_has:
            run_git(root, "checkout", "HEAD", "--", *head_has)
        for rel in restore:
            if rel not in head_has:
                (root / rel).unlink(missing_ok=True)  # git wrote it; HEAD does not have it
        done.append(f"restored {len(restore)} file(s) git left half checked out: "
                    + ", ".join(restore[:5]) + (" …" if len(restore) > 5 else ""))
    for rel in kept:
        done.append(f"kept {rel}: changed since the interrupted sync (yours to commit)")
    end(state_dir)
    return done


# -- the remotes, for a config someone else emptied ---------------------------------------------
def remember_remotes(root: Path, state_dir: Path) -> None:
    raw = run_git(root, "config", "--local", "--get-regexp", r"^remote\.", check=False)
    remotes: dict[str, dict[str, str]] = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        parts = key.split(".")
        if len(parts) >= 3:
            remotes.setdefault(".".join(parts[1:-1]), {})[parts[-1]] = value
    if remotes:
        _write(state_dir / REMOTES, remotes)


def recorded_remotes(state_dir: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads((state_dir / REMOTES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def config_intact(root: Path) -> bool:
    """Whether .git/config still holds git's own core settings (an emptied or truncated file
    loses `core.repositoryformatversion` first)."""
    out = run_git(root, "config", "--local", "--get", "core.repositoryformatversion",
                  check=False)
    return bool(out.strip())


def restore_config(root: Path, state_dir: Path) -> list[str]:
    """Put back what an emptied .git/config lost: git's core settings, the remotes this
    machine recorded, and alaya's own settings (the merge driver, quotepath)."""
    from .history import configure_repo, set_config
    from .merge import register_driver

    done = []
    if not config_intact(root):
        set_config(root, "core.repositoryformatversion", "0")
        set_config(root, "core.filemode", "true")
        set_config(root, "core.bare", "false")
        done.append("restored .git/config's core settings")
    for name, keys in recorded_remotes(state_dir).items():
        have = run_git(root, "config", "--local", "--get", f"remote.{name}.url", check=False)
        if not have.strip():
            for key, value in keys.items():
                run_git(root, "config", "--local", "--add", f"remote.{name}.{key}", value)
            done.append(f"restored the remote {name} ({keys.get('url', '?')})")
    configure_repo(root)
    register_driver(root)
    return done


__all__ = ["JOURNAL", "REFUSED", "REMOTES", "begin", "config_intact", "end", "note_target",
           "pending", "recorded_remotes", "recover", "remember_remotes", "restore_config",
           "stale_locks"]
