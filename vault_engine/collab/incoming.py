"""What a synced remote may bring in, judged before anything is merged.

A remote is as untrusted as session text (docs/security.md, "A remote you sync with"). What
it changes lands in this machine's working tree, and alaya then reads it — so `alaya sync`
looks at everything the merge would bring (the diff from the merge base to the remote's
branch: what would land here, not every commit on the way) and refuses, before merging:

- **machine-local paths**: `.alaya/` (the artifacts, caches, the discovery files, the
  journal) whatever `.gitignore` says, and any path this vault's own ignore rules exclude
  that this vault does not already track — derived, per machine, never taken from outside;
- **symlinks and submodules**: a link committed as a note could point anywhere on this
  machine (and alaya never follows one), a submodule is another repository to trust; and an
  `alaya.toml` below the vault's root, which would make alaya run from that folder take it
  for a vault of its own;
- **settings that decide where text goes or who reads it** (`GUARDED` below): a remote that
  points `[embedding] base_url` at its own server would receive every card, and this
  machine's API key with it. These are refused unless the user accepts them after reading
  the change (`alaya sync --accept-config`).

Each refusal names the path, why, and the last commit of the remote's branch that touched it.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vault_engine.config import CONFIG_FILE
from vault_engine.store.history import run_git

MACHINE_LOCAL = (".alaya",)  # folders that are this machine's, whatever .gitignore says
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
SYMLINK, GITLINK = "120000", "160000"
# (section, key) of alaya.toml a remote may not change unreviewed: where text and keys are
# sent (the endpoints), and who reads what (namespaces, review)
GUARDED: tuple[tuple[str, str], ...] = (
    ("embedding", "provider"), ("embedding", "base_url"), ("embedding", "model"),
    ("llm", "provider"), ("llm", "base_url"), ("llm", "model"),
    ("rerank", "provider"), ("rerank", "base_url"), ("rerank", "model"),
    ("vault", "default_namespace"), ("vault", "sessions_namespace"), ("vault", "review"),
)


@dataclass(frozen=True)
class Refusal:
    path: str
    why: str
    commit: str  # the last commit of the remote's branch that touched the path
    setting: str | None = None  # "[section] key" for a guarded setting

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def merge_base(root: Path, upstream: str) -> str:
    out = run_git(root, "merge-base", "HEAD", upstream, check=False).decode().strip()
    return out or EMPTY_TREE


def _changes(root: Path, base: str, upstream: str) -> list[tuple[str, str, str]]:
    """(path, new mode, status letter) of every file the remote changed since `base`."""
    raw = run_git(root, "diff", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-ext-diff",
                  "--no-textconv", base, upstream)
    fields = raw.decode("utf-8", "surrogateescape").split("\x00")
    out = []
    i = 0
    while i + 1 < len(fields):
        meta, path = fields[i], fields[i + 1]
        i += 2
        parts = meta.lstrip(":").split()
        if len(parts) >= 5:
            out.append((path, parts[1], parts[4][:1]))
    return out


def _tracked(root: Path, paths: list[str]) -> set[str]:
    if not paths:
        return set()
    raw = run_git(root, "ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD", "--",
                  *paths, check=False)
    return {p for p in raw.decode("utf-8", "surrogateescape").split("\x00") if p}


def _ignored_here(root: Path, paths: list[str]) -> set[str]:
    """The paths this vault's ignore rules exclude (its own .gitignore files, not the
    remote's: a remote cannot un-ignore what this machine keeps to itself)."""
    if not paths:
        return set()
    raw = run_git(root, "check-ignore", "--no-index", "-z", "--stdin",
                  data="\x00".join(paths).encode("utf-8", "surrogateescape"), check=False)
    return {p for p in raw.decode("utf-8", "surrogateescape").split("\x00") if p}


def _last_commit(root: Path, upstream: str, path: str) -> str:
    return run_git(root, "log", "-1", "--format=%H", upstream, "--", path,
                   check=False).decode().strip()


def _toml_at(root: Path, rev: str) -> dict[str, Any]:
    raw = run_git(root, "show", f"{rev}:{CONFIG_FILE}", check=False)
    try:
        data = tomllib.loads(raw.decode("utf-8", "replace"))
    except (tomllib.TOMLDecodeError, RecursionError):
        return {"\x00unreadable": True}
    return data if isinstance(data, dict) else {}


def _setting(data: dict[str, Any], section: str, key: str) -> Any:
    sec = data.get(section)
    return sec.get(key) if isinstance(sec, dict) else None


def guarded_changes(root: Path, base: str, upstream: str) -> list[str]:
    """`[section] key: old → new` for each guarded setting the remote changed since `base`."""
    before, after = _toml_at(root, base), _toml_at(root, upstream)
    if "\x00unreadable" in after and "\x00unreadable" not in before:
        return [f"{CONFIG_FILE} no longer parses"]
    out = []
    for section, key in GUARDED:
        old, new = _setting(before, section, key), _setting(after, section, key)
        if old != new:
            out.append(f"[{section}] {key}: {old!r} → {new!r}")
    return out


def vet(root: Path, upstream: str, *, accept_config: bool = False) -> list[Refusal]:
    """Everything the merge of `upstream` would bring in that this machine refuses."""
    base = merge_base(root, upstream)
    changes = _changes(root, base, upstream)
    live = [p for p, mode, status in changes if status != "D"]
    tracked = _tracked(root, live)
    ignored = _ignored_here(root, live)
    out: list[Refusal] = []
    for path, mode, status in changes:
        if status == "D":
            continue
        first = path.split("/", 1)[0]
        why = None
        if first in MACHINE_LOCAL:
            why = f"{first}/ is this machine's own (artifacts, caches, discovery files)"
        elif mode == SYMLINK:
            why = "a symbolic link (it could point anywhere on this machine)"
        elif mode == GITLINK:
            why = "a submodule (another repository)"
        elif path.rsplit("/", 1)[-1] == CONFIG_FILE and path != CONFIG_FILE:
            why = (f"another vault's {CONFIG_FILE}: alaya run from that folder would take it "
                   "for its vault")
        elif path in ignored and path not in tracked:
            why = "ignored by this vault's .gitignore: machine-local, never taken from a remote"
        if why:
            out.append(Refusal(path, why, _last_commit(root, upstream, path)))
    if not accept_config and any(p == CONFIG_FILE for p, _m, s in changes):
        commit = _last_commit(root, upstream, CONFIG_FILE)
        for change in guarded_changes(root, base, upstream):
            out.append(Refusal(CONFIG_FILE, f"changes {change}", commit,
                               setting=change.split(":", 1)[0]))
    return out


def describe(refusals: list[Refusal], upstream: str) -> str:
    lines = [f"{r.path} ({r.commit[:10] or '?'}): {r.why}" for r in refusals[:20]]
    more = len(refusals) - len(lines)
    return (f"{upstream} brings what this machine does not take from a remote — nothing was "
            "merged:\n  " + "\n  ".join(lines) + (f"\n  … and {more} more" if more > 0 else ""))


def fix_for(refusals: list[Refusal]) -> str:
    if refusals and all(r.setting for r in refusals):
        return ("read the change (git diff HEAD...FETCH_HEAD -- alaya.toml); if you trust it, "
                "run `alaya sync --accept-config`")
    return ("ask whoever pushed it to remove those paths from the branch (git rm -r --cached "
            "PATH, commit, push) — a symlink or a file under .alaya/ is never merged; "
            "`alaya doctor` lists them again")


__all__ = ["GUARDED", "MACHINE_LOCAL", "Refusal", "describe", "fix_for", "guarded_changes",
           "merge_base", "vet"]
