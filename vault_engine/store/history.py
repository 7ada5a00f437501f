"""Git: the vault's version history. Every mutation becomes one reviewable commit.

Commits include only the paths the command wrote (`git commit --only`), so a human's unrelated
staged or unstaged work is never swept into an alaya commit. When git has no user identity the
one from `alaya.toml` (default `alaya <alaya@localhost>`) is used, so commits never fail for
lack of it. Tool commits skip client hooks (`--no-verify`): a pre-commit `alaya lint` guards
what humans commit and must not block the tool from recording what it learned.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vault_engine.errors import GitError

if TYPE_CHECKING:
    import git


def _repo(root: Path) -> git.Repo:
    import git

    try:
        return git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"{root} is not a git repository", fix=f"run `alaya init {root}`") from None


def is_repo(root: Path) -> bool:
    return (root / ".git").exists()


def init_repo(root: Path) -> None:
    import git

    if not is_repo(root):
        git.Repo.init(root, initial_branch="main")


def _has_identity(repo: git.Repo) -> bool:
    import git

    try:
        name = repo.git.config("user.name")
        email = repo.git.config("user.email")
    except git.GitCommandError:
        return False
    return bool(name.strip() and email.strip())


def identity_env(repo: git.Repo, fallback: tuple[str, str]) -> dict[str, str]:
    """Environment for git: the user's identity if configured, else `fallback`."""
    env = {}
    if not _has_identity(repo) and not os.environ.get("GIT_AUTHOR_NAME"):
        name, email = fallback
        env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
               "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    return env


def commit_paths(root: Path, paths: Iterable[str], message: str,
                 identity: tuple[str, str]) -> str | None:
    """Stage and commit exactly `paths` (added, changed or deleted). Returns the sha or None.

    Nothing is committed when none of the paths differ from HEAD.
    """
    import git

    rels = sorted(set(paths))
    if not rels:
        return None
    repo = _repo(root)
    env = identity_env(repo, identity)
    try:
        with repo.git.custom_environment(**env):
            # A file created and deleted within one change never existed for git: leave it
            # out, or pathspecs would not match.
            missing = [r for r in rels if not (root / r).exists()]
            if missing:
                tracked = set(repo.git.ls_files("--", *missing).splitlines())
                rels = [r for r in rels if r not in missing or r in tracked]
                if not rels:
                    return None
            repo.git.add("-A", "--", *rels)
            has_head = repo.head.is_valid()
            changed = (repo.git.diff("--cached", "--name-only", "HEAD", "--", *rels)
                       if has_head else "\n".join(rels))
            if not changed.strip():
                return None
            repo.git.commit("--no-verify", "-q", "-m", message, "--only", "--", *rels)
            return str(repo.head.commit.hexsha)
    except git.GitCommandError as exc:
        raise GitError(f"git commit failed: {exc.stderr.strip() or exc}",
                       fix="run `alaya doctor` to check the repository; the files are written "
                           "and can be committed by hand") from None


def log(root: Path, max_count: int = 20, paths: Sequence[str] = ()) -> list[dict[str, str]]:
    repo = _repo(root)
    if not repo.head.is_valid():
        return []
    out = []
    for c in repo.iter_commits(max_count=max_count, paths=list(paths)):
        out.append({"sha": c.hexsha, "message": str(c.message).strip(),
                    "author": f"{c.author.name} <{c.author.email}>",
                    "date": c.committed_datetime.isoformat()})
    return out


def status(root: Path) -> dict[str, object]:
    """A summary for `doctor`: is it a repo, has it commits, uncommitted files, identity."""
    import git

    try:
        repo = git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return {"repo": False}
    dirty = repo.git.status("--porcelain").splitlines() if repo.head.is_valid() else []
    return {"repo": True, "has_commits": repo.head.is_valid(), "identity": _has_identity(repo),
            "uncommitted": [line[3:] for line in dirty],
            "branch": None if repo.head.is_detached else repo.active_branch.name}
