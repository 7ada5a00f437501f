"""A full disk, a read-only vault, a folder the user may not write (issue 24).

Every command ends with one line naming the path and what to do, exit code 3 (`alaya
--help`), no traceback, and nothing half-written: every note byte for byte as it was, no
temp file, no journal left, `.alaya/` builds whole or absent, the git history and status as
they were. Once the disk has room again, the same command works.

The disk is real where root allows it — a small tmpfs mounted as the vault's disk, filled to
the last page, or remounted read-only; without root, the write primitive `os.open` refuses
instead (under the gateway's atomic writes, the journal, the locks, telemetry; SQLite and git
bypass it, so the full-disk cases that need them are the tmpfs's). Permission denied is a
real process without the capability to override file permissions.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git
import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from vault_engine import artifacts as A

ALAYA = str(Path(sys.executable).parent / "alaya")
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "sessions"


def push_as_other(repo: git.Repo, message: str) -> None:
    """Commit everything in the other machine's clone, as its person, and push it."""
    repo.git.add("-A")
    with repo.git.custom_environment(GIT_AUTHOR_NAME="Other", GIT_AUTHOR_EMAIL="o@example.org",
                                     GIT_COMMITTER_NAME="Other",
                                     GIT_COMMITTER_EMAIL="o@example.org"):
        repo.git.commit("-qm", message)
    repo.git.push("-q", "origin", "main")


# -- the reference vault, built once --------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    vault: Path
    env: dict[str, str]
    outside: Path  # files the commands read from (sessions to ingest, a folder to import)
    remote: Path


def invoke(vault: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], env=env)


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ref]:
    """A vault with sessions, distilled cards, links, an agent's private card, an archived
    card, a proposal for review, telemetry, a remote and a build."""
    base = tmp_path_factory.mktemp("full-disk-ref")
    home = base / "home"
    home.mkdir()
    env = {"HOME": str(home), "ALAYA_CONFIG_DIR": str(home / ".config" / "alaya"),
           "ALAYA_CACHE_DIR": str(base / "cache"), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_CONFIG_NOSYSTEM": "1", "ALAYA_EMBED_PROVIDER": "hash", "NO_COLOR": "1"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        vault = base / "vault"
        steps = [["init", str(vault)],
                 *[["ingest", str(s)] for s in sorted(EXAMPLES.glob("*.json"))[:2]],
                 ["distill", "--all"],
                 ["new", "--title", "Alpha card", "--type", "fact", "--claim", "Alpha holds"],
                 ["new", "--title", "Beta card", "--type", "fact", "--claim", "Beta holds"],
                 ["new", "--title", "Gamma card", "--type", "fact", "--claim", "伽马成立"],
                 ["link", "Alpha card", "Beta card", "--rel", "DEPENDS_ON"],
                 ["--agent", "bot", "new", "--title", "Bot private", "--type", "fact",
                  "--claim", "bot only"],
                 ["new", "--title", "Old card", "--type", "fact", "--claim", "Old holds"],
                 ["feedback", "deprecate", "Old card", "--reason", "gone"],
                 ["--agent", "bot", "new", "--title", "Proposed card", "--type", "fact",
                  "--claim", "proposed", "--propose"],
                 ["recall", "alpha"]]
        for step in steps:
            result = invoke(vault, *step)
            assert result.exit_code == 0, (step, result.output)
        remote = base / "remote.git"
        git.Repo.init(remote, bare=True)
        repo = git.Repo(vault)
        repo.create_remote("origin", str(remote))
        repo.git.push("-q", "origin", "main")
        # the other machine pushed a note since: `sync` has something to fetch and merge
        other = git.Repo.clone_from(str(remote), base / "other", branch="main")
        (base / "other" / "cards" / "Remote note.md").write_text(
            "---\ntitle: Remote note\n---\nFrom the other machine. 来自另一台机器。\n",
            encoding="utf-8")
        push_as_other(other, "remote note")
        outside = base / "outside"
        (outside / "import").mkdir(parents=True)
        (outside / "import" / "Imported note.md").write_text("# Imported\n\nSee [[Alpha card]].\n",
                                                              encoding="utf-8")
        shutil.copy(sorted(EXAMPLES.glob("*.json"))[2], outside / "s3.json")
        (outside / "cap.jsonl").write_text(
            '{"role": "user", "content": "磁盘满了怎么办"}\n'
            '{"role": "assistant", "content": "Free some space first."}\n', encoding="utf-8")
        assert invoke(vault, "compile").exit_code == 0
        yield Ref(vault=vault, env=env, outside=outside, remote=remote)


# Each command, its arguments (given the vault copy and the outside folder), and what it may
# end with on a refused disk: 3, or 0 for a reader (a read answers without writing; a small
# append may still fit into a file's last page).
COMMANDS: dict[str, tuple[Callable[[Path, Path], list[str]], frozenset[int]]] = {
    "init": (lambda v, o: ["init", str(v.parent / "v2")], frozenset({3})),
    "new": (lambda v, o: ["new", "--title", "Fresh card", "--type", "fact",
                          "--claim", "Fresh holds"], frozenset({3})),
    "link": (lambda v, o: ["link", "Beta card", "Gamma card", "--rel", "SIMILAR_TO"],
             frozenset({3})),
    "unlink": (lambda v, o: ["unlink", "Alpha card", "Beta card"], frozenset({3})),
    "ingest": (lambda v, o: ["ingest", str(o / "s3.json")], frozenset({3})),
    "capture": (lambda v, o: ["capture", "--session", "cap1", str(o / "cap.jsonl")],
                frozenset({3})),
    "distill": (lambda v, o: ["distill", "--all"], frozenset({0, 3})),
    "compile": (lambda v, o: ["compile", "--full"], frozenset({3})),
    "recall": (lambda v, o: ["recall", "alpha"], frozenset({0})),
    "recall-json": (lambda v, o: ["recall", "alpha", "--json"], frozenset({0})),
    "introspect": (lambda v, o: ["introspect"], frozenset({3})),
    "feedback": (lambda v, o: ["feedback", "useful", "Alpha card"], frozenset({0, 3})),
    "correct": (lambda v, o: ["feedback", "correct", "Alpha card", "--claim", "c1",
                              "--text", "Alpha holds since v2"], frozenset({3})),
    "import": (lambda v, o: ["import", str(o / "import")], frozenset({3})),
    "export-md": (lambda v, o: ["export", "--format", "markdown", "--output",
                                str(v.parent / "exported")], frozenset({3})),
    "export-graphml": (lambda v, o: ["export", "--format", "graphml", "--output",
                                     str(v.parent / "g.graphml")], frozenset({3})),
    "lint": (lambda v, o: ["lint", "--write-report"], frozenset({3})),
    "doctor": (lambda v, o: ["doctor", "--fix"], frozenset({0, 3})),
    "doctor-read": (lambda v, o: ["doctor"], frozenset({0})),  # a reader: it answers
    "review": (lambda v, o: ["review", "approve"], frozenset({3})),
    "promote-shared": (lambda v, o: ["promote-shared", "Bot private"], frozenset({3})),
    "sync": (lambda v, o: ["sync"], frozenset({3})),
    "restore": (lambda v, o: ["restore", "Old card"], frozenset({3})),
    "traverse": (lambda v, o: ["traverse", "Alpha card", "--save"], frozenset({3})),
    "context": (lambda v, o: ["context", "-q", "alpha"], frozenset({0})),
    "status": (lambda v, o: ["status"], frozenset({0})),
    "show": (lambda v, o: ["show", "Alpha card"], frozenset({0})),
    "trace": (lambda v, o: ["trace", "Alpha card"], frozenset({0})),
    "demo": (lambda v, o: ["demo", "--dir", str(v.parent / "demo")], frozenset({3})),
    "eval": (lambda v, o: ["eval", "--from-telemetry"], frozenset({0, 3})),
}


# -- the disk ---------------------------------------------------------------------------------
class Disk:
    """Where the vault copy lives, and a way to make it refuse writes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def refuse(self, how: str, leave: int = 0) -> None:
        raise NotImplementedError

    def allow(self) -> None:
        raise NotImplementedError

    def process_env(self) -> dict[str, str]:
        return {}

    def close(self) -> None:
        pass


class Tmpfs(Disk):
    """A real tmpfs: filled to its last page (ENOSPC) or remounted read-only (EROFS)."""

    def __init__(self, root: Path, size: str = "48m") -> None:
        super().__init__(root)
        root.mkdir()
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                               str(root)], capture_output=True)
        self.mounted = proc.returncode == 0
        self.filler = root / "filler"

    def refuse(self, how: str, leave: int = 0) -> None:
        if how == "ro":
            subprocess.run(["mount", "-o", "remount,ro", str(self.root)], check=True)
            return
        with open(self.filler, "wb", buffering=0) as fh:
            for chunk in (1 << 20, 1 << 12):
                with contextlib.suppress(OSError):
                    while fh.write(b"\0" * chunk) == chunk:
                        pass
        if leave:
            os.truncate(self.filler, max(0, self.filler.stat().st_size - leave))

    def allow(self) -> None:
        subprocess.run(["mount", "-o", "remount,rw", str(self.root)], check=True)
        self.filler.unlink(missing_ok=True)

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", str(self.root)], capture_output=True)
            if os.path.ismount(self.root):
                subprocess.run(["umount", "-l", str(self.root)], capture_output=True)


# The refusing primitive, as source: patched into this process, and into a real `alaya`
# process through a sitecustomize module on its PYTHONPATH. ALAYA_TEST_REFUSE is
# "ERRNO:ALLOWED:ROOT" — write-opens under ROOT fail with ERRNO after ALLOWED have passed.
SHIM = """
import os

_real_open, _real_mkdir = os.open, os.mkdir
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_seen = [0]


def _refusal(path):
    spec = os.environ.get("ALAYA_TEST_REFUSE")
    if not spec:
        return None
    code, allowed, root = spec.split(":", 2)
    try:
        full = os.path.realpath(os.fsdecode(path))
    except TypeError:
        return None
    if full != root and not full.startswith(root + os.sep):
        return None
    _seen[0] += 1
    if _seen[0] <= int(allowed):
        return None
    return OSError(int(code), os.strerror(int(code)), full)


def _open(path, flags, *args, **kw):
    if flags & _WRITES:
        exc = _refusal(path)
        if exc is not None:
            raise exc
    return _real_open(path, flags, *args, **kw)


def _mkdir(path, *args, **kw):
    exc = _refusal(path)
    if exc is not None:
        raise exc
    return _real_mkdir(path, *args, **kw)


if __name__ == "sitecustomize":
    os.open, os.mkdir = _open, _mkdir
"""


class Refusing(Disk):
    """No mount possible (not root): `os.open` — under the gateway's atomic temp files, the
    journal, telemetry, the locks — and `os.mkdir` refuse under `root` with the errno of a
    full (ENOSPC) or read-only (EROFS) disk, in this process and in `alaya` processes started
    with `process_env()`."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        super().__init__(root)
        root.mkdir()
        self.monkeypatch = monkeypatch
        self.shim = root.parent / "shim"
        self.shim.mkdir()
        (self.shim / "sitecustomize.py").write_text(SHIM, encoding="utf-8")
        namespace: dict[str, object] = {"__name__": "refusing"}
        exec(compile(SHIM, "refusing", "exec"), namespace)
        monkeypatch.setattr(os, "open", namespace["_open"])
        monkeypatch.setattr(os, "mkdir", namespace["_mkdir"])
        self._seen = namespace["_seen"]

    def refuse(self, how: str, leave: int = 0) -> None:
        code = errno.EROFS if how == "ro" else errno.ENOSPC
        self._seen[0] = 0  # type: ignore[index]
        # part-way: a few writes pass first (one per 4 KiB left), as on a disk running out
        self.monkeypatch.setenv("ALAYA_TEST_REFUSE",
                                f"{code}:{leave // 4096}:{os.path.realpath(self.root)}")

    def allow(self) -> None:
        self.monkeypatch.delenv("ALAYA_TEST_REFUSE", raising=False)

    def process_env(self) -> dict[str, str]:
        return {"PYTHONPATH": str(self.shim)}


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ref: Ref) -> Iterator[Disk]:
    for k, v in ref.env.items():
        monkeypatch.setenv(k, v)  # the reference vault's machine: its key seals its caches
    where = tmp_path / "disk"
    real: Disk = Tmpfs(where)
    if not real.mounted:  # type: ignore[attr-defined]
        where.rmdir()
        real = Refusing(where, monkeypatch)
    try:
        yield real
    finally:
        real.close()


# -- what must hold -------------------------------------------------------------------------
def snapshot(vault: Path) -> dict[str, bytes]:
    """Every file of the vault but .git/ and .alaya/, as bytes."""
    out = {}
    for p in sorted(vault.rglob("*")):
        rel = p.relative_to(vault).as_posix()
        if p.is_file() and not rel.startswith((".git/", ".alaya/")):
            out[rel] = p.read_bytes()
    return out


def git_state(vault: Path) -> tuple[str, str]:
    repo = git.Repo(vault)
    return repo.head.commit.hexsha, repo.git.status("--porcelain", "--untracked-files=all")


def leftovers(vault: Path) -> list[str]:
    """What a write cut short would leave: temp files, unfinished builds, a journal, a build
    without its manifest, a current.json naming no whole build, an empty note."""
    state = vault / ".alaya"
    out = [str(p) for p in vault.rglob("*") if ".alaya-tmp-" in p.name]
    out += [str(p) for p in (state / "journal").glob("*")] if (state / "journal").is_dir() else []
    if (state / A.BUILDS).is_dir():
        for b in (state / A.BUILDS).iterdir():
            if b.name.endswith(".partial") or not (b / A.MANIFEST).is_file():
                out.append(f"half build {b.name}")
    if (state / A.CURRENT).exists() and A.current_build(state) is None:
        out.append("current.json names no whole build")
    out += [f"empty {p}" for p in vault.rglob("*.md") if p.stat().st_size == 0]
    return out


def refused_line(stderr: str, where: Path) -> str:
    """The error line: the last line, one `✗` line, naming a path on the refusing disk and
    saying what to do."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("✗")]
    assert len(errors) == 1 and lines[-1] == errors[0], stderr
    line = errors[0]
    assert str(where) in line and "the machine refused" in line and "(fix: " in line, line
    assert "then run the command again" in line or "alaya" in line.split("(fix: ")[1], line
    return line


def copy_ref(ref: Ref, disk: Disk) -> Path:
    vault = disk.root / "vault"
    shutil.copytree(ref.vault, vault, symlinks=True)
    git.Repo(vault).git.remote("set-url", "origin", str(ref.remote))
    return vault


def check_refused(name: str, ref: Ref, disk: Disk, how: str, leave: int = 0) -> Result:
    make, allowed = COMMANDS[name]
    vault = copy_ref(ref, disk)
    before, before_git = snapshot(vault), git_state(vault)
    args = make(vault, ref.outside)
    disk.refuse(how, leave)
    result = invoke(vault, *args)
    disk.allow()
    assert result.exc_info is None or result.exc_info[0] is SystemExit, result.exc_info
    assert "Traceback" not in result.output + result.stderr
    code = result.exit_code
    if leave == 0:
        assert code in allowed, (name, code, result.output, result.stderr)
    else:
        assert code in (0, 3), (name, code, result.stderr)
    if code == 3:
        refused_line(result.stderr, disk.root)
        head, status = git_state(vault)
        assert status == before_git[1]  # nothing written and left uncommitted
        # every note byte for byte — but what introspect's earlier phases committed (one
        # commit per phase): only then did HEAD move
        moved = git.Repo(vault).git.diff("--name-only", before_git[0], head).splitlines() \
            if head != before_git[0] else []
        assert name == "introspect" or not moved
        after = snapshot(vault)
        assert sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k)) \
            == sorted(m.strip('"') for m in moved)
        for made in ("v2", "demo"):
            assert not (disk.root / made / "alaya.toml").exists()  # a new vault: whole or absent
    assert leftovers(vault) == []
    # room again: the same command works (a write that went through: the vault compiles)
    again = invoke(vault, *args) if code == 3 else invoke(vault, "compile")
    assert again.exit_code == 0, (name, again.output, again.stderr)
    assert leftovers(vault) == []
    return result


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_full_disk(name: str, ref: Ref, disk: Disk) -> None:
    check_refused(name, ref, disk, "full")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_read_only_vault(name: str, ref: Ref, disk: Disk) -> None:
    check_refused(name, ref, disk, "ro")


# a disk that runs out part-way: the note is written and git cannot store it, or the build is
# half written — each point is undone
@pytest.mark.parametrize("leave", [8 << 10, 64 << 10])
@pytest.mark.parametrize("name", ["new", "link", "ingest", "capture", "compile", "introspect",
                                  "review", "sync", "demo"])
def test_disk_full_part_way(name: str, leave: int, ref: Ref, disk: Disk) -> None:
    check_refused(name, ref, disk, "full", leave)


def test_recall_answers_on_a_full_disk_and_says_telemetry_was_not_kept(ref: Ref, disk: Disk) -> None:
    vault = copy_ref(ref, disk)
    expected = json.loads(invoke(vault, "recall", "alpha", "--json").stdout)
    disk.refuse("ro")
    try:
        got = json.loads(invoke(vault, "recall", "alpha", "--json").stdout)
    finally:
        disk.allow()
    assert [n["id"] for n in got["nodes"]] == [n["id"] for n in expected["nodes"]]
    assert any("not recorded in telemetry" in w and "read-only" in w for w in got["warnings"])


def test_json_errors_carry_the_refusal(ref: Ref, disk: Disk) -> None:
    vault = copy_ref(ref, disk)
    disk.refuse("full")
    try:
        result = invoke(vault, "new", "--title", "X card", "--type", "fact", "--json")
    finally:
        disk.allow()
    assert result.exit_code == 3
    error = json.loads(result.stdout)
    assert error["error"] == "WriteRefusedError"
    assert error["message"].startswith("the machine refused a write: no space left")
    assert error["path"].startswith(str(disk.root)) and "df -h" in error["fix"]


# -- real processes ---------------------------------------------------------------------------
def no_override() -> list[str]:
    """A prefix that runs a process without root's power over file permissions."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--inh-caps=-all",
            "--bounding-set=-dac_override,-dac_read_search,-fowner,-chown", "--"]


PROCESS_COMMANDS = ["new", "ingest", "compile", "recall-json", "feedback", "lint", "doctor",
                    "export-graphml"]


@pytest.mark.parametrize("how", ["full", "denied"])
def test_the_installed_command(how: str, ref: Ref, disk: Disk, tmp_path: Path) -> None:
    """The installed `alaya`, as a process: into a full disk, and into a vault whose folders
    the user may not write (chmod a-w, run without CAP_DAC_OVERRIDE)."""
    for name in PROCESS_COMMANDS:
        make, allowed = COMMANDS[name]
        vault = copy_ref(ref, disk)
        before, before_git = snapshot(vault), git_state(vault)
        args = make(vault, ref.outside)
        folders = [disk.root, vault,
                   *(p for p in vault.rglob("*") if p.is_dir() and ".git" not in p.parts)]
        if how == "full":
            disk.refuse("full")
            prefix: list[str] = []
        else:
            for f in folders:
                f.chmod(0o555)
            prefix = no_override()
        env = dict(os.environ, **ref.env, **disk.process_env())  # with ALAYA_TEST_REFUSE, if any
        try:
            proc = subprocess.run([*prefix, ALAYA, "--vault", str(vault), *args],
                                  capture_output=True, text=True, env=env, timeout=300)
        finally:
            disk.allow()
            for f in folders:
                f.chmod(0o755)
        assert "Traceback" not in proc.stderr + proc.stdout, (name, proc.stderr)
        assert proc.returncode in allowed, (name, proc.returncode, proc.stderr)
        if proc.returncode == 3:
            line = refused_line(proc.stderr, disk.root)
            if how == "denied":
                assert "permission denied" in line and "chmod u+w" in line
            assert snapshot(vault) == before and git_state(vault) == before_git
        assert leftovers(vault) == []
        again = subprocess.run([ALAYA, "--vault", str(vault), *args], capture_output=True,
                               text=True, env=dict(os.environ, **ref.env), timeout=300)
        assert again.returncode == 0, (name, again.stderr)
        shutil.rmtree(vault)
        for extra in ("g.graphml",):
            (vault.parent / extra).unlink(missing_ok=True)


def test_mcp_tools_and_serve_answer_a_refused_disk_in_json(ref: Ref, disk: Disk) -> None:
    """An MCP tool's error names the refusal in the tools' own terms (a full disk); `alaya
    serve` still answers recall on a read-only disk (200) and says its telemetry was not
    kept."""
    import asyncio
    import threading
    import urllib.request

    from mcp import Client, StdioServerParameters

    from compilers.serve import RecallServer, read_serve_file
    from vault_engine.store.vault import Vault

    vault = copy_ref(ref, disk)
    root = Path(__file__).resolve().parent.parent
    srv = RecallServer(Vault.open(vault), token=None, watch=False)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    while not read_serve_file(vault / ".alaya"):
        threading.Event().wait(0.05)
    before = snapshot(vault)
    disk.refuse("full")
    try:
        env = dict(os.environ, **disk.process_env())
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
        params = StdioServerParameters(command=sys.executable, args=[
            "-c", "from cli.main import main; main()", "--vault", str(vault), "mcp"],
            env=env, cwd=str(root))

        async def work() -> Any:
            async with Client(params) as client:
                return await client.call_tool("new", {"title": "MCP card", "type": "fact"})

        called = asyncio.run(work())
        disk.allow()
        disk.refuse("ro")  # read-only: not even a line fits into telemetry's last page
        request = urllib.request.Request(srv.url + "/recall", method="POST",
                                         data=json.dumps({"query": "alpha"}).encode())
        with urllib.request.urlopen(request, timeout=30) as resp:
            status, served = resp.status, json.loads(resp.read())
    finally:
        disk.allow()
        srv.stop.set()
        thread.join(10)
    text = called.content[0].text
    assert called.is_error and text.startswith("new: the machine refused a write: no space left")
    assert f"[{disk.root}" in text and "fix: free space on that disk" in text
    assert snapshot(vault) == before and leftovers(vault) == []
    assert status == 200 and served["nodes"]
    assert any("not recorded in telemetry" in w for w in served["warnings"])


# -- the mapping itself -------------------------------------------------------------------------
@pytest.mark.parametrize(("code", "said"), [
    (errno.ENOSPC, "no space left on the device"), (errno.EDQUOT, "the disk quota is exceeded"),
    (errno.EROFS, "the file system is read-only"), (errno.EACCES, "permission denied"),
    (errno.EPERM, "the operation is not permitted")])
def test_each_refusal_is_one_error_with_exit_code_3(code: int, said: str, tmp_path: Path) -> None:
    from vault_engine.errors import refused_write

    target = tmp_path / "cards" / "x.md"
    got = refused_write(OSError(code, os.strerror(code), str(tmp_path / ".x.alaya-tmp-1")), target)
    assert got is not None and got.exit_code == 3
    assert str(got) == (f"{target}: the machine refused a write: {said} (fix: {got.fix})")
    assert str(got.fix).endswith("then run the command again")
    assert refused_write(FileNotFoundError(errno.ENOENT, "No such file", str(target))) is None


def test_what_sqlite_git_and_faiss_say_is_asked_of_the_disk(tmp_path: Path) -> None:
    """Words that name the refusal map at once; ambiguous words ("readonly database",
    "Permission denied" from a remote) are checked against the disk itself."""
    import sqlite3

    from git import GitCommandError

    from vault_engine.errors import refused_write

    full = refused_write(sqlite3.OperationalError("database or disk is full"), tmp_path / "e.db")
    assert full is not None and "no space left" in full.message
    faiss = RuntimeError("Error in faiss::write_index: write error in x.faiss: 0 != 3072 "
                         "(No space left on device)")
    assert refused_write(faiss, tmp_path) is not None
    # a writable, roomy folder: a push refused by the remote is not this disk's refusal
    push = GitCommandError(["git", "push"], 128, b"git@host: Permission denied (publickey).")
    assert refused_write(push, tmp_path / ".git") is None
    assert refused_write(sqlite3.OperationalError("unable to open database file"),
                         tmp_path / "e.db") is None
    readonly = refused_write(sqlite3.OperationalError("attempt to write a readonly database"),
                             tmp_path / "e.db")
    assert readonly is not None and "permission denied" in readonly.message
    assert refused_write(ValueError("No space left on device")) is None  # not an I/O error


@pytest.mark.parametrize("how", ["full", "ro"])
def test_the_refusing_primitive_stands_in_for_a_disk(how: str, ref: Ref, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in used where no tmpfs can be mounted, run here too so it is known to work:
    a write-open refused under the vault is the same one line, exit 3, nothing changed."""
    for k, v in ref.env.items():
        monkeypatch.setenv(k, v)
    disk = Refusing(tmp_path / "refusing", monkeypatch)
    for name in ("new", "link", "ingest", "recall", "feedback", "compile"):
        check_refused(name, ref, disk, how)
        shutil.rmtree(disk.root / "vault")
    # and in a process of the installed command, through the sitecustomize shim
    vault = copy_ref(ref, disk)
    before = snapshot(vault)
    disk.refuse(how)
    proc = subprocess.run([ALAYA, "--vault", str(vault), "new", "--title", "Shim card",
                           "--type", "fact"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **disk.process_env()))
    disk.allow()
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    refused_line(proc.stderr, disk.root)
    assert snapshot(vault) == before and leftovers(vault) == []


def test_an_undo_short_of_space_leaves_a_journal_that_tells_the_truth(
        ref: Ref, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a reserve (a file system with no fallocate) the undo itself may find no room:
    then the file keeps the change's whole text, the journal names exactly it, the error says
    so, and the next write commits it as recovered — nothing is lost or half-written."""
    from vault_engine.errors import refusal
    from vault_engine.store import history, journal, transaction

    for k, v in ref.env.items():
        monkeypatch.setenv(k, v)
    vault = tmp_path / "vault"
    shutil.copytree(ref.vault, vault, symlinks=True)
    head, _ = git_state(vault)
    card = vault / "cards" / "fact" / "Beta card.md"
    real_commit = history.commit_paths

    def no_room(*args: object, **kw: object) -> None:
        raise refusal(errno.ENOSPC, vault / ".git")

    monkeypatch.setattr(journal.Reserve, "grow", lambda self, n: None)
    monkeypatch.setattr(history, "commit_paths", no_room)
    monkeypatch.setattr(transaction, "atomic_write", lambda full, data, **kw: no_room())
    result = invoke(vault, "link", "Beta card", "Gamma card", "--rel", "SIMILAR_TO")
    assert result.exit_code == 3
    line = refused_line(result.stderr, vault)
    assert "1 file(s) of the change could not be put back: cards/fact/Beta card.md" in line
    assert "commits them as 'recovered'" in line
    text = card.read_text(encoding="utf-8")
    assert "SIMILAR_TO" in text and text.endswith("\n")  # the change's whole text
    journals = list((vault / ".alaya" / "journal").glob("*.jsonl"))
    assert len(journals) == 1
    assert [json.loads(x) for x in journals[0].read_text("utf-8").splitlines()][1:] == \
        [{"path": "cards/fact/Beta card.md"}]
    monkeypatch.setattr(history, "commit_paths", real_commit)
    monkeypatch.undo()  # room again
    for k, v in ref.env.items():
        monkeypatch.setenv(k, v)
    assert invoke(vault, "new", "--title", "After card", "--type", "fact").exit_code == 0
    repo = git.Repo(vault)
    messages = [c.message for c in repo.iter_commits(f"{head}..HEAD")]
    assert any("recovered" in m and "cards/fact/Beta card.md" in m for m in messages)
    assert repo.git.status("--porcelain") == "" and leftovers(vault) == []


def test_a_sync_whose_checkout_fills_the_disk_is_undone_and_the_next_one_brings_everything(
        ref: Ref, disk: Disk) -> None:
    """The remote's commit packs small (cards of a few repeated words) and checks out large:
    git fetches it, then runs out of room writing the cards, empty or cut short, and stops
    ("Aborting"). That is one line, exit 3, the working tree back at HEAD; once there is room,
    the next sync brings every card in — nothing git half-wrote stands in its way."""
    if not isinstance(disk, Tmpfs):
        pytest.skip("needs a real disk that fills (root, to mount a tmpfs): git bypasses the "
                    "refusing primitive")
    vault = copy_ref(ref, disk)
    assert invoke(vault, "sync").exit_code == 0  # the remote's note, now up to date
    other = disk.root.parent / "other-machine"
    theirs = git.Repo.clone_from(str(ref.remote), other, branch="main")
    words = "节点 drain cordon kubelet 重启 pod eviction budget 延迟 canary".split()
    titles = [f"Remote incident {i}" for i in range(30)]
    for i, title in enumerate(titles):
        body = " ".join(words[(i * 7 + j * 3) % len(words)] for j in range(4000))
        (other / "cards" / f"{title}.md").write_text(f"---\ntitle: {title}\n---\n{body}\n",
                                                     encoding="utf-8")
    push_as_other(theirs, "thirty incidents")
    before, before_git = snapshot(vault), git_state(vault)
    disk.refuse("full", leave=300_000)
    result = invoke(vault, "sync")
    disk.allow()
    assert "Traceback" not in result.output + result.stderr
    assert result.exit_code == 3, (result.output, result.stderr)
    refused_line(result.stderr, disk.root)
    assert git_state(vault) == before_git  # HEAD, the index and the status as they were
    assert snapshot(vault) == before and leftovers(vault) == []
    again = invoke(vault, "sync", "--json")
    assert again.exit_code == 0, (again.output, again.stderr)
    cards = {p.stem for p in (vault / "cards").glob("Remote incident *.md")}
    assert cards == set(titles)
    assert git.Repo(vault).git.status("--porcelain") == ""
    assert invoke(vault, "doctor").exit_code == 0
