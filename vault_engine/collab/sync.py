"""`alaya sync`: git is the distributed engine — fetch, merge, push against any git remote.

    fetch <remote> → fast-forward, or merge with a merge commit (or --rebase) → list sync
    conflicts in reports/contradictions.md → (the CLI compiles) → push

Notes merge through the `alaya` merge driver (vault_engine/store/merge.py), registered in the
repository's local git config and in the versioned `.gitattributes` (`*.md merge=alaya`), so
two machines that added cards, links and claims to the same card end with both sets. A merge
that still conflicts (a file the driver cannot read, a non-note file) is aborted: the local
branch is left exactly as it was and the files are named. Uncommitted changes are never swept
in: sync refuses to start until they are committed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vault_engine.errors import AlayaError, GitError, UsageError
from vault_engine.primitives import now
from vault_engine.store import blocks
from vault_engine.store.history import _repo, identity_env
from vault_engine.store.merge import register_driver
from vault_engine.store.vault import Vault

ATTRIBUTES = ".gitattributes"
ATTR_LINE = "*.md merge=alaya"
CONTRADICTIONS = "reports/contradictions.md"


class SyncError(AlayaError):
    pass


@dataclass
class SyncResult:
    remote: str
    branch: str
    action: str  # up-to-date | fast-forward | merged | rebased | pushed-only
    pulled: int = 0  # commits that came in
    pushed: bool = False
    merge_commit: str | None = None
    conflicts: list[str] = field(default_factory=list)  # "path cN": contested by the merge
    commits: list[str] = field(default_factory=list)
    # "path key": a frontmatter value both machines changed; ours stayed, theirs is kept as
    # `<key>_theirs` until a person picks one
    scalar_conflicts: list[str] = field(default_factory=list)


def ensure_merge_driver(vault: Vault, *, commit: bool = True) -> str | None:
    """Register the driver in .git/config (local, per machine) and `.gitattributes`
    (versioned). Returns the commit that added the attributes line, if one was needed."""
    register_driver(vault.root)
    path = vault.root / ATTRIBUTES
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if ATTR_LINE in text.splitlines():
        return None
    new = text + ("" if not text or text.endswith("\n") else "\n") + ATTR_LINE + "\n"
    from vault_engine.store import history

    path.write_text(new, encoding="utf-8")
    if not commit:
        return None
    return history.commit_paths(vault.root, [ATTRIBUTES], "sync: merge notes with the alaya "
                                "driver (*.md merge=alaya)", vault.config.git_identity())


def _dirty(repo: object) -> list[str]:
    out = repo.git.status("--porcelain", "--untracked-files=no")  # type: ignore[attr-defined]
    return [line[3:] for line in out.splitlines() if line.strip()]


def sync(vault: Vault, *, remote: str = "origin", branch: str | None = None,
         push: bool = True, rebase: bool = False) -> SyncResult:
    import git

    repo = _repo(vault.root)
    names = [r.name for r in repo.remotes]
    if remote not in names:
        raise UsageError(f"the vault has no git remote {remote!r}"
                         + (f" (it has: {', '.join(names)})" if names else ""),
                         fix=f"git -C {vault.root} remote add {remote} <url>  (any git remote: "
                             "a bare repository, GitHub, a server over ssh)")
    with vault.locked():
        dirty = _dirty(repo)
        if dirty:
            raise UsageError(f"{len(dirty)} uncommitted change(s): " + ", ".join(dirty[:5]),
                             fix="commit them first (git commit -am '…'); sync never sweeps "
                                 "uncommitted work into a merge")
        ensure_merge_driver(vault)
        branch = branch or repo.active_branch.name
        env = identity_env(repo, vault.config.git_identity())
        result = SyncResult(remote=remote, branch=branch, action="up-to-date")
        with repo.git.custom_environment(**env):
            try:
                repo.git.fetch(remote)
            except git.GitCommandError as exc:
                raise SyncError(f"git fetch {remote} failed: {exc.stderr.strip()}",
                                fix="check the remote's URL and your access to it") from None
            upstream = f"{remote}/{branch}"
            has_upstream = bool(repo.git.branch("-r", "--list", upstream).strip())
            if has_upstream:
                behind = int(repo.git.rev_list("--count", f"HEAD..{upstream}"))
                ahead = int(repo.git.rev_list("--count", f"{upstream}..HEAD"))
                result.pulled = behind
                if behind and not ahead:
                    repo.git.merge("--ff-only", upstream)
                    result.action = "fast-forward"
                elif behind and ahead:
                    _combine(repo, upstream, rebase, result)
            if push:
                result.pushed = _push(repo, remote, branch, has_upstream)
                if result.pushed and result.action == "up-to-date":
                    result.action = "pushed-only" if not result.pulled else result.action
        result.conflicts = _contested_by_sync(vault)
        result.scalar_conflicts = _scalar_conflicts(vault)
        if result.conflicts or result.scalar_conflicts:
            sha = _list_conflicts(vault, result.conflicts, result.scalar_conflicts)
            if sha:
                result.commits.append(sha)
                if push:
                    with repo.git.custom_environment(**env):
                        _push(repo, remote, branch, True)
    return result


def _combine(repo: object, upstream: str, rebase: bool, result: SyncResult) -> None:
    import git

    g = repo.git  # type: ignore[attr-defined]
    try:
        if rebase:
            g.rebase(upstream)
            result.action = "rebased"
        else:
            g.merge("--no-ff", "--no-edit", "-m", f"sync: merge {upstream}", upstream)
            result.action = "merged"
            result.merge_commit = str(repo.head.commit.hexsha)  # type: ignore[attr-defined]
    except git.GitCommandError as exc:
        conflicted = g.diff("--name-only", "--diff-filter=U").splitlines()
        try:
            g.rebase("--abort") if rebase else g.merge("--abort")
        except git.GitCommandError:
            pass
        raise SyncError(f"the {'rebase' if rebase else 'merge'} with {upstream} left "
                        f"conflicts in: {', '.join(conflicted) or exc.stderr.strip()}",
                        fix="nothing was changed locally; merge these files by hand "
                            f"(git merge {upstream}), commit, and sync again") from None


def _push(repo: object, remote: str, branch: str, has_upstream: bool) -> bool:
    import git

    g = repo.git  # type: ignore[attr-defined]
    if has_upstream and not int(g.rev_list("--count", f"{remote}/{branch}..HEAD")):
        return False
    try:
        g.push(remote, f"HEAD:refs/heads/{branch}")
    except git.GitCommandError as exc:
        raise SyncError(f"git push {remote} {branch} was refused: {exc.stderr.strip()}",
                        fix="someone pushed meanwhile: run `alaya sync` again") from None
    return True


def _contested_by_sync(vault: Vault) -> list[str]:
    out = []
    for note in vault.load().notes:
        for c in getattr(note, "claims", ()):
            if c.extra.get("conflict") == "sync" and c.status == "contested":
                out.append(f"{note.path} {c.id}")
    return out


def _scalar_conflicts(vault: Vault) -> list[str]:
    """Every `<key>_theirs` the merge driver left: "path key"."""
    out = []
    for note in vault.load().notes:
        for key in note.meta:
            base = str(key)[:-len("_theirs")]
            if str(key).endswith("_theirs") and base and base in note.meta:
                out.append(f"{note.path} {base}")
    return out


def _list_conflicts(vault: Vault, conflicts: list[str],
                    scalars: list[str] | None = None) -> str | None:
    """Name every claim the merge marked contested, and every frontmatter value both machines
    changed, in reports/contradictions.md (shared notes only: every agent reads it)."""
    from vault_engine.store.namespaces import SHARED

    index = vault.load()
    path = vault.root / CONTRADICTIONS
    old = path.read_text(encoding="utf-8") if path.exists() else (
        "---\nid: report-contradictions\ntitle: Contradictions\ntype: report\n---\n"
        "# Contradictions\n\nClaims that contradict each other and need a person's decision. "
        "Resolve one by setting the wrong claim's status to `refuted` or `superseded`.\n\n")
    current = blocks.read_block(old, "contradictions", CONTRADICTIONS) or ""
    lines = [x for x in current.splitlines() if x.strip()]
    by_note: dict[str, list[str]] = {}
    for item in conflicts:
        rel, cid = item.rsplit(" ", 1)
        by_note.setdefault(rel, []).append(cid)
    today = now().date()
    for rel, ids in by_note.items():
        note = index.by_path(rel)
        if note is None or note.namespace != SHARED:
            continue
        claims = {c.id: c for c in getattr(note, "claims", ())}
        texts = " vs ".join(f"{i} “{claims[i].text}”" for i in ids if i in claims)
        line = f"- {index.link(note)} {texts} (edited on two machines; found {today})"
        if line.split(" (edited")[0] not in {x.split(" (")[0] for x in lines}:
            lines.append(line)
    for item in scalars or []:
        rel, key = item.rsplit(" ", 1)
        note = index.by_path(rel)
        if note is None or note.namespace != SHARED:
            continue
        ours, theirs = note.meta.get(key), note.meta.get(f"{key}_theirs")
        line = (f"- [[{note.id or note.stem}]] `{key}`: “{ours}” vs “{theirs}” (`{key}_theirs`; "
                f"edited on two machines; found {today}) — keep one value and delete the "
                f"other key")
        if line.split(" (")[0] not in {x.split(" (")[0] for x in lines}:
            lines.append(line)
    new = blocks.replace_block(old, "contradictions", "\n".join(lines) + "\n",
                               path=CONTRADICTIONS)
    if new == old:
        return None
    with vault.transaction(f"sync: {len(conflicts)} claim(s) and {len(scalars or [])} "
                           "value(s) edited on two machines, listed in "
                           "reports/contradictions.md") as tx:
        if path.exists():
            tx.write(CONTRADICTIONS, new, vault.current_checksum(CONTRADICTIONS))
        else:
            tx.create(CONTRADICTIONS, new)
    return tx.sha


__all__ = ["GitError", "SyncError", "SyncResult", "ensure_merge_driver", "sync"]
