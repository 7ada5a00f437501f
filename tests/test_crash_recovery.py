"""A killed ingest (issue #13): `kill -9` after the notes are written and before their commit.
doctor names the state, the next ingest (or any write) commits the orphaned notes first, and
`doctor --fix` does the same."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
ALAYA = str(Path(sys.executable).parent / "alaya")


def sessions(tmp_path: Path) -> list[str]:
    out = []
    for i in range(3):
        src = tmp_path / f"crash-{i}.json"
        src.write_text(json.dumps({"id": f"session-crash-{i}", "turns": [
            {"role": "user", "content": f"Deploy note {i}: the gateway needs a restart."},
            {"role": "assistant", "content": "Noted."}]}), encoding="utf-8")
        out.append(str(src))
    return out


def uncommitted(vault: Path) -> set[str]:
    """Paths that differ from HEAD: staged, changed or untracked."""
    out = git.Repo(vault).git.status("--porcelain", "--untracked-files=all")
    return {line[3:] for line in out.splitlines() if line.strip()}


def killed_ingest(vault: Path, files: list[str], tmp_path: Path) -> None:
    """Run `alaya ingest` with a git whose `commit` (or `commit-tree`) never returns, and kill -9 it there."""
    real = shutil.which("git")
    assert real
    mark = tmp_path / "at-commit"
    wrapper = tmp_path / "git"
    wrapper.write_text("#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in commit|commit-tree) "
                       f"touch '{mark}'; exec sleep 600;; esac; done\nexec '{real}' \"$@\"\n")
    wrapper.chmod(0o755)
    env = {**os.environ, "GIT_PYTHON_GIT_EXECUTABLE": str(wrapper)}
    proc = subprocess.Popen([ALAYA, "--vault", str(vault), "ingest", *files], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    for _ in range(600):
        if mark.exists():
            break
        assert proc.poll() is None, "ingest ended before its commit"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the ingest and the hanging git with it
    proc.wait(10)


@pytest.fixture
def orphaned(vault_path: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    files = sessions(tmp_path)
    head = git.Repo(vault_path).head.commit.hexsha
    killed_ingest(vault_path, files, tmp_path)
    repo = git.Repo(vault_path)
    assert repo.head.commit.hexsha == head  # nothing was committed
    notes = sorted(p.relative_to(vault_path).as_posix()
                   for p in (vault_path / "sessions").rglob("session-crash-*"))
    assert len(notes) == 6  # three notes and their raw files, written and uncommitted
    assert set(notes) <= uncommitted(vault_path)
    return vault_path, files


def test_doctor_names_it_and_the_next_ingest_commits_the_orphans(
        orphaned: tuple[Path, list[str]]) -> None:
    vault, files = orphaned
    doctor = json.loads(CliRunner().invoke(cli, ["--vault", str(vault), "doctor",
                                                 "--json"]).output)
    check = next(c for c in doctor["checks"] if c["name"] == "interrupted")
    assert not check["ok"] and "doctor --fix" in check["fix"]
    assert any("session-crash-0.md" in item for item in check["items"])
    result = CliRunner().invoke(cli, ["--vault", str(vault), "ingest", *files, "--json"])
    assert result.exit_code == 0, result.output
    assert all(s["action"] == "unchanged" for s in json.loads(result.output)["sessions"])
    repo = git.Repo(vault)
    assert not [f for f in uncommitted(vault) if "session-crash" in f]
    message = repo.head.commit.message
    assert message.startswith("ingest: 3 sessions") and "recovered" in message
    assert not list((vault / ".alaya" / "journal").glob("*.jsonl"))
    doctor = json.loads(CliRunner().invoke(cli, ["--vault", str(vault), "doctor",
                                                 "--json"]).output)
    assert "interrupted" not in {c["name"] for c in doctor["checks"]}


def test_doctor_fix_commits_them(orphaned: tuple[Path, list[str]]) -> None:
    vault, _ = orphaned
    result = CliRunner().invoke(cli, ["--vault", str(vault), "doctor", "--fix", "--json"])
    report = json.loads(result.output)
    assert [r["name"] for r in report["repaired"]] == ["interrupted"]
    assert "interrupted" not in {c["name"] for c in report["checks"]}
    repo = git.Repo(vault)
    assert "recovered" in repo.head.commit.message
    assert not [f for f in uncommitted(vault) if "session-crash" in f]


def test_a_card_write_after_the_crash_commits_the_orphans_first(
        orphaned: tuple[Path, list[str]]) -> None:
    vault, _ = orphaned
    result = CliRunner().invoke(cli, ["--vault", str(vault), "new", "--title", "After"])
    assert result.exit_code == 0, result.output
    log = git.Repo(vault).git.log("--format=%s", "-2").splitlines()
    assert log[0].startswith("new:") and log[1].startswith("ingest: 3 sessions")


def test_doctor_names_a_lock_left_by_a_killed_git(vault_path: Path) -> None:
    (vault_path / ".git" / "index.lock").write_text("")
    doctor = json.loads(CliRunner().invoke(cli, ["--vault", str(vault_path), "doctor",
                                                 "--json"]).output)
    check = next(c for c in doctor["checks"] if c["name"] == "git-lock")
    assert not check["ok"] and "index.lock" in check["fix"]
