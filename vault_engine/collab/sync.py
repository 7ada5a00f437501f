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

from collections.abc import Sequence
from dataclasses import dataclass, field

from vault_engine.errors import AlayaError, GitError, UsageError, refused_write
from vault_engine.primitives import now
from vault_engine.store import blocks
from vault_engine.store.history import _repo, identity_env
from vault_engine.store.merge import register_driver
from vault_engine.store.namespaces import SHARED
from vault_engine.store.vault import Vault

from .collisions import Collision
from .incoming import Refusal

ATTRIBUTES = ".gitattributes"
ATTR_LINE = "*.md merge=alaya"
CONTRADICTIONS = "reports/contradictions.md"  # the shared one; store/reports.py


class SyncError(AlayaError):
    pass


@dataclass
class SyncResult:
    remote: str
    branch: str
    action: str  # up-to-date | fast-forward | merged | rebased | pushed-only | refused
    pulled: int = 0  # commits that came in
    pushed: bool = False
    merge_commit: str | None = None
    conflicts: list[str] = field(default_factory=list)  # "path cN": contested by the merge
    commits: list[str] = field(default_factory=list)
    # "path key": a frontmatter value both machines changed; ours stayed, theirs is kept as
    # `<key>_theirs` until a person picks one
    scalar_conflicts: list[str] = field(default_factory=list)
    # what the remote brought that this machine does not take (collab/incoming.py)
    refused: list[dict[str, object]] = field(default_factory=list)
    # what a sync killed earlier left, and what was done about it (collab/recovery.py)
    recovered: list[str] = field(default_factory=list)
    # notes of two namespaces at one path, kept as two notes (collab/collisions.py)
    collisions: list[dict[str, str]] = field(default_factory=list)


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
                                "driver (*.md merge=alaya)", vault.config.git_identity(),
                                agent=vault.caller.agent)


def _dirty(repo: object) -> list[str]:
    """`XY path` of every tracked file that differs from HEAD (git status --porcelain)."""
    out = repo.git.status("--porcelain", "--untracked-files=no")  # type: ignore[attr-defined]
    return [line for line in out.splitlines() if line.strip()]


def _refuse_dirty(dirty: list[str]) -> UsageError:
    """Name each uncommitted change and how to settle it — never a blanket `commit -a`, which
    would commit the deletion of a note someone did not mean to delete."""
    gone = [line[3:] for line in dirty if "D" in line[:2]]
    changed = [line[3:] for line in dirty if "D" not in line[:2]]
    parts = []
    if changed:
        parts.append(f"changed: {', '.join(changed[:5])}" + (" …" if len(changed) > 5 else ""))
    if gone:
        parts.append(f"missing: {', '.join(gone[:5])}" + (" …" if len(gone) > 5 else ""))
    fixes = []
    if changed:
        fixes.append("commit what you changed (git add FILE … && git commit)")
    if gone:
        fixes.append("bring back a missing note (git restore FILE), or record a deletion you "
                     "meant (git rm FILE && git commit)")
    return UsageError(f"{len(dirty)} uncommitted change(s) — " + "; ".join(parts),
                      fix="; ".join(fixes) + "; sync never sweeps uncommitted work into a merge")


def sync(vault: Vault, *, remote: str = "origin", branch: str | None = None,
         push: bool = True, rebase: bool = False, accept_config: bool = False) -> SyncResult:
    import git

    from vault_engine.store import repo_recovery as recovery

    from . import collisions, incoming

    repo = _repo(vault.root)
    names = [r.name for r in repo.remotes]
    with vault.locked():
        result = SyncResult(remote=remote, branch=branch or "", action="up-to-date")
        journal = recovery.pending(vault.state_dir)
        if journal is not None:  # a sync that was killed: finish cleaning up after it
            result.recovered = recovery.recover(vault.root, vault.state_dir, journal)
            if any(line.startswith("left ") for line in result.recovered):
                raise SyncError("a sync was interrupted and git's lock files are older than "
                                "it: " + "; ".join(result.recovered),
                                fix="if no git command is running, remove the lock file "
                                    "named, then run `alaya sync` again")
        if not recovery.config_intact(vault.root) or (remote not in names
                                                       and recovery.recorded_remotes(
                                                           vault.state_dir).get(remote)):
            result.recovered += recovery.restore_config(vault.root, vault.state_dir)
            names = [r.name for r in _repo(vault.root).remotes]
        if remote not in names:
            raise UsageError(f"the vault has no git remote {remote!r}"
                             + (f" (it has: {', '.join(names)})" if names else ""),
                             fix=f"git -C {vault.root} remote add {remote} <url>  (any git "
                                 "remote: a bare repository, GitHub, a server over ssh)")
        dirty = _dirty(repo)
        if dirty:
            raise _refuse_dirty(dirty)
        ensure_merge_driver(vault)
        recovery.remember_remotes(vault.root, vault.state_dir)
        branch = branch or repo.active_branch.name
        result.branch = branch
        head = str(repo.head.commit.hexsha) if repo.head.is_valid() else ""
        entry = recovery.begin(vault.state_dir, head=head, remote=remote, branch=branch)
        env = identity_env(repo, vault.config.git_identity())
        git_dir = recovery.git_dir(vault.root)
        with repo.git.custom_environment(**env):
            try:
                repo.git.fetch(remote)
            except git.GitCommandError as exc:
                recovery.end(vault.state_dir)
                raise SyncError(f"git fetch {remote} failed: {exc.stderr.strip()}",
                                fix="check the remote's URL and your access to it") from None
            upstream = f"{remote}/{branch}"
            has_upstream = bool(repo.git.branch("-r", "--list", upstream).strip())
            if has_upstream:
                target = repo.git.rev_parse(upstream).strip()
                recovery.note_target(vault.state_dir, entry, target)
                behind = int(repo.git.rev_list("--count", f"HEAD..{upstream}"))
                ahead = int(repo.git.rev_list("--count", f"{upstream}..HEAD"))
                result.pulled = behind
                if behind:
                    refused = incoming.vet(vault.root, upstream, accept_config=accept_config)
                    _record_refusal(vault, refused, upstream, target)
                    if refused:
                        recovery.end(vault.state_dir)
                        raise SyncError(incoming.describe(refused, upstream),
                                        fix=incoming.fix_for(refused))
                try:
                    if behind and not ahead:
                        repo.git.merge("--ff-only", upstream)
                        result.action = "fast-forward"
                    elif behind and ahead:
                        collisions.prepare(git_dir, target)
                        _combine(repo, upstream, rebase, result)
                except (git.GitCommandError, SyncError) as exc:
                    status = getattr(exc, "status", None)
                    if isinstance(status, int) and status < 0:
                        raise  # git was killed by a signal (this sync too, most likely): the
                        # journal stays, and the next sync or `doctor --fix` cleans up
                    # git stopped half-way (a full disk, a file it could not write): what it
                    # checked out is undone now, as after a kill, so the next sync starts clean
                    disk = refused_write(exc, vault.root / ".git")  # asked while it is full
                    cleaned = recovery.recover(vault.root, vault.state_dir,
                                               recovery.pending(vault.state_dir) or entry)
                    if disk is not None:
                        raise disk from None
                    raise _stopped(exc, upstream, rebase, cleaned) from None
            placed = collisions.place(vault, git_dir)
            result.collisions = [vars(c) for c in placed]
            if push:
                result.pushed = _push(repo, remote, branch, has_upstream)
                if result.pushed and result.action == "up-to-date":
                    result.action = "pushed-only" if not result.pulled else result.action
        result.conflicts = _contested_by_sync(vault)
        result.scalar_conflicts = _scalar_conflicts(vault)
        if result.conflicts or result.scalar_conflicts or placed:
            result.commits += _list_conflicts(vault, result.conflicts, result.scalar_conflicts,
                                              placed)
            if result.commits and push:
                with repo.git.custom_environment(**env):
                    _push(repo, remote, branch, True)
        recovery.end(vault.state_dir)
    return result


def _record_refusal(vault: Vault, refused: Sequence[Refusal], upstream: str,
                    target: str) -> None:
    """What the last sync refused, for `alaya doctor` (removed once a sync takes the branch)."""
    import json

    from vault_engine.store.atomic import atomic_write
    from vault_engine.store.repo_recovery import REFUSED

    path = vault.state_dir / REFUSED
    if not refused:
        path.unlink(missing_ok=True)
        return
    data = {"upstream": upstream, "commit": target, "when": now().isoformat(),
            "refused": [r.to_dict() for r in refused]}
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))


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
    except git.GitCommandError:
        conflicted = g.diff("--name-only", "--diff-filter=U").splitlines()
        try:
            g.rebase("--abort") if rebase else g.merge("--abort")
        except git.GitCommandError:
            pass
        if not conflicted:
            raise  # git stopped for another reason (`_stopped` says which)
        raise SyncError(f"the {'rebase' if rebase else 'merge'} with {upstream} left "
                        f"conflicts in: {', '.join(conflicted)}",
                        fix="nothing was changed locally; merge these files by hand "
                            f"(git merge {upstream}), commit, and sync again") from None


def _stopped(exc: Exception, upstream: str, rebase: bool, cleaned: list[str]) -> SyncError:
    """The one-line error for a merge, rebase or fast-forward git did not finish. git's last
    `error:`/`fatal:` line says why (the CLI turns a disk that refused into its own refusal,
    exit 3); the working tree is already back at HEAD (`cleaned` says what was undone)."""
    if isinstance(exc, SyncError):
        return exc
    said = [line.strip() for line in str(getattr(exc, "stderr", "") or exc).splitlines()
            if line.strip().lower().startswith(("error:", "fatal:"))]
    why = said[0] if said else str(exc).strip().splitlines()[-1]
    what = "rebase onto" if rebase else "merge of"
    undone = f"; undone: {len(cleaned)} step(s)" if cleaned else ""
    return SyncError(f"git stopped the {what} {upstream}: {why}{undone}",
                     fix="nothing of yours was changed; fix what git names (free space on a "
                         "full disk), then run `alaya sync` again")


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


INTRO = ("Claims that contradict each other and need a person's decision. Resolve one by "
         "setting the wrong claim's status to `refuted` or `superseded`.")


def _list_conflicts(vault: Vault, conflicts: list[str], scalars: list[str] | None = None,
                    placed: Sequence[Collision] | None = None) -> list[str]:
    """Name every claim the merge marked contested, every frontmatter value both machines
    changed, and every pair of notes kept apart, in the contradictions report of each note's
    own audience: `reports/contradictions.md` for shared notes (every agent reads it), a
    namespace's own report for its notes (store/reports.py). A line names only notes its
    report's readers may read. Returns the commits made."""
    from vault_engine.store.namespaces import Caller

    index = vault.as_caller(Caller.owner()).load()
    today = now().date()
    lines: dict[str, list[str]] = {}  # namespace → new lines

    def add(namespace: str, line: str) -> None:
        lines.setdefault(namespace, []).append(line)

    by_note: dict[str, list[str]] = {}
    for item in conflicts:
        rel, cid = item.rsplit(" ", 1)
        by_note.setdefault(rel, []).append(cid)
    for rel, ids in by_note.items():
        note = index.by_path(rel)
        if note is None:
            continue
        claims = {c.id: c for c in getattr(note, "claims", ())}
        texts = " vs ".join(f"{i} “{claims[i].text}”" for i in ids if i in claims)
        add(note.namespace or SHARED,
            f"- {index.link(note)} {texts} (edited on two machines; found {today})")
    for item in scalars or []:
        rel, key = item.rsplit(" ", 1)
        note = index.by_path(rel)
        if note is None:
            continue
        ours, theirs = note.meta.get(key), note.meta.get(f"{key}_theirs")
        add(note.namespace or SHARED,
            f"- {index.link(note)} `{key}`: “{ours}” vs “{theirs}” (`{key}_theirs`; edited on "
            f"two machines; found {today}) — keep one value and delete the other key")
    for c in placed or []:
        kept, moved = index.by_path(c.path), index.by_path(c.moved_to)
        if kept is None or moved is None:
            continue
        for note, other in ((kept, moved), (moved, kept)):
            ns = note.namespace or SHARED
            readable = (other.namespace or SHARED) in (SHARED, ns)
            beside = (f"beside {index.link(other)}" if readable
                      else "beside a note of another namespace, which was kept apart")
            add(ns, f"- {index.link(note)} was at {c.path} {beside} (created on two machines; "
                    f"found {today}) — two notes now; merge them by hand if they are one")
    shas = []
    for namespace, new_lines in sorted(lines.items()):
        sha = _write_report(vault, namespace, new_lines, len(conflicts), len(scalars or []))
        if sha:
            shas.append(sha)
    return shas


def _write_report(vault: Vault, namespace: str, new_lines: list[str], n_claims: int,
                  n_values: int) -> str | None:
    from vault_engine.store.namespaces import Caller
    from vault_engine.store.reports import report_head, report_path

    rel = report_path("contradictions", namespace)
    path = vault.root / rel
    old = path.read_text(encoding="utf-8") if path.exists() else (
        report_head("contradictions", "Contradictions", namespace, INTRO))
    current = blocks.read_block(old, "contradictions", rel) or ""
    lines = [x for x in current.splitlines() if x.strip()]
    seen = {x.split(" (")[0] for x in lines}
    for line in new_lines:
        if line.split(" (")[0] not in seen:
            lines.append(line)
            seen.add(line.split(" (")[0])
    new = blocks.replace_block(old, "contradictions", "\n".join(lines) + "\n", path=rel)
    if new == old:
        return None
    owner = vault.as_caller(Caller.owner())
    with owner.transaction(f"sync: {n_claims} claim(s) and {n_values} value(s) edited on two "
                           f"machines, listed in {rel}") as tx:
        if path.exists():
            tx.write(rel, new, owner.current_checksum(rel))
        else:
            tx.create(rel, new)
    return tx.sha


__all__ = ["GitError", "SyncError", "SyncResult", "ensure_merge_driver", "sync"]
