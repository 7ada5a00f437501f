"""A review queue, the git way: what agents write can wait on a proposal branch.

With `[vault] review = true` in alaya.toml (or `--propose` on distill, new, link, introspect),
writes go to the branch `alaya/proposals`, checked out as a git worktree under
`.alaya/review/worktree` — the main branch and the files a person has open are not touched.
Before each proposal the branch takes in what the main branch gained since, so proposals are
always made against current knowledge.

- `pending()` lists what the branch would change: one item per note, with its diff and the
  commits that made it;
- `approve()` merges the branch into the main branch (a merge commit: `git log` shows it);
  approving some items only brings those files over in one commit;
- `reject()` drops everything (the branch is reset to the main branch — no trace there) or
  some items (the branch gets a commit putting them back as on the main branch);
- `edit()` rewrites a proposed note on the branch before it is approved.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_engine.errors import AlayaError, NotFoundError, UsageError, refused_write
from vault_engine.store.history import _repo, identity_env
from vault_engine.store.vault import Vault

BRANCH = "alaya/proposals"
WORKTREE = "review/worktree"  # under .alaya/


class ReviewError(AlayaError):
    pass


@dataclass
class Item:
    path: str
    status: str  # added | modified | deleted
    title: str
    id: str | None
    diff: str
    commits: list[str] = field(default_factory=list)
    namespace: str = "shared"


def _main_branch(vault: Vault) -> str:
    repo = _repo(vault.root)
    try:
        return repo.active_branch.name
    except TypeError:
        raise ReviewError("the vault's repository is on a detached HEAD",
                          fix="git checkout main") from None


def worktree_path(vault: Vault) -> Path:
    return vault.state_dir / WORKTREE


def _branch_exists(repo: Any) -> bool:
    return bool(repo.git.branch("--list", BRANCH).strip())


def proposal_vault(vault: Vault) -> Vault:
    """The vault as seen on the proposal branch (created from the main branch on first use;
    brought up to date with the main branch before every use)."""
    import git

    repo = _repo(vault.root)
    main = _main_branch(vault)
    path = worktree_path(vault)
    env = identity_env(repo, vault.config.git_identity())
    with repo.git.custom_environment(**env):
        if not _branch_exists(repo):
            repo.git.branch(BRANCH, main)
        if not (path / ".git").exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            repo.git.worktree("prune")
            repo.git.worktree("add", "--force", str(path), BRANCH)
        wt = git.Repo(path)
        with wt.git.custom_environment(**env):
            try:
                wt.git.merge("--no-edit", "-q", main)
            except git.GitCommandError as exc:
                try:
                    wt.git.merge("--abort")
                except git.GitCommandError:
                    pass
                raise ReviewError(f"the proposals no longer merge with {main}: "
                                  f"{exc.stderr.strip()}",
                                  fix="review them now (`alaya review`): approve or reject "
                                      "the conflicting items") from None
    from vault_engine.store.merge import register_driver

    register_driver(vault.root)
    return Vault.open(path, caller=vault.caller)


def share_embedding_cache(vault: Vault, proposals: Vault) -> None:
    """Start the proposal worktree's embedding cache from the vault's, so compiling it embeds
    only what the proposals added."""
    import shutil

    from vault_engine import artifacts as A

    src, dest = vault.state_dir / A.EMBED_CACHE, proposals.state_dir / A.EMBED_CACHE
    if src.exists() and not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)


def _namespace(root: Path, path: str) -> str:
    """The namespace of a proposed file: its own for a note, its session note's for a raw
    session file beside it; unknown (unparseable) counts as private to no one: `?`."""
    from vault_engine.store.namespaces import namespace_of_text

    note = path if path.endswith(".md") else None
    if note is None:
        folder, _, name = path.rpartition("/")
        stem = name.split(".", 1)[0]
        note = f"{folder}/{stem}.md" if folder else f"{stem}.md"
    try:
        text = (root / note).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "shared"
    return namespace_of_text(text, note) or "?"


def pending(vault: Vault) -> list[Item]:
    """What the proposal branch would change that the vault's caller may see."""
    return [i for i in _all_pending(vault) if vault.caller.may_read(i.namespace)]


def _all_pending(vault: Vault) -> list[Item]:
    repo = _repo(vault.root)
    if not _branch_exists(repo):
        return []
    main = _main_branch(vault)
    rng = f"{main}...{BRANCH}"
    names = repo.git.diff("--name-status", rng).splitlines()
    items = []
    proposals = worktree_path(vault)
    for line in names:
        parts = line.split("\t")
        code, path = parts[0], parts[-1]
        status = {"A": "added", "D": "deleted"}.get(code[:1], "modified")
        title, note_id = path, None
        source = proposals / path if status != "deleted" else vault.root / path
        if path.endswith(".md") and source.exists():
            try:
                from vault_engine.store.vault import parse_note

                note = parse_note(path, source.read_text(encoding="utf-8"))
                title, note_id = note.title, note.id
            except (AlayaError, OSError, UnicodeDecodeError):
                pass
        commits = repo.git.log("--format=%h %s", f"{main}..{BRANCH}", "--", path).splitlines()
        root = proposals if status != "deleted" else vault.root
        items.append(Item(path=path, status=status, title=title, id=note_id,
                          diff=repo.git.diff(rng, "--", path), commits=commits,
                          namespace=_namespace(root, path)))
    return items


def select_items(items: list[Item], refs: list[str], hidden: list[Item] | None = None,
                 caller: Any = None) -> list[Item]:
    if not refs:
        return items
    out = []
    for ref in refs:
        match = [i for i in items if ref in (i.path, i.id, i.title)]
        if not match:  # another agent's proposal is not found, exactly as a missing one
            raise NotFoundError(f"no pending change matches {ref!r}",
                                fix="list them with `alaya review`")
        out += [m for m in match if m not in out]
    return out


@dataclass
class _Decision:
    """What approve and reject both start from: the pending items, the chosen ones, git."""

    items: list[Item]
    chosen: list[Item]
    repo: Any
    main: str
    env: dict[str, str]


def _decide(vault: Vault, refs: list[str] | None) -> _Decision | None:
    """The items the caller may decide on. Another agent's proposals are left pending: the
    decision then goes item by item, never as a merge of the whole branch."""
    every = _all_pending(vault)
    items = [i for i in every if vault.caller.may_write(i.namespace)]
    hidden = [i for i in every if i not in items]
    if not items:
        if refs and hidden:
            select_items([], refs, hidden, vault.caller)
        return None
    repo = _repo(vault.root)
    chosen = select_items(items, refs or [], hidden, vault.caller)
    if hidden:
        items = items + hidden  # so "all of them" is never true: item by item
    return _Decision(items, chosen, repo, _main_branch(vault),
                     identity_env(repo, vault.config.git_identity()))


def approve(vault: Vault, refs: list[str] | None = None) -> tuple[str | None, list[Item]]:
    """Merge the proposals (or the chosen items) into the main branch."""
    import git

    d = _decide(vault, refs)
    if d is None:
        return None, []
    items, chosen, repo, main = d.items, d.chosen, d.repo, d.main
    with vault.locked(), repo.git.custom_environment(**d.env):
        head = repo.head.commit.hexsha
        before = {i.path: _bytes(vault.root / i.path) for i in items}
        try:
            if len(chosen) == len(items):
                repo.git.merge("--no-ff", "--no-edit", "-m",
                               f"review: approve {len(items)} change(s) from {BRANCH}\n\n"
                               + "\n".join(f"- {i.status}: {i.path}" for i in items), BRANCH)
            else:
                for i in chosen:
                    if i.status == "deleted":
                        repo.git.rm("-q", "--", i.path)
                    else:
                        repo.git.checkout(BRANCH, "--", i.path)
                repo.git.commit("--no-verify", "-q", "-m",
                                f"review: approve {len(chosen)} of {len(items)} change(s) from "
                                f"{BRANCH}\n\n" + "\n".join(f"- {i.status}: {i.path}"
                                                            for i in chosen))
        except git.GitCommandError as exc:
            refused = refused_write(exc, vault.root / ".git")  # a full or read-only disk
            if refused is not None:
                if repo.head.commit.hexsha != head:
                    return str(repo.head.commit.hexsha), chosen  # committed: only after it failed
                _put_back(repo, vault.root, before)  # the merge left its files: as before
                raise refused from None
            try:
                repo.git.merge("--abort")
            except git.GitCommandError:
                pass
            raise ReviewError(f"approving into {main} failed: {exc.stderr.strip()}",
                              fix="commit or stash your own edits to these files first") from None
        return str(repo.head.commit.hexsha), chosen


def _bytes(full: Path) -> bytes | None:
    try:
        return full.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None


def _put_back(repo: Any, root: Path, before: dict[str, bytes | None]) -> None:
    """A merge the disk refused half-way: the files it added removed first (that frees
    room), the merge aborted (again: the first abort may have had no room either) or its
    state dropped, the index entries as HEAD has them, each proposed file as it was."""
    import contextlib

    import git

    from vault_engine.store.atomic import atomic_write

    for rel, data in before.items():
        if data is None:
            with contextlib.suppress(OSError):
                (root / rel).unlink(missing_ok=True)
    with contextlib.suppress(git.GitCommandError):
        repo.git.merge("--abort")
    git_dir = Path(repo.git_dir)
    for name in ("MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE"):
        with contextlib.suppress(OSError):
            (git_dir / name).unlink(missing_ok=True)
    with contextlib.suppress(git.GitCommandError):
        repo.git.reset("-q", "HEAD", "--", *before)
    for rel, data in before.items():
        with contextlib.suppress(OSError, AlayaError):
            if data is None:
                (root / rel).unlink(missing_ok=True)
            elif _bytes(root / rel) != data:
                atomic_write(root / rel, data)


def reject(vault: Vault, refs: list[str] | None = None) -> tuple[str | None, list[Item]]:
    """Drop the proposals (or the chosen items). The main branch never sees them."""
    import git

    d = _decide(vault, refs)
    if d is None:
        return None, []
    items, chosen, main = d.items, d.chosen, d.main
    path = worktree_path(vault)
    if not (path / ".git").exists():
        proposal_vault(vault)
    wt = git.Repo(path)
    with wt.git.custom_environment(**d.env):
        if len(chosen) == len(items):
            wt.git.reset("--hard", "-q", main)
            return None, chosen
        for i in chosen:
            if i.status == "added":
                wt.git.rm("-q", "--", i.path)
            else:
                wt.git.checkout(main, "--", i.path)
        wt.git.commit("--no-verify", "-q", "-m", "review: reject "
                      + ", ".join(i.path for i in chosen))
        return str(wt.head.commit.hexsha), chosen


def edit(vault: Vault, ref: str, text: str) -> str | None:
    """Replace a proposed note's text on the proposal branch (one commit there)."""
    every = _all_pending(vault)
    mine = [i for i in every if vault.caller.may_write(i.namespace)]
    items = select_items(mine, [ref], [i for i in every if i not in mine], vault.caller)
    item = items[0]
    if item.status == "deleted":
        raise UsageError(f"{item.path} is proposed for deletion: nothing to edit",
                         fix="approve or reject it")
    pv = proposal_vault(vault)
    with pv.transaction(f"review: edit {item.path}") as tx:
        tx.write(item.path, text, pv.current_checksum(item.path))
    return tx.sha


def as_json(items: list[Item]) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(i.__dict__)) for i in items]


def queue(vault: Vault, proposals: list[Any], message: str) -> str | None:
    """Put maintenance's proposals for a person's notes on the proposal branch, in one
    commit (`alaya review` shows them). Returns the commit, or None when every proposal is
    there already. See vault_engine/store/proposals.py."""
    from vault_engine.primitives import now
    from vault_engine.store.proposals import apply_proposals

    if not proposals:
        return None
    return apply_proposals(proposal_vault(vault), proposals, message, now())
