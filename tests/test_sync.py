"""`alaya sync` with two clones and a bare repository: both machines' links and claims
survive, a claim rewritten on both becomes contested and listed, bad remotes are clear."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine.store.init_vault import init_vault

from .test_lint import RAW, SESSION, card, claim

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]


def sh(*args: str, cwd: Path) -> str:
    return subprocess.run(list(args), cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture()
def machines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    origin = tmp_path / "origin.git"
    sh("git", "init", "--bare", "-q", "-b", "main", str(origin), cwd=tmp_path)
    a = tmp_path / "a"
    init_vault(a)
    (a / "sessions" / "session-a.md").write_text(SESSION)
    (a / "sessions" / "session-a.json").write_text(RAW)
    card(a, "ttl", id="card-ttl", title="Cache TTL",
         claims=[claim("c1", "The cache TTL is 60 seconds")])
    card(a, "deploy", id="card-deploy", title="Deploy config",
         claims=[claim("c1", "Deploy config sets the cache")],
         relations=["- {type: RELATES_TO, target: '[[Cache TTL]]'}"])
    card(a, "alerts", id="card-alerts", title="Cache alerts",
         claims=[claim("c1", "Alerts fire on misses")],
         relations=["- {type: RELATES_TO, target: '[[Cache TTL]]'}"])
    sh(*GIT, "add", "-A", cwd=a)
    sh(*GIT, "commit", "-qm", "cards", cwd=a)
    sh("git", "remote", "add", "origin", str(origin), cwd=a)
    res = CliRunner().invoke(cli, ["--vault", str(a), "sync", "--no-compile", "--json"])
    assert res.exit_code == 0, res.output
    b = tmp_path / "b"
    sh("git", "clone", "-q", str(origin), str(b), cwd=tmp_path)
    return a, b


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def commit(root: Path, message: str) -> None:
    sh(*GIT, "commit", "-qam", message, cwd=root)


def link_and_claim(root: Path, target: str, rel: str, claim_text: str, label: str) -> None:
    """On one machine: a relation from the TTL card (through `alaya link`) and a claim c2
    written by hand, committed."""
    assert CliRunner().invoke(cli, ["--vault", str(root), "link", "Cache TTL", target,
                                    "--rel", rel]).exit_code == 0
    card = root / "cards" / "ttl.md"
    card.write_text(card.read_text().replace(
        "claims:\n", f"claims:\n- id: c2\n  text: {claim_text}\n  status: supported\n", 1))
    commit(root, f"{label}: claim c2")


def test_two_machines_keep_both_sets_and_lint_passes(machines: tuple[Path, Path]) -> None:
    a, b = machines
    # machine A: a relation and a claim on the TTL card; machine B: another of each
    link_and_claim(a, "Deploy config", "DEPENDS_ON", "The TTL was raised for the sale", "A")
    link_and_claim(b, "Cache alerts", "CAUSES", "Only the checkout cache uses this TTL", "B")
    ra = CliRunner().invoke(cli, ["--vault", str(a), "sync", "--json"])
    assert ra.exit_code == 0, ra.output
    rb = CliRunner().invoke(cli, ["--vault", str(b), "sync", "--json"])
    assert rb.exit_code == 0, rb.output
    out = json.loads(rb.output)
    assert out["action"] == "merged" and out["pushed"] and out["merge_commit"]
    merged = (b / "cards" / "ttl.md").read_text()
    for piece in ("DEPENDS_ON", "CAUSES", "The TTL was raised for the sale",
                  "Only the checkout cache uses this TTL", "The cache TTL is 60 seconds"):
        assert piece in merged, piece
    assert "<<<<<<<" not in merged and "status: contested" not in merged
    log = git.Repo(b).git.log("--oneline", "-5")
    assert "sync: merge origin/main" in log
    lint = CliRunner().invoke(cli, ["--vault", str(b), "lint", "--no-report", "--format",
                                    "json"])
    assert lint.exit_code == 0, lint.output  # no errors: every file still a valid note
    # A pulls the merge: both machines now hold the same card
    assert CliRunner().invoke(cli, ["--vault", str(a), "sync", "--json"]).exit_code == 0
    assert (a / "cards" / "ttl.md").read_text() == merged


def test_same_claim_rewritten_on_both_becomes_contested(machines: tuple[Path, Path]) -> None:
    a, b = machines
    edit(a / "cards" / "ttl.md", "The cache TTL is 60 seconds", "The cache TTL is 90 seconds")
    commit(a, "A: 90")
    edit(b / "cards" / "ttl.md", "The cache TTL is 60 seconds", "The cache TTL is 120 seconds")
    commit(b, "B: 120")
    assert CliRunner().invoke(cli, ["--vault", str(a), "sync", "--no-compile"]).exit_code == 0
    res = CliRunner().invoke(cli, ["--vault", str(b), "sync", "--no-compile", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert len(out["conflicts"]) == 2
    text = (b / "cards" / "ttl.md").read_text()
    assert "90 seconds" in text and "120 seconds" in text and text.count("contested") == 2
    report = (b / "reports" / "contradictions.md").read_text()
    assert "90 seconds" in report and "120 seconds" in report


def test_no_remote_dirty_tree_and_refused_merges_are_clear(tmp_path: Path) -> None:
    root = tmp_path / "v"
    init_vault(root)
    res = CliRunner().invoke(cli, ["--vault", str(root), "sync", "--no-compile"])
    assert res.exit_code == 2 and "remote add origin" in res.output
    sh("git", "remote", "add", "origin", str(tmp_path / "nowhere.git"), cwd=root)
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text() + "\nmine\n")
    res = CliRunner().invoke(cli, ["--vault", str(root), "sync", "--no-compile"])
    assert res.exit_code == 2 and "uncommitted" in res.output
    commit(root, "mine")
    res = CliRunner().invoke(cli, ["--vault", str(root), "sync", "--no-compile"])
    assert res.exit_code == 1 and "fetch" in res.output


def test_non_note_conflict_aborts_and_leaves_the_branch(machines: tuple[Path, Path]) -> None:
    a, b = machines
    (a / "notes.txt").write_text("from a\n")
    sh(*GIT, "add", "notes.txt", cwd=a)
    commit(a, "A: txt")
    (b / "notes.txt").write_text("from b\n")
    sh(*GIT, "add", "notes.txt", cwd=b)
    commit(b, "B: txt")
    assert CliRunner().invoke(cli, ["--vault", str(a), "sync", "--no-compile"]).exit_code == 0
    head = git.Repo(b).head.commit.hexsha
    res = CliRunner().invoke(cli, ["--vault", str(b), "sync", "--no-compile"])
    assert res.exit_code == 1 and "notes.txt" in res.output
    assert git.Repo(b).head.commit.hexsha == head and (b / "notes.txt").read_text() == "from b\n"
    assert not git.Repo(b).is_dirty()


def test_a_title_changed_on_both_machines_is_reported(machines: tuple[Path, Path]) -> None:
    """A scalar both machines changed (issue #13): ours stays, theirs is kept as
    `title_theirs`, and both the sync output and reports/contradictions.md say so."""
    a, b = machines
    edit(a / "cards" / "ttl.md", "title: Cache TTL", "title: Cache time-to-live")
    commit(a, "A: title")
    edit(b / "cards" / "ttl.md", "title: Cache TTL", "title: 缓存过期时间")
    commit(b, "B: title")
    assert CliRunner().invoke(cli, ["--vault", str(a), "sync", "--no-compile"]).exit_code == 0
    res = CliRunner().invoke(cli, ["--vault", str(b), "sync", "--no-compile", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["scalar_conflicts"] == ["cards/ttl.md title"]
    text = (b / "cards" / "ttl.md").read_text()
    assert "title: 缓存过期时间" in text and "title_theirs: Cache time-to-live" in text
    report = (b / "reports" / "contradictions.md").read_text()
    assert "`title`" in report and "缓存过期时间" in report and "Cache time-to-live" in report
    assert "title_theirs" in report
    human = CliRunner().invoke(cli, ["--vault", str(b), "sync", "--no-compile"])
    assert "both machines changed `title` in cards/ttl.md" in human.output
    assert git.Repo(b).head.commit.message.startswith("sync: 0 claim(s) and 1 value(s)")
