"""A remote you sync with is untrusted (issue 24): what it commits never runs, never redirects
a query, never crosses a namespace; a sync killed anywhere is recovered without losing a card.

Real parts throughout: a bare repository as the remote, two clones (A the victim, B the
remote's other writer), the real `alaya sync` (in process through CliRunner, and as a real
process for the kills)."""

from __future__ import annotations

import json
import os
import pickle
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine.store.init_vault import init_vault

from .test_lint import card, claim

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
ALAYA = Path(sys.executable).with_name("alaya")


def sh(*args: str, cwd: Path, check: bool = True) -> str:
    return subprocess.run(list(args), cwd=cwd, check=check, capture_output=True,
                          text=True).stdout


def commit_all(root: Path, message: str) -> None:
    sh(*GIT, "add", "-A", cwd=root)
    sh(*GIT, "commit", "-qm", message, cwd=root)


def invoke(*args: str) -> object:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


class Payload:
    """Unpickling this creates a marker file: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture()
def machines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    origin = tmp_path / "origin.git"
    sh("git", "init", "--bare", "-q", "-b", "main", str(origin), cwd=tmp_path)
    a = tmp_path / "a"
    init_vault(a)
    card(a, "ttl", id="card-ttl", title="Cache TTL",
         claims=[claim("c1", "The cache TTL is 60 seconds")])
    commit_all(a, "cards")
    sh("git", "remote", "add", "origin", str(origin), cwd=a)
    res = invoke("--vault", str(a), "sync", "--no-compile")
    assert res.exit_code == 0, res.output
    b = tmp_path / "b"
    sh("git", "clone", "-q", str(origin), str(b), cwd=tmp_path)
    res = invoke("--vault", str(b), "sync", "--no-compile", "--no-push")
    assert res.exit_code == 0, res.output
    return a, b


def push_from_b(b: Path, message: str) -> None:
    commit_all(b, message)
    sh("git", "push", "-q", "origin", "HEAD:main", cwd=b)


def head(root: Path) -> str:
    return sh("git", "rev-parse", "HEAD", cwd=root).strip()


# -- 1. nothing derived is taken from outside -----------------------------------------------------
def test_a_pickle_committed_under_alaya_is_refused_and_never_loaded(
        machines: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = machines
    marker = tmp_path / "pwned"
    build = b / ".alaya" / "builds" / "evil"
    build.mkdir(parents=True)
    (build / "graph.pickle").write_bytes(pickle.dumps(Payload(marker)))
    (build / "manifest.json").write_text("{}")
    (b / ".alaya" / "current.json").write_text(json.dumps({"schema": 1, "build": "evil"}))
    (b / ".alaya" / "cache").mkdir(exist_ok=True)
    (b / ".alaya" / "cache" / "records.pickle").write_bytes(pickle.dumps(Payload(marker)))
    sh(*GIT, "add", "-f", ".alaya", cwd=b)
    push_from_b(b, "an innocent-looking commit")
    before = head(a)
    res = invoke("--vault", str(a), "sync", "--no-compile")
    assert res.exit_code == 1
    assert ".alaya/builds/evil/graph.pickle" in res.output
    assert "nothing was merged" in res.output
    evil = sh("git", "rev-parse", "HEAD", cwd=b).strip()
    assert evil[:10] in res.output  # the commit is named
    assert head(a) == before and not (a / ".alaya" / "builds" / "evil").exists()
    # every later command on A runs as usual, and nothing of the remote's ever ran
    for args in (["compile"], ["recall", "cache ttl", "--json"], ["status"], ["lint"]):
        invoke("--vault", str(a), *args)
    assert not marker.exists()
    doctor = invoke("--vault", str(a), "doctor")
    assert "refused" in doctor.output and ".alaya/builds/evil/graph.pickle" in doctor.output


def test_a_symlink_and_an_ignored_file_from_the_remote_are_refused(
        machines: tuple[Path, Path]) -> None:
    a, b = machines
    (b / "cards" / "passwd.md").symlink_to("/etc/passwd")
    (b / ".obsidian").mkdir(exist_ok=True)
    (b / ".obsidian" / "workspace.json").write_text('{"main": {}}')  # ignored: per device
    sh(*GIT, "add", "-f", "cards/passwd.md", ".obsidian/workspace.json", cwd=b)
    push_from_b(b, "notes")
    res = invoke("--vault", str(a), "sync", "--no-compile", "--json")
    assert res.exit_code == 1
    out = json.loads(res.output)
    assert "cards/passwd.md" in out["message"] and "symbolic link" in out["message"]
    assert ".obsidian/workspace.json" in out["message"]
    assert not (a / "cards" / "passwd.md").exists()


def test_a_remote_that_redirects_the_embedder_is_refused_until_accepted(
        machines: tuple[Path, Path]) -> None:
    a, b = machines
    toml = b / "alaya.toml"
    head_, _, tail = toml.read_text().partition("[embedding]\n")
    assert tail.count('base_url = ""') >= 1
    toml.write_text(head_ + "[embedding]\n" + tail.replace(
        'base_url = ""', 'base_url = "http://attacker.example:8000/v1"', 1))
    push_from_b(b, "tune the embedder")
    res = invoke("--vault", str(a), "sync", "--no-compile")
    assert res.exit_code == 1
    assert "[embedding] base_url" in res.output and "attacker.example" in res.output
    assert "--accept-config" in res.output
    assert "attacker.example" not in (a / "alaya.toml").read_text()
    res = invoke("--vault", str(a), "sync", "--no-compile", "--accept-config")
    assert res.exit_code == 0, res.output
    assert "attacker.example" in (a / "alaya.toml").read_text()


def test_ordinary_notes_from_the_remote_still_merge(machines: tuple[Path, Path]) -> None:
    a, b = machines
    card(b, "redis", id="card-redis", title="Redis 连接池",
         claims=[claim("c1", "连接池上限是 200")])
    push_from_b(b, "a note")
    res = invoke("--vault", str(a), "sync", "--no-compile")
    assert res.exit_code == 0, res.output
    assert (a / "cards" / "redis.md").exists()
    assert not (a / ".alaya" / "sync-refused.json").exists()


# -- 3. helpers alaya registers never resolve from the vault ---------------------------------
def test_a_cli_package_committed_to_the_vault_never_runs_as_the_merge_driver(
        machines: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = machines
    marker = tmp_path / "driver-ran"
    pkg = b / "cli"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "merge_driver.py").write_text(
        f"import pathlib, sys\npathlib.Path({str(marker)!r}).write_text('ran')\nsys.exit(0)\n")
    ttl_b = b / "cards" / "ttl.md"
    ttl_b.write_text(ttl_b.read_text().replace("60 seconds", "90 seconds"))
    push_from_b(b, "a driver of our own")
    ttl_a = a / "cards" / "ttl.md"
    ttl_a.write_text(ttl_a.read_text() + "\nA line written on machine A.\n")
    commit_all(a, "A edits the body")
    res = invoke("--vault", str(a), "sync", "--no-compile", "--no-push")
    assert res.exit_code == 0, res.output
    assert not marker.exists()
    merged = ttl_a.read_text()
    assert "90 seconds" in merged and "A line written on machine A." in merged  # alaya's driver
    driver = sh("git", "config", "--get", "merge.alaya.driver", cwd=a)
    assert driver.startswith(sys.executable) or driver.startswith(f"'{sys.executable}'")
    assert " -I " in driver


def test_doctor_names_executable_git_settings_it_did_not_write(vault_path: Path) -> None:
    sh("git", "config", "core.fsmonitor", "/tmp/anything.sh", cwd=vault_path)
    sh("git", "config", "diff.md.textconv", "cat", cwd=vault_path)
    res = invoke("--vault", str(vault_path), "doctor", "--json")
    out = json.loads(res.output)
    text = json.dumps(out)
    assert "core.fsmonitor" in text and "diff.md.textconv" in text
    assert "merge.alaya.driver" not in text  # alaya's own, as it registered it


# -- 4. sync survives being killed -----------------------------------------------------------------
def test_the_fix_for_uncommitted_changes_never_commits_a_deletion(
        machines: tuple[Path, Path]) -> None:
    a, _ = machines
    (a / "cards" / "ttl.md").unlink()
    res = invoke("--vault", str(a), "sync", "--no-compile")
    assert res.exit_code == 2
    assert "commit -am" not in res.output and "commit -a" not in res.output
    assert "missing: cards/ttl.md" in res.output and "git restore" in res.output


def test_an_emptied_git_config_is_found_and_restored(machines: tuple[Path, Path]) -> None:
    a, b = machines
    (a / ".git" / "config").write_text("")  # what a kill during an in-place rewrite leaves
    doctor = invoke("--vault", str(a), "doctor", "--json")
    assert doctor.exit_code == 1
    assert ".git/config" in doctor.output
    fixed = invoke("--vault", str(a), "doctor", "--fix")
    assert "restored the remote origin" in fixed.output, fixed.output
    assert sh("git", "remote", "get-url", "origin", cwd=a).strip().endswith("origin.git")
    card(b, "new", id="card-new", title="New", claims=[claim("c1", "New")])
    push_from_b(b, "more")
    assert invoke("--vault", str(a), "sync", "--no-compile").exit_code == 0


def cards_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted((root / "cards").rglob("*.md"))}


def test_a_sync_killed_at_random_points_loses_nothing_and_the_next_one_recovers(
        machines: tuple[Path, Path], tmp_path: Path) -> None:
    """20 real `alaya sync` processes killed with SIGKILL (the whole process group, git
    included) at random moments of a merge that runs the note driver over many files; after
    each, every card is in the working tree as a committed version (or, the one git was
    rewriting at the kill, committed and put back by the next sync), the remote is still
    configured, and the next sync finishes the job."""
    a, b = machines
    rng = random.Random(24)
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash"}
    for i in range(8):
        card(a, f"a{i}", id=f"card-a{i}", title=f"Card A{i}", claims=[claim("c1", f"A {i}")])
    commit_all(a, "cards on A")
    assert invoke("--vault", str(a), "sync", "--no-compile").exit_code == 0
    sh("git", "pull", "-q", "origin", "main", cwd=b)
    kills, took = 0, 0.0
    recovered: list[str] = []
    for round_ in range(21):  # round 0 runs to the end: how long a whole sync takes here
        for i in range(8):  # both machines edit every shared card: a real merge per file
            p = b / "cards" / f"a{i}.md"
            p.write_text(p.read_text().replace("\n---\n", f"\n---\nB round {round_}.\n", 1))
        push_from_b(b, f"B round {round_}")
        for i in range(8):
            p = a / "cards" / f"a{i}.md"
            p.write_text(p.read_text() + f"\nA round {round_}.\n")
        commit_all(a, f"A round {round_}")
        committed = {c for c in sh("git", "rev-list", "--all", cwd=a).split()}
        proc = subprocess.Popen([str(ALAYA), "--vault", str(a), "sync", "--no-compile"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        started = time.monotonic()
        if round_ == 0:
            proc.wait()
            took = time.monotonic() - started
        time.sleep(rng.uniform(0.02, 0.95 * took))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        # every card is there, and holds a version git knows (no half-written note)
        for rel, data in cards_of(a).items():
            blob = sh("git", "hash-object", rel, cwd=a).strip()
            sh("git", "cat-file", "-e", blob, cwd=a)
            assert data.strip(), rel
        # a card git was rewriting when the kill came may be missing for now: git's checkout
        # unlinks a file, reads the blob, then creates it (entry.c). It is not lost — its
        # versions are committed on both sides, and the next sync must put it back (below)
        missing = [i for i in range(8) if not (a / "cards" / f"a{i}.md").exists()]
        for i in missing:
            sh("git", "cat-file", "-e", f"HEAD:cards/a{i}.md", cwd=a)
        assert sh("git", "remote", "get-url", "origin", cwd=a).strip()
        for c in committed:  # no commit lost
            sh("git", "cat-file", "-e", c, cwd=a)
        res = subprocess.run([str(ALAYA), "--vault", str(a), "sync", "--no-compile"], env=env,
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, f"round {round_}: {res.stdout}{res.stderr}"
        assert "Traceback" not in res.stderr
        recovered += [line for line in res.stdout.splitlines() if "interrupted sync" in line]
        assert not sh("git", "status", "--porcelain", "--untracked-files=no", cwd=a).strip()
        for i in range(8):
            assert (a / "cards" / f"a{i}.md").exists(), f"round {round_}: a{i} not put back"
        text = (a / "cards" / "a3.md").read_text()
        assert f"A round {round_}." in text and f"B round {round_}." in text
        sh("git", "pull", "-q", "--no-rebase", "origin", "main", cwd=b)
    assert kills >= 15  # most rounds were cut short, not finished before the kill
    assert recovered  # and some kill left git's state half-done for the next sync to clean
    sh("git", "fsck", "--no-dangling", cwd=a)


# -- 5. merges respect namespaces --------------------------------------------------------------
NOTE = """---
id: {id}
title: Release plan
type: fact
namespace: {ns}
claims:
- id: c1
  text: {claim}
  status: supported
---
{body}
"""


def test_two_namespaces_at_one_path_stay_two_notes(machines: tuple[Path, Path]) -> None:
    a, b = machines
    (a / "cards" / "plan.md").write_text(NOTE.format(
        id="card-plan-a", ns="alice", claim="Alice's private launch code is ORCHID",
        body="alice-private-body-line"))
    commit_all(a, "alice's plan")
    (b / "cards" / "plan.md").write_text(NOTE.format(
        id="card-plan-b", ns="shared", claim="The release ships on Friday",
        body="shared-body-line"))
    push_from_b(b, "shared plan")
    res = invoke("--vault", str(a), "sync", "--no-compile")
    assert res.exit_code == 0, res.output
    assert "notes of two namespaces" in res.output
    kept = (a / "cards" / "plan.md").read_text()
    moved = (a / "cards" / "plan (alice).md").read_text()
    assert "namespace: shared" in kept and "alice-private-body-line" not in kept
    assert "ORCHID" not in kept
    assert "namespace: alice" in moved and "alice-private-body-line" in moved
    assert "shared-body-line" not in moved and "Friday" not in moved
    shared_report = (a / "reports" / "contradictions.md").read_text()
    assert "plan (alice)" not in shared_report and "ORCHID" not in shared_report
    assert "another namespace" in shared_report
    alice_report = (a / "reports" / "@alice" / "contradictions.md").read_text()
    assert "namespace: alice" in alice_report and "plan (alice)" in alice_report
    assert not sh("git", "status", "--porcelain", cwd=a).strip()
    # the other machine gets both notes too, and neither machine lost one
    res = invoke("--vault", str(b), "sync", "--no-compile")
    assert res.exit_code == 0, res.output
    assert (b / "cards" / "plan (alice).md").exists()
    assert "shared-body-line" in (b / "cards" / "plan.md").read_text()
    # as agent bob, nothing of alice's reaches the shared side
    shown = invoke("--vault", str(a), "--agent", "bob", "show", "Release plan", "--json")
    assert "ORCHID" not in shown.output and "alice-private" not in shown.output


# -- an imported folder is untrusted ------------------------------------------------------------
def test_import_runs_none_of_the_programs_the_folders_git_config_names(
        vault_path: Path, tmp_path: Path) -> None:
    src = tmp_path / "their-notes"
    src.mkdir()
    sh("git", "init", "-q", "-b", "main", cwd=src)
    (src / "Plan.md").write_text("---\ntitle: Plan\n---\n计划：周五发布。\n")
    signer = tmp_path / "signer.sh"  # signs the commit, so `git log` would verify it
    signer.write_text("#!/bin/sh\ncat >/dev/null\nprintf '\\n[GNUPG:] SIG_CREATED D 1 8 00 "
                      "1700000000 ABCDEF\\n' >&2\nprintf -- '-----BEGIN PGP SIGNATURE-----\\n"
                      "\\niQEzBAABCAAdFiEE\\n-----END PGP SIGNATURE-----\\n'\n")
    signer.chmod(0o755)
    sh(*GIT, "add", "-A", cwd=src)
    sh(*GIT, "-c", f"gpg.program={signer}", "-c", "commit.gpgsign=true", "-c",
       "user.signingkey=ABCDEF", "commit", "-qm", "notes", cwd=src)
    markers = {}
    for key in ("gpg.program", "core.fsmonitor", "core.pager", "diff.external",
                "core.sshCommand", "credential.helper"):
        marker = tmp_path / f"ran-{key}"
        script = tmp_path / f"{key}.sh"
        script.write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n")
        script.chmod(0o755)
        sh("git", "config", key, str(script), cwd=src)
        markers[key] = marker
    sh("git", "config", "log.showSignature", "true", cwd=src)
    res = invoke("--vault", str(vault_path), "import", str(src))
    assert res.exit_code == 0, res.output
    assert (vault_path / "cards" / "imported" / "Plan.md").exists()
    assert "created:" in (vault_path / "cards" / "imported" / "Plan.md").read_text()  # git read
    assert not [k for k, m in markers.items() if m.exists()]


def test_import_never_copies_what_the_folder_keeps_to_itself_nor_fills_another_namespace(
        vault_path: Path, tmp_path: Path) -> None:
    src = tmp_path / "their-vault"
    src.mkdir()
    sh("git", "init", "-q", "-b", "main", cwd=src)
    (src / ".gitignore").write_text("secrets.env\nbuild/\n")
    (src / "secrets.env").write_text("DB_PASSWORD=hunter2-not-for-you\n")
    (src / "build").mkdir()
    (src / "build" / "out.md").write_text("generated\n")
    (src / ".alaya").mkdir()
    (src / ".alaya" / "serve.json").write_text('{"url": "http://evil:1", "pid": 1}')
    (src / "Note.md").write_text("---\ntitle: Note\nnamespace: alice-main\n---\nplanted\n")
    (src / "Shared.md").write_text("---\ntitle: Shared\nnamespace: shared\n---\nfine\n")
    res = invoke("--vault", str(vault_path), "import", str(src), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    dest = vault_path / "cards" / "imported"
    assert not (dest / "secrets.env").exists() and not (dest / "build").exists()
    assert not list(vault_path.rglob("serve.json"))
    note = (dest / "Note.md").read_text()
    assert "namespace: shared" in note and "imported_namespace: alice-main" in note
    assert out["renamespaced"] == ["cards/imported/Note.md: alice-main"]
    assert "namespace: shared" in (dest / "Shared.md").read_text()


def test_a_remote_alaya_toml_nested_or_too_deep_is_refused(machines: tuple[Path, Path]) -> None:
    a, b = machines
    (b / "cards" / "team").mkdir()
    (b / "cards" / "team" / "alaya.toml").write_text('[embedding]\nbase_url = "http://x:1"\n')
    push_from_b(b, "a vault inside the vault")
    res = invoke("--vault", str(a), "sync", "--no-compile")
    assert res.exit_code == 1 and "cards/team/alaya.toml" in res.output
    sh(*GIT, "rm", "-q", "cards/team/alaya.toml", cwd=b)
    (b / "alaya.toml").write_text((b / "alaya.toml").read_text() + "\n[x]\ny = "
                                  + "{a = " * 3000 + "1" + "}" * 3000 + "\n")
    push_from_b(b, "a setting nested 3000 deep")
    res = invoke("--vault", str(a), "sync", "--no-compile")
    assert res.exit_code == 1 and "no longer parses" in res.output, res.output
    # and a vault whose own alaya.toml nests that deep is one clear line, not a crash
    (a / "alaya.toml").write_text("[x]\ny = " + "[" * 3000 + "]" * 3000 + "\n")
    proc = subprocess.run([str(ALAYA), "--vault", str(a), "status"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "nested too deep" in proc.stdout + proc.stderr


def test_import_skips_sockets_fifos_and_vault_markers(vault_path: Path, tmp_path: Path) -> None:
    import socket

    src = tmp_path / "folder"
    src.mkdir()
    (src / "Ok.md").write_text("---\ntitle: Ok\n---\nfine\n")
    (src / "alaya.toml").write_text('[llm]\nbase_url = "http://attacker:1"\n')
    os.mkfifo(src / "pipe.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(src / "sock.md"))
    try:
        res = subprocess.run([str(ALAYA), "--vault", str(vault_path), "import", str(src),
                              "--json"], capture_output=True, text=True, timeout=120)
    finally:
        sock.close()
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["imported"] == ["cards/imported/Ok.md"]
    assert not (vault_path / "cards" / "imported" / "alaya.toml").exists()
    assert any("pipe.md: not a regular file" in s for s in out["skipped"])


def test_a_vault_found_by_walking_up_is_used_only_when_it_is_yours(
        vault_path: Path, tmp_path: Path) -> None:
    from cli.locate import find_vault

    planted = tmp_path / "shared-folder"
    (planted / "work").mkdir(parents=True)
    (planted / "alaya.toml").write_text("")
    assert find_vault(str(planted / "work")) == str(planted)  # ours: used
    if os.getuid() != 0:
        return  # only root can give the folder to another user here; the rest held above
    os.chown(planted, 65534, 65534)
    os.chown(planted / "alaya.toml", 65534, 65534)
    assert find_vault(str(planted / "work")) != str(planted)


def test_git_locks_left_by_a_commit_killed_midway_do_not_block_later_commits(
        vault_path: Path) -> None:
    """A command killed inside its commit (in `git update-ref`) leaves its journal and git's
    lock files; the next write clears the locks that commit made and commits the files."""
    from vault_engine.store.journal import Journal

    (vault_path / "cards" / "half.md").write_text("---\nid: card-half\ntitle: Half\n---\n")
    journal = Journal(vault_path / ".alaya", "new: a card killed at its commit")
    journal.add("cards/half.md")  # the journal's file stays: the process "died" here
    time.sleep(0.05)
    for lock in (".git/index.lock", ".git/HEAD.lock", ".git/refs/heads/main.lock"):
        (vault_path / lock).write_text("")
    res = invoke("--vault", str(vault_path), "new", "--title", "After the crash", "--type", "fact")
    assert res.exit_code == 0, res.output
    log = sh("git", "log", "--format=%s", cwd=vault_path)
    assert "new: a card killed at its commit" in log and "After the crash" in log
    assert not (vault_path / ".git" / "index.lock").exists()
    assert not sh("git", "status", "--porcelain", "--", "cards/half.md", cwd=vault_path)
