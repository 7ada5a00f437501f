"""Git: the vault's version history. Every mutation becomes one honest, reviewable commit.

A commit holds only alaya's change: the paths the command wrote, and in a file where a person
has uncommitted edits only alaya's hunk, replayed onto HEAD (the person's edit stays
uncommitted in the working file). Commits are built in a private index, so nothing a person
staged is swept in. The author is alaya (`[git] author` in alaya.toml), the committer the
user (alaya too when git has no identity), and the message ends with `Alaya-Command:` and
`Alaya-Agent:` trailers, so `git log --author=alaya` separates tool from human changes. Tool
commits run no client hooks: a pre-commit `alaya lint` guards what humans commit and must not
block the tool from recording what it learned.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vault_engine.errors import GitError

if TYPE_CHECKING:
    import git

COMMAND_TRAILER = "Alaya-Command"
AGENT_TRAILER = "Alaya-Agent"


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


def configure_repo(root: Path) -> None:
    """Local settings alaya relies on: `core.quotepath false`, so Chinese and other non-ASCII
    paths read plainly in `git status` and `git log` instead of as octal escapes."""
    repo = _repo(root)
    with repo.config_writer() as cfg:
        cfg.set_value("core", "quotepath", "false")


def ignored(root: Path, paths: Sequence[str]) -> list[str]:
    """The `paths` the repository's ignore rules exclude (`git check-ignore`)."""
    import subprocess

    if not paths:
        return []
    proc = subprocess.run(["git", "-c", "core.quotepath=false", "check-ignore", "--stdin", "-z"],
                          cwd=root, input="\x00".join(paths).encode(), capture_output=True)
    return [p for p in proc.stdout.decode("utf-8", errors="replace").split("\x00") if p]


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


_COMMAND: str | None = None


def set_command(name: str | None) -> None:
    """Name the command this process runs (`link`, `introspect` …) for the trailer."""
    global _COMMAND
    _COMMAND = name


def with_trailers(message: str) -> str:
    """`message` plus `Alaya-Command:` and `Alaya-Agent:` trailers (git interpret-trailers form)."""
    words = message.split(":", 1)[0].split()
    command = _COMMAND or (words[0] if words else "alaya")
    agent = os.environ.get("ALAYA_AGENT", "").strip() or "none"
    return f"{message.rstrip()}\n\n{COMMAND_TRAILER}: {command}\n{AGENT_TRAILER}: {agent}\n"


def commit_env(repo: git.Repo, identity: tuple[str, str]) -> dict[str, str]:
    """Author alaya (`identity`), committer the user when git knows them (else alaya too)."""
    name, email = identity
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email}
    if not _has_identity(repo) and not os.environ.get("GIT_COMMITTER_NAME"):
        env.update(GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email)
    return env


def commit_paths(root: Path, paths: Iterable[str], message: str,
                 identity: tuple[str, str], *, before: Mapping[str, bytes | None] | None = None,
                 skipped: list[str] | None = None) -> str | None:
    """Commit exactly alaya's change to `paths` (added, changed or deleted) as alaya.

    `before` holds each file's bytes as alaya found it in the working tree. Where that differs
    from HEAD a person has uncommitted edits in the file: the commit then carries only alaya's
    hunk, replayed onto HEAD's version (a three-way merge), and the person's edit stays
    uncommitted in the working file. A path whose change cannot be told apart from a person's
    (an untracked file of theirs, or a hunk that overlaps theirs) is left out of the commit and
    named in `skipped`. The commit is built in a private index, so nothing the person staged
    is swept in; its author is `identity` (alaya), its committer the user, and it carries the
    `Alaya-Command:` and `Alaya-Agent:` trailers. Returns the sha, or None when the tree is
    unchanged.
    """
    import git

    rels = sorted(set(paths))
    if not rels:
        return None
    repo = _repo(root)
    try:
        has_head = repo.head.is_valid()
        blobs: dict[str, bytes | None] = {}
        for rel in rels:
            work = _read(root / rel)
            head = _head_blob(repo, rel) if has_head else None
            base = before.get(rel, head) if before is not None else head
            if base == head or work == head:
                blobs[rel] = work
                continue
            if head is None or base is None or work is None:
                _skip(skipped, rel)  # a person's untracked file, or one they deleted
                continue
            merged = merge3(base, work, head)
            if merged is None:
                _skip(skipped, rel)
                continue
            blobs[rel] = merged
        if not blobs:
            return None
        tree = _tree_with(repo, root, blobs, has_head)
        if has_head and tree == repo.git.rev_parse("HEAD^{tree}"):
            return None
        env = commit_env(repo, identity)
        body = with_trailers(message)
        parents = ["-p", "HEAD"] if has_head else []
        with repo.git.custom_environment(**env):
            sha = repo.git.commit_tree(tree, *parents, "-m", body).strip()
        old = repo.git.rev_parse("HEAD") if has_head else "0" * 40
        repo.git.update_ref("-m", "alaya: " + message.splitlines()[0][:60], "HEAD", sha, old)
        _sync_index(repo, root, blobs)
        return sha
    except git.GitCommandError as exc:
        raise GitError(f"git commit failed: {exc.stderr.strip() or exc}",
                       fix="run `alaya doctor` to check the repository; the files are written "
                           "and can be committed by hand") from None


def _skip(skipped: list[str] | None, rel: str) -> None:
    if skipped is not None and rel not in skipped:
        skipped.append(rel)


def _read(full: Path) -> bytes | None:
    try:
        return full.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _head_blob(repo: git.Repo, rel: str) -> bytes | None:
    import git

    try:
        data = repo.git.execute(["git", "cat-file", "blob", f"HEAD:{rel}"],
                                stdout_as_string=False, strip_newline_in_stdout=False)
    except git.GitCommandError:
        return None
    return bytes(data)


def merge3(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """`theirs` plus the change from `base` to `ours` (git merge-file); None on a conflict."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="alaya-merge-") as tmp:
        names = []
        for label, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / label
            path.write_bytes(data)
            names.append(str(path))
        proc = subprocess.run(["git", "merge-file", "-p", *names], capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


def _tree_with(repo: git.Repo, root: Path, blobs: Mapping[str, bytes | None],
               has_head: bool) -> str:
    """HEAD's tree with `blobs` put in (None: removed), built in a throwaway index."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="alaya-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        with repo.git.custom_environment(**env):
            if has_head:
                repo.git.read_tree("HEAD")
            for rel, data in blobs.items():
                if data is None:
                    repo.git.update_index("--force-remove", "--", rel)
                    continue
                sha = _hash_blob(repo, data)
                mode = "100755" if os.access(root / rel, os.X_OK) else "100644"
                repo.git.update_index("--add", "--cacheinfo", f"{mode},{sha},{rel}")
            return str(repo.git.write_tree()).strip()


def _hash_blob(repo: git.Repo, data: bytes) -> str:
    import subprocess

    proc = subprocess.run(["git", "hash-object", "-w", "--stdin"], input=data,
                          cwd=repo.working_tree_dir, capture_output=True, check=True)
    return proc.stdout.decode().strip()


def _sync_index(repo: git.Repo, root: Path, blobs: Mapping[str, bytes | None]) -> None:
    """Bring the user's index up to the new commit for the paths alaya committed.

    An entry that was unstaged (equal to the old HEAD) becomes the committed blob; one the
    person had staged keeps their staged change, with alaya's hunk merged in when that is
    clean. Their working files are never touched.
    """
    import git

    for rel, data in blobs.items():
        staged = _index_blob(repo, rel)
        old_head = _blob_at(repo, "HEAD~1", rel) if repo.head.commit.parents else None
        if data is None:
            if staged is not None and staged == old_head:
                repo.git.update_index("--force-remove", "--", rel)
            continue
        target = data
        if staged is not None and staged != old_head and old_head is not None:
            merged = merge3(old_head, data, staged)
            if merged is None:
                continue
            target = merged
        sha = _hash_blob(repo, target)
        mode = "100755" if os.access(root / rel, os.X_OK) else "100644"
        try:
            repo.git.update_index("--add", "--cacheinfo", f"{mode},{sha},{rel}")
        except git.GitCommandError:
            continue


def _index_blob(repo: git.Repo, rel: str) -> bytes | None:
    line = repo.git.ls_files("-s", "--", rel).strip()
    if not line:
        return None
    sha = line.split()[1]
    return bytes(repo.git.execute(["git", "cat-file", "blob", sha], stdout_as_string=False,
                                  strip_newline_in_stdout=False))


def _blob_at(repo: git.Repo, rev: str, rel: str) -> bytes | None:
    import git

    try:
        return bytes(repo.git.execute(["git", "cat-file", "blob", f"{rev}:{rel}"],
                                      stdout_as_string=False, strip_newline_in_stdout=False))
    except git.GitCommandError:
        return None


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
