"""A discovery file is believed only when alaya wrote it on this machine (issue 24): one that
git tracks, another user owns, others may read, that is a symlink, names a dead process or a
non-loopback URL, or points at a server that cannot prove the file's secret makes `alaya
recall --json` answer in-process, say why on stderr, and send nothing of the query there.

Each case runs the installed `alaya` against a fake server started here, which records every
byte it receives. The fake server is the attacker at its best: it knows the secret in the
file it planted (except in the case where it must prove one it does not know), so the one
check under test is what stops the query."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from compilers.discovery import PROOF_PATH, SERVE_FILE, proof, trusted
from compilers.git_index import _search, _Unsure, in_index, tracked

from .test_recall import graph_vault  # noqa: F401  (fixture)

ALAYA = str(Path(sys.executable).parent / "alaya")
SECRET = "5e" * 32
QUERY = "checkout outage 密码是 hunter2-Xq9 的那次"  # what must never reach the fake server
MARK = b"hunter2-Xq9"


class FakeServer:
    """Answers every request on a keep-alive connection and records what it received. With
    `secret`, it answers the challenge correctly (it planted the file); otherwise it answers
    anything with a made-up proof and a made-up recall."""

    def __init__(self, host: str = "127.0.0.1", secret: str | None = None) -> None:
        self.secret = secret
        self.vault = ""  # the vault it claims to serve (its proof is bound to it)
        self.received: list[bytes] = []
        self.sock = socket.create_server((host, 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.url = ""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        buf = b""
        with conn:
            while True:
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                self.received.append(chunk)
                buf += chunk
                while b"\r\n\r\n" in buf:
                    head, _, buf = buf.partition(b"\r\n\r\n")
                    line = head.split(b"\r\n", 1)[0].decode("latin-1")
                    if line.startswith(f"GET {PROOF_PATH}?nonce="):
                        nonce = line.split("nonce=", 1)[1].split(" ", 1)[0]
                        answer = {"proof": proof(self.secret, nonce, self.url, self.vault)
                                  if self.secret else "00" * 32}
                    else:
                        answer = {"query": {}, "nodes": [{"id": "planted-by-the-fake"}]}
                    body = json.dumps(answer).encode()
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
                                 + body)

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        self.sock.close()

    @property
    def everything(self) -> bytes:
        return b"".join(self.received)


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    srv = FakeServer(secret=SECRET)
    srv.url = f"http://127.0.0.1:{srv.port}"
    yield srv
    srv.close()


def plant(vault: Path, url: str, *, pid: int | None = None, secret: str = SECRET,
          mode: int = 0o600) -> Path:
    path = vault / ".alaya" / SERVE_FILE
    path.write_text(json.dumps({"url": url, "pid": pid or os.getpid(), "token": "tok-planted",
                                "secret": secret}), encoding="utf-8")
    os.chmod(path, mode)
    return path


def recall(vault: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash"}
    env.pop("ALAYA_AGENT", None)
    return subprocess.run([ALAYA, "--vault", str(vault), "recall", QUERY, "--json", "--top-k",
                           "3"], capture_output=True, text=True, env=env, timeout=120)


def assert_in_process(result: subprocess.CompletedProcess[str], fake: FakeServer,
                      reason: str) -> None:
    """Answered here, from the vault; the reason on one stderr line; nothing of the query,
    nor the token, at the fake server."""
    got = fake.everything
    assert MARK not in got and b"POST" not in got and b"tok-planted" not in got, got
    assert result.returncode == 0, result.stderr
    assert "planted-by-the-fake" not in result.stdout
    answer = json.loads(result.stdout)
    assert answer["query"]["text"] == QUERY  # 中文 kept as it was typed
    assert "card-outage" in [n["id"] for n in answer["nodes"]]
    lines = [line for line in result.stderr.splitlines() if line.startswith("alaya:")]
    assert len(lines) == 1 and ".alaya/serve.json is not used" in lines[0], result.stderr
    assert reason in lines[0], lines[0]
    assert lines[0].endswith("answering in-process")


def git(vault: Path, *args: str, input_text: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Stranger", "GIT_AUTHOR_EMAIL": "s@example.org",
           "GIT_COMMITTER_NAME": "Stranger", "GIT_COMMITTER_EMAIL": "s@example.org"}
    return subprocess.run(["git", *args], cwd=vault, env=env, check=True, capture_output=True,
                          text=True, input=input_text).stdout


def test_a_file_a_commit_put_there_is_not_believed(graph_vault: Path, fake: FakeServer) -> None:  # noqa: F811
    """A remote's commit, checked out with umask 077: mode 0600, owned by the user, naming a
    live process of the user and a loopback server that proves the planted secret."""
    plant(graph_vault, fake.url)
    git(graph_vault, "add", "-f", ".alaya/serve.json")
    git(graph_vault, "commit", "-q", "-m", "a helpful server file")
    (graph_vault / ".alaya" / SERVE_FILE).unlink()
    old = os.umask(0o077)
    try:
        git(graph_vault, "checkout", "--", ".alaya/serve.json")  # git writes it
    finally:
        os.umask(old)
    assert oct((graph_vault / ".alaya" / SERVE_FILE).stat().st_mode & 0o777) == "0o600"
    assert_in_process(recall(graph_vault), fake, "git tracks it")


def test_a_file_another_user_owns_is_not_believed(graph_vault: Path, fake: FakeServer) -> None:  # noqa: F811
    if os.geteuid() != 0:
        pytest.skip("giving a file to another uid needs root (chown); this run is not root")
    path = plant(graph_vault, fake.url)
    os.chown(path, 4242, 4242)
    assert_in_process(recall(graph_vault), fake, "belongs to uid 4242")


def test_a_file_others_may_read_is_not_believed(graph_vault: Path, fake: FakeServer) -> None:  # noqa: F811
    plant(graph_vault, fake.url, mode=0o644)
    assert_in_process(recall(graph_vault), fake, "mode is 0644")


def test_a_symlink_is_not_believed(graph_vault: Path, fake: FakeServer, tmp_path: Path) -> None:  # noqa: F811
    target = plant(graph_vault, fake.url)
    elsewhere = tmp_path / "elsewhere.json"
    target.rename(elsewhere)
    (graph_vault / ".alaya" / SERVE_FILE).symlink_to(elsewhere)
    assert_in_process(recall(graph_vault), fake, "symlink")


def test_a_file_naming_a_dead_process_is_not_believed(graph_vault: Path, fake: FakeServer) -> None:  # noqa: F811
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    plant(graph_vault, fake.url, pid=gone.pid)
    assert_in_process(recall(graph_vault), fake, f"pid {gone.pid}, which is not running")


def _interface_address() -> str | None:
    """An address of this machine that is not loopback (the source address of a route)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.254.254.254", 9))  # UDP connect sends nothing
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


@pytest.mark.parametrize("where", ["wildcard", "interface"])
def test_a_file_naming_a_non_loopback_url_is_not_believed(graph_vault: Path, where: str) -> None:  # noqa: F811
    address = "0.0.0.0" if where == "wildcard" else _interface_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address to listen on")
    srv = FakeServer(host=address, secret=SECRET)
    srv.url = f"http://{address}:{srv.port}"
    try:
        plant(graph_vault, srv.url)
        assert_in_process(recall(graph_vault), srv, "is not a loopback address")
    finally:
        srv.close()


def test_a_server_that_cannot_prove_the_secret_gets_no_query(graph_vault: Path) -> None:  # noqa: F811
    """Everything about the file is right — what a stale file looks like once another program
    holds the dead server's port — but the server answers anything."""
    srv = FakeServer(secret=None)
    srv.url = f"http://127.0.0.1:{srv.port}"
    try:
        plant(graph_vault, srv.url)
        result = recall(graph_vault)
        assert_in_process(result, srv, "did not prove it holds the file's secret")
        assert f"GET {PROOF_PATH}?nonce=".encode() in srv.everything  # it was asked, only that
    finally:
        srv.close()


def test_a_file_without_a_secret_is_not_believed(graph_vault: Path, fake: FakeServer) -> None:  # noqa: F811
    """What an alaya serve of before this change wrote (and what a planted file without the
    challenge's key looks like)."""
    path = graph_vault / ".alaya" / SERVE_FILE
    path.write_text(json.dumps({"url": fake.url, "pid": os.getpid(), "token": "tok-planted"}))
    os.chmod(path, 0o600)
    assert_in_process(recall(graph_vault), fake, "names no pid, URL and secret")


def start_serve(vault: Path, *args: str, umask: int | None = None,
                **env_extra: str) -> subprocess.Popen[bytes]:
    """A real `alaya serve` on `vault`, once its own discovery file is believed."""
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash", **env_extra}
    env.pop("ALAYA_AGENT", None)
    old = os.umask(umask) if umask is not None else None
    try:
        proc = subprocess.Popen([ALAYA, "--vault", str(vault), "serve", "--no-watch", *args],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    finally:
        if old is not None:
            os.umask(old)
    for _ in range(300):
        info, _ = trusted(vault / ".alaya")
        if info is not None and info["pid"] == proc.pid:
            return proc
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "died"
        threading.Event().wait(0.05)
    proc.terminate()
    raise AssertionError("the server's discovery file was never believed")


def test_the_servers_own_file_is_believed_and_written_private(graph_vault: Path) -> None:  # noqa: F811
    """The control: a real `alaya serve` (started under umask 0, so only its own care makes
    the file private) answers the same recall, no line on stderr."""
    proc = start_serve(graph_vault, umask=0)
    path = graph_vault / ".alaya" / SERVE_FILE
    try:
        info, why = trusted(graph_vault / ".alaya")
        assert info is not None and why == ""
        assert path.stat().st_mode & 0o777 == 0o600 and len(bytes.fromhex(info["secret"])) == 32
        result = recall(graph_vault)
        assert result.returncode == 0 and result.stderr == ""
        assert "card-outage" in [n["id"] for n in json.loads(result.stdout)["nodes"]]
    finally:
        proc.terminate()
        proc.wait(10)
    assert not path.exists()


def test_the_file_of_another_vaults_live_server_is_not_believed(graph_vault: Path,  # noqa: F811
                                                               tmp_path: Path) -> None:
    """A live alaya serve of another vault of this user, its discovery file copied here (a
    folder copied whole, a sync of an untracked file by another tool): every check on the
    file passes and the server holds its secret, but its proof is for its own vault."""
    other = tmp_path / "other-vault"
    shutil.copytree(graph_vault, other)
    (other / ".alaya" / SERVE_FILE).unlink(missing_ok=True)
    proc = start_serve(other)
    try:
        shutil.copy2(other / ".alaya" / SERVE_FILE, graph_vault / ".alaya" / SERVE_FILE)
        os.chmod(graph_vault / ".alaya" / SERVE_FILE, 0o600)
        info, why = trusted(graph_vault / ".alaya")
        assert info is not None and why == ""  # the file itself looks right
        result = recall(graph_vault)
        assert result.returncode == 0, result.stderr
        lines = [line for line in result.stderr.splitlines() if line.startswith("alaya:")]
        assert len(lines) == 1 and "did not prove it holds the file's secret for this vault" \
            in lines[0], result.stderr
        assert json.loads(result.stdout)["query"]["text"] == QUERY
        # the other vault's own clients still use it
        assert recall(other).stderr == ""
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_wildcard_server_announces_a_loopback_url(graph_vault: Path) -> None:  # noqa: F811
    proc = start_serve(graph_vault, "--host", "0.0.0.0", "--allow-remote",
                       ALAYA_SERVE_TOKEN="a-long-token-1234")
    try:
        info, _ = trusted(graph_vault / ".alaya")
        assert info is not None and info["url"].startswith("http://127.0.0.1:")
        result = recall(graph_vault)
        assert result.returncode == 0 and result.stderr == ""
    finally:
        proc.terminate()
        proc.wait(10)


# -- is it tracked? The index read, against git itself ---------------------------------------

def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    return path


def _ls(work: Path, rel: str) -> bool:
    return bool(git(work, "ls-files", "--", rel).strip())


@pytest.mark.parametrize("layout", ["root", "subfolder", "intent-to-add", "index-v4",
                                    "split-index", "worktree", "other-path", "untracked"])
def test_tracked_agrees_with_git(tmp_path: Path, layout: str) -> None:
    repo = _repo(tmp_path / "repo")
    vault = repo / "notes" / "vault" if layout == "subfolder" else repo
    (vault / ".alaya").mkdir(parents=True)
    (repo / "a.md").write_text("a")
    target = vault / ".alaya" / SERVE_FILE
    target.write_text("{}")
    rel = target.relative_to(repo).as_posix()
    if layout == "other-path":  # the same name one folder down is tracked, not this one
        (repo / "x" / ".alaya").mkdir(parents=True)
        (repo / "x" / ".alaya" / SERVE_FILE).write_text("{}")
        git(repo, "add", "x/.alaya/serve.json", "a.md")
    elif layout == "intent-to-add":  # a version 3 index entry with extended flags
        git(repo, "add", "a.md")
        git(repo, "add", "-N", rel)
    elif layout == "untracked":
        git(repo, "add", "a.md")
    else:
        git(repo, "add", rel, "a.md")
    if layout == "index-v4":
        git(repo, "update-index", "--index-version", "4")
    if layout == "split-index":  # the entries move to .git/sharedindex.<sha>
        git(repo, "update-index", "--split-index")
        assert list((repo / ".git").glob("sharedindex.*"))
    git(repo, "commit", "-q", "-m", "c")
    if layout == "worktree":  # .git is a file naming the git dir
        other = tmp_path / "wt"
        git(repo, "worktree", "add", "-q", str(other))
        assert (other / ".git").is_file()
        target = other / ".alaya" / SERVE_FILE
        repo = other
    expected = layout not in ("other-path", "untracked")
    assert _ls(repo, target.relative_to(repo).as_posix()) is expected  # git says so
    assert tracked(target) is expected
    if layout == "intent-to-add":
        assert (repo / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\3"


def test_the_index_is_read_without_git_whatever_its_paths(tmp_path: Path) -> None:
    """Paths that spell an extension's name ("link", "sdir"), sort before or after the
    discovery file, or are long: read from the index, as git lists them; only a format this
    reading cannot be sure of goes to git."""
    repo = _repo(tmp_path / "repo")
    names = ["links/backlink.md", "sdir/unlink.md", "linkedin.md", "x/.alaya/serve.json",
             "-early.md", ".alaya/other.json", "long/" * 60 + "note.md", "中文/笔记.md"]
    for name in names:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x")
    git(repo, "add", ".")
    index = repo / ".git" / "index"
    assert in_index(index, b".alaya/serve.json") is False
    for name in names:
        assert in_index(index, name.encode()) is True, name
    assert in_index(index, b"x/.alaya/serve.jso") is False
    data = index.read_bytes()
    assert _search(data, 2, b"x/.alaya/serve.json", sparse=True) is True
    assert _search(data, 2, b".alaya/serve.json", sparse=True) is False
    faked = tmp_path / "v4"
    faked.write_bytes(data[:4] + b"\0\0\0\4" + data[8:])
    with pytest.raises(_Unsure):  # version 4: git is asked
        in_index(faked, b"linkedin.md")


def test_a_long_walk_hands_over_to_a_search(tmp_path: Path) -> None:
    """A vault deep in a bigger repository: its discovery file sorts after thousands of
    entries, and the answer is the same."""
    repo = _repo(tmp_path / "repo")
    blob = git(repo, "hash-object", "-w", "--stdin", input_text="x").strip()
    listing = "".join(f"100644 {blob}\tarchive/{i:05d}.md\n" for i in range(5000))
    listing += f"100644 {blob}\tnotes/vault/.alaya/serve.json\n"
    listing += f"100644 {blob}\t.deep/{'d' * 5000}.md\n"  # over 4095 bytes: its flags say so
    git(repo, "update-index", "--index-info", input_text=listing)
    index = repo / ".git" / "index"
    assert in_index(index, b"notes/vault/.alaya/serve.json") is True
    assert in_index(index, b"notes/vault/.alaya/mcp.json") is False
    assert in_index(index, b"archive/04999.md") is True
    assert in_index(index, f".deep/{'d' * 5000}.md".encode()) is True
    assert in_index(index, b".deeper") is False  # past the long one, the walk goes on


def test_outside_any_repository_nothing_is_tracked(tmp_path: Path) -> None:
    (tmp_path / ".alaya").mkdir()
    (tmp_path / ".alaya" / SERVE_FILE).write_text("{}")
    assert tracked(tmp_path / ".alaya" / SERVE_FILE) is False


def test_a_server_whose_file_git_tracks_says_so_and_is_not_believed(graph_vault: Path) -> None:  # noqa: F811
    """Once a commit brought `.alaya/serve.json`, even the server's own file stays tracked
    when it rewrites it: the server warns at start, the client answers in-process."""
    plant(graph_vault, "http://127.0.0.1:9")
    git(graph_vault, "add", "-f", ".alaya/serve.json")
    git(graph_vault, "commit", "-q", "-m", "a helpful server file")
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash", "NO_COLOR": "1"}
    env.pop("ALAYA_AGENT", None)
    proc = subprocess.Popen([ALAYA, "--vault", str(graph_vault), "serve", "--no-watch"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stderr is not None
        said = [proc.stderr.readline(), proc.stderr.readline()]
        assert "git tracks .alaya/serve.json" in said[1] and "git rm --cached" in said[1], said
        path = graph_vault / ".alaya" / SERVE_FILE
        for _ in range(300):
            if json.loads(path.read_text()).get("pid") == proc.pid:
                break
            threading.Event().wait(0.05)
        result = recall(graph_vault)
        assert result.returncode == 0 and "git tracks it" in result.stderr
        assert "card-outage" in [n["id"] for n in json.loads(result.stdout)["nodes"]]
    finally:
        proc.terminate()
        proc.wait(10)
