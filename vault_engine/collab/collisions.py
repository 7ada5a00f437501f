"""Two notes at one path from different namespaces, after a sync: kept as two notes.

Two machines that each created a note at the same path — one in `shared`, one in an agent's
namespace, or in two agents' — must not be merged into one: that would show one namespace's
text to the other's readers, and lose a note on both machines. The merge driver
(store/merge.py) keeps ours at the path and sets theirs apart under the git dir; after the
merge this module places it:

- the `shared` note keeps the path (every reader already sees it there); with none shared,
  the note the merge kept stays;
- the other is written beside it as `<name> (<its namespace>).md` (a counter after it if that
  is taken) — a name made only from the moved note's own path and namespace;
- both are committed in one commit, as a person's text where the moved note was (authorship:
  the `sync-apart` command, like `import`, copies a note without writing it);
- the sync output names both (the one who syncs is this machine's owner), and the report
  each note's readers see says what happened — `reports/contradictions.md` for a shared note
  (never naming the other), the namespace's own `reports/@<namespace>/contradictions.md` for
  a private one (linking both, since its readers may read `shared` too).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from vault_engine.store.merge import APART
from vault_engine.store.namespaces import SHARED, namespace_of_text

COMMAND = "sync-apart"
TARGET = "target"  # the remote commit the set-apart notes came from


@dataclass
class Collision:
    path: str  # where both were
    kept: str  # the namespace that kept the path
    moved: str  # the namespace whose note moved
    moved_to: str  # its new path

    def line(self) -> str:
        return (f"{self.path}: notes of two namespaces ({self.kept}, {self.moved}) — both kept, "
                f"{self.moved}'s now at {self.moved_to}")


def apart_dir(git_dir: Path) -> Path:
    return git_dir / APART


def prepare(git_dir: Path, target: str) -> None:
    """Before a merge: clear what an older merge set apart, note which commit is merged."""
    folder = apart_dir(git_dir)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    (folder.parent / TARGET).write_text(target, encoding="utf-8")


def set_apart(git_dir: Path) -> list[tuple[str, str]]:
    """(path, their text) the last merge set apart."""
    folder = apart_dir(git_dir)
    if not folder.is_dir():
        return []
    out = []
    for full in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = full.relative_to(folder).as_posix()
        out.append((rel, full.read_text(encoding="utf-8")))
    return out


def merged_target(root: Path, git_dir: Path) -> bool:
    """Whether HEAD now contains the commit the set-apart notes came from (the merge was
    committed); otherwise they belong to a merge that never happened."""
    try:
        target = (git_dir / "alaya-sync" / TARGET).read_text(encoding="utf-8").strip()
    except OSError:
        return False
    if not target:
        return False
    import subprocess

    return subprocess.run(["git", "merge-base", "--is-ancestor", target, "HEAD"], cwd=root,
                          capture_output=True).returncode == 0


def _beside(root: Path, rel: str, namespace: str) -> str:
    p = PurePosixPath(rel)
    label = "".join(c if c.isalnum() or c in "-_." else "-" for c in namespace) or SHARED
    for n in range(1, 1000):
        name = f"{p.stem} ({label}){'' if n == 1 else f' {n}'}{p.suffix}"
        candidate = str(p.with_name(name))
        if not (root / candidate).exists():
            return candidate
    raise RuntimeError(f"no free name beside {rel}")


def place(vault: object, git_dir: Path) -> list[Collision]:
    """Write every set-apart note beside the one the merge kept, in one commit."""
    from vault_engine.store.history import as_command
    from vault_engine.store.namespaces import Caller

    items = set_apart(git_dir)
    if not items:
        return []
    root: Path = vault.root  # type: ignore[attr-defined]
    if not merged_target(root, git_dir):
        shutil.rmtree(git_dir / "alaya-sync", ignore_errors=True)
        return []
    owner = vault.as_caller(Caller.owner())  # type: ignore[attr-defined]
    found: list[Collision] = []
    writes: list[tuple[str, str, str | None]] = []  # (path, text, expected checksum or None)
    for rel, theirs in items:
        full = root / rel
        ours = full.read_text(encoding="utf-8") if full.exists() else None
        ns_t = namespace_of_text(theirs, rel) or SHARED
        if ours is None:
            writes.append((rel, theirs, None))
            continue
        ns_o = namespace_of_text(ours, rel) or SHARED
        if ns_o == ns_t:
            continue  # the same namespace after all: the merge already joined them
        if ns_t == SHARED and ns_o != SHARED:  # the shared note keeps the path
            moved_to = _beside(root, rel, ns_o)
            writes += [(moved_to, ours, None), (rel, theirs, owner.current_checksum(rel))]
            found.append(Collision(rel, ns_t, ns_o, moved_to))
        else:
            moved_to = _beside(root, rel, ns_t)
            writes.append((moved_to, theirs, None))
            found.append(Collision(rel, ns_o, ns_t, moved_to))
    message = "sync: notes of two namespaces at one path, kept apart\n\n" + "\n".join(
        c.line() for c in found)
    with as_command(COMMAND), owner.transaction(message) as tx:
        for rel, text, expected in writes:
            if expected is None:
                tx.create(rel, text)
            else:
                tx.write(rel, text, expected)
    shutil.rmtree(git_dir / "alaya-sync", ignore_errors=True)
    return found


def clear(git_dir: Path) -> None:
    shutil.rmtree(git_dir / "alaya-sync", ignore_errors=True)


__all__ = ["COMMAND", "Collision", "clear", "merged_target", "place", "prepare"]
