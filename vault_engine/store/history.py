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

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vault_engine.errors import GitError, refused_write

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


def run_git(root: Path, *args: str, data: bytes | None = None,
            env: Mapping[str, str] | None = None, check: bool = True) -> bytes:
    """`git ARGS` in `root`, its output as bytes; a failure is a GitError naming the command
    (unless `check` is false)."""
    import subprocess

    proc = subprocess.run(["git", "-c", "core.quotepath=false", *args], cwd=root, input=data,
                          capture_output=True, env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise GitError(f"git {args[0] if args else ''} failed: "
                       f"{proc.stderr.decode('utf-8', 'replace').strip()}",
                       fix="run `alaya doctor` to check the repository")
    return proc.stdout


# `-c` settings for git run in a folder alaya does not trust (`alaya import` of someone's
# repository): every configured program off. Command-line settings win over every config
# file, includes too; the commands run with them (log, rev-parse, check-ignore) read no
# attributes that name a filter or a diff driver.
UNTRUSTED = tuple(arg for key, value in (
    ("core.fsmonitor", "false"), ("core.hooksPath", os.devnull), ("core.pager", "cat"),
    ("core.editor", "false"), ("core.sshCommand", "false"), ("core.askPass", ""),
    ("core.gitProxy", ""), ("core.alternateRefsCommand", ""), ("credential.helper", ""),
    ("diff.external", ""), ("gpg.program", "false"), ("gpg.openpgp.program", "false"),
    ("gpg.ssh.program", "false"), ("gpg.x509.program", "false"),
    ("gpg.ssh.defaultKeyCommand", ""), ("log.showSignature", "false"),
    ("sequence.editor", "false"), ("protocol.allow", "never"), ("safe.bareRepository", "explicit"),
) for arg in ("-c", f"{key}={value}"))
UNTRUSTED_ENV = {"GIT_PAGER": "cat", "GIT_EDITOR": "false", "GIT_ASKPASS": "",
                 "GIT_TERMINAL_PROMPT": "0", "GIT_EXTERNAL_DIFF": "", "GIT_SSH_COMMAND": "false"}


def run_untrusted_git(folder: Path, *args: str, data: bytes | None = None) -> bytes | None:
    """`git ARGS` in a folder someone else's git config governs, with every program it could
    name switched off (UNTRUSTED); None when git fails (not a repository, not owned by this
    user: nothing is known)."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(UNTRUSTED_ENV)
    proc = subprocess.run(["git", "-c", "core.quotepath=false", *UNTRUSTED, *args], cwd=folder,
                          input=data, capture_output=True, env=env)
    return proc.stdout if proc.returncode in (0, 1) and (proc.stdout or proc.returncode == 0) \
        else None


def set_config(root: Path, key: str, value: str) -> bool:
    """One local git setting, through `git config` (git's own lock and atomic rename — never
    a rewrite of .git/config in place, which a kill would leave empty). Written only when it
    differs; True when it was written."""
    current = run_git(root, "config", "--local", "--get", key, check=False)
    if current.decode("utf-8", "replace").rstrip("\n") == value:
        return False
    run_git(root, "config", "--local", key, value)
    return True


def configure_repo(root: Path) -> None:
    """Local settings alaya relies on: `core.quotepath false`, so Chinese and other non-ASCII
    paths read plainly in `git status` and `git log` instead of as octal escapes."""
    set_config(root, "core.quotepath", "false")


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


@contextlib.contextmanager
def as_command(name: str) -> Iterator[None]:
    """Commits made inside carry `Alaya-Command: name`; the command before is put back."""
    global _COMMAND
    before = _COMMAND
    _COMMAND = name
    try:
        yield
    finally:
        _COMMAND = before


# commands whose commits copy or move a person's note without writing it: authorship keeps
# the note theirs (store/authorship.py)
COPY_COMMANDS = ("import", "sync-apart")


def with_trailers(message: str, agent: str | None = None) -> str:
    """`message` plus `Alaya-Command:` and `Alaya-Agent:` trailers (git interpret-trailers
    form). `agent` is the caller of the change (its transaction's), never read from the
    environment: none for the owner. A secret in the message is masked (docs/security.md §2):
    git keeps a message forever."""
    from vault_engine.redaction import redact

    message = redact(message)
    words = message.split(":", 1)[0].split()
    command = _COMMAND or (words[0] if words else "alaya")
    return (f"{message.rstrip()}\n\n{COMMAND_TRAILER}: {command}\n"
            f"{AGENT_TRAILER}: {agent or 'none'}\n")


def commit_env(repo: git.Repo, identity: tuple[str, str]) -> dict[str, str]:
    """Author alaya (`identity`), committer the user when git knows them (else alaya too)."""
    name, email = identity
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email}
    if not _has_identity(repo) and not os.environ.get("GIT_COMMITTER_NAME"):
        env.update(GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email)
    return env


def commit_paths(root: Path, paths: Iterable[str], message: str,
                 identity: tuple[str, str], *, before: Mapping[str, bytes | None] | None = None,
                 skipped: list[str] | None = None, agent: str | None = None) -> str | None:
    """Commit exactly alaya's change to `paths` (added, changed or deleted) as alaya.

    `before` holds each file's bytes as alaya found it in the working tree. Where that differs
    from HEAD a person has uncommitted edits in the file: the commit then carries only alaya's
    hunk, replayed onto HEAD's version (a three-way merge), and the person's edit stays
    uncommitted in the working file. A path whose change cannot be told apart from a person's
    (an untracked file of theirs, or a hunk that overlaps theirs) is left out of the commit and
    named in `skipped`. The commit is built in a private index, so nothing the person staged
    is swept in; its author is `identity` (alaya), its committer the user, and it carries the
    `Alaya-Command:` and `Alaya-Agent:` trailers (`agent`: the change's caller). Returns the
    sha, or None when the tree is unchanged. A handful of git processes per commit, whatever
    the number of paths.
    """
    import git

    rels = sorted(set(paths))
    if not rels:
        return None
    repo = _repo(root)
    try:
        has_head = repo.head.is_valid()
        heads = _tree_entries(repo, "HEAD", rels) if has_head else {}
        blobs: dict[str, bytes | None] = {}
        for rel in rels:
            work = _read(root / rel)
            head_sha = heads.get(rel)
            base = before.get(rel) if before is not None and rel in before else None
            base_is_head = before is None or rel not in before or \
                (_blob_sha(base) if base is not None else None) == head_sha
            if base_is_head or (work is not None and _blob_sha(work) == head_sha):
                blobs[rel] = work
                continue
            if head_sha is None or base is None or work is None:
                _skip(skipped, rel)  # a person's untracked file, or one they deleted
                continue
            merged = merge3(base, work, _cat(repo, head_sha))
            if merged is None:
                _skip(skipped, rel)
                continue
            blobs[rel] = merged
        if not blobs:
            return None
        shas = _write_blobs(repo, blobs)
        modes = {rel: "100755" if os.access(root / rel, os.X_OK) else "100644" for rel in blobs}
        tree = _tree_with(repo, shas, modes, has_head)
        if has_head and tree == repo.git.rev_parse("HEAD^{tree}"):
            return None
        env = commit_env(repo, identity)
        parents = ["-p", "HEAD"] if has_head else []
        with repo.git.custom_environment(**env):
            sha = repo.git.commit_tree(tree, *parents, "-m", with_trailers(message, agent)).strip()
        old = repo.git.rev_parse("HEAD") if has_head else "0" * 40
        repo.git.update_ref("-m", "alaya: " + message.splitlines()[0][:60], "HEAD", sha, old)
        try:
            _sync_index(repo, heads, shas, modes)
        except git.GitCommandError:
            pass  # the commit is made; only the index lags behind it (`git status` shows it)
        return sha
    except git.GitCommandError as exc:
        # before HEAD moved: nothing is committed (a full or read-only disk is the usual case)
        refused = refused_write(exc, root / ".git")
        if refused is not None:
            raise refused from None
        raise GitError(f"git commit failed: {exc.stderr.strip() or exc}",
                       fix="run `alaya doctor` to check the repository; the files are written "
                           "and can be committed by hand") from None


UNCOMMITTED: list[str] = []  # every path this process wrote but left out of its commits


def _skip(skipped: list[str] | None, rel: str) -> None:
    if rel not in UNCOMMITTED:
        UNCOMMITTED.append(rel)
    if skipped is not None and rel not in skipped:
        skipped.append(rel)


def _read(full: Path) -> bytes | None:
    try:
        return full.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _blob_sha(data: bytes) -> str:
    """git's object id of a blob, computed here (no process)."""
    import hashlib

    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def _git_bytes(repo: git.Repo, *args: str, data: bytes | None = None) -> bytes:
    import subprocess

    proc = subprocess.run(["git", "-c", "core.quotepath=false", *args], input=data,
                          cwd=repo.working_tree_dir, capture_output=True, env=_env_of(repo))
    if proc.returncode != 0:
        import git

        raise git.GitCommandError(["git", *args], proc.returncode, proc.stderr)
    return proc.stdout


def _env_of(repo: git.Repo) -> dict[str, str]:
    env = dict(os.environ)
    env.update(getattr(repo.git, "_environment", {}) or {})
    return env


def _tree_entries(repo: git.Repo, rev: str, rels: Sequence[str]) -> dict[str, str]:
    """path → blob sha in `rev` (one `git ls-tree`)."""
    out: dict[str, str] = {}
    raw = _git_bytes(repo, "ls-tree", "-z", "--full-tree", rev, "--", *rels)
    for entry in raw.decode("utf-8", "surrogateescape").split("\x00"):
        if "\t" in entry:
            meta, path = entry.split("\t", 1)
            parts = meta.split()
            if len(parts) >= 3 and parts[1] == "blob":
                out[path] = parts[2]
    return out


def _cat(repo: git.Repo, sha: str) -> bytes:
    return _git_bytes(repo, "cat-file", "blob", sha)


def _write_blobs(repo: git.Repo, blobs: Mapping[str, bytes | None]) -> dict[str, str | None]:
    """Store every blob (one `git hash-object -w --stdin-paths` over temp files)."""
    import tempfile

    shas: dict[str, str | None] = {rel: None for rel, data in blobs.items() if data is None}
    todo = [(rel, data) for rel, data in blobs.items() if data is not None]
    if not todo:
        return shas
    with tempfile.TemporaryDirectory(prefix="alaya-blobs-") as tmp:
        files = []
        for i, (_rel, data) in enumerate(todo):
            path = Path(tmp) / str(i)
            path.write_bytes(data)  # type: ignore[arg-type]
            files.append(str(path))
        out = _git_bytes(repo, "hash-object", "-w", "--no-filters", "--stdin-paths",
                         data="\n".join(files).encode() + b"\n").decode().split()
    for (rel, _data), sha in zip(todo, out, strict=True):
        shas[rel] = sha
    return shas


def _index_info(shas: Mapping[str, str | None], modes: Mapping[str, str]) -> bytes:
    rows = []
    for rel, sha in shas.items():
        rows.append(f"0 {'0' * 40}\t{rel}" if sha is None else f"{modes[rel]} {sha}\t{rel}")
    return ("\x00".join(rows) + "\x00").encode("utf-8", "surrogateescape")


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


def _tree_with(repo: git.Repo, shas: Mapping[str, str | None], modes: Mapping[str, str],
               has_head: bool) -> str:
    """HEAD's tree with `shas` put in (None: removed), built in a throwaway index."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="alaya-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        with repo.git.custom_environment(**env):
            if has_head:
                repo.git.read_tree("HEAD")
            _git_bytes(repo, "update-index", "-z", "--index-info", data=_index_info(shas, modes))
            return str(repo.git.write_tree()).strip()


def _sync_index(repo: git.Repo, old_head: Mapping[str, str], shas: Mapping[str, str | None],
                modes: Mapping[str, str]) -> None:
    """Bring the user's index up to the new commit for the paths alaya committed.

    An entry that was unstaged (equal to the old HEAD) becomes the committed blob; one the
    person had staged keeps their staged change, with alaya's hunk merged in when that is
    clean (else it is left as they staged it). Their working files are never touched.
    """
    staged: dict[str, str] = {}
    raw = _git_bytes(repo, "ls-files", "-s", "-z", "--", *shas)
    for entry in raw.decode("utf-8", "surrogateescape").split("\x00"):
        if "\t" in entry:
            meta, path = entry.split("\t", 1)
            staged[path] = meta.split()[1]
    update: dict[str, str | None] = {}
    for rel, sha in shas.items():
        mine, head = staged.get(rel), old_head.get(rel)
        if mine == head or mine is None:
            update[rel] = sha  # not staged by the person: the index follows the commit
        elif sha is not None and head is not None:
            merged = merge3(_cat(repo, head), _cat(repo, sha), _cat(repo, mine))
            if merged is not None:
                update[rel] = _write_blobs(repo, {rel: merged})[rel]
    if update:
        import contextlib

        import git

        with contextlib.suppress(git.GitCommandError):  # a locked index: git status shows it
            _git_bytes(repo, "update-index", "-z", "--index-info",
                       data=_index_info(update, modes))


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
