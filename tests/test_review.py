"""The review queue: with review on, agents' writes wait on alaya/proposals; approve merges
them (git log shows it), reject leaves no trace in the main branch."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from cli.main import cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "sessions"


def run(vault: Path, *args: str) -> dict:
    res = CliRunner().invoke(cli, ["--vault", str(vault), *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


@pytest.fixture()
def reviewed(vault_path: Path) -> Path:
    cfg = vault_path / "alaya.toml"
    cfg.write_text(cfg.read_text().replace("review = false", "review = true"))
    repo = git.Repo(vault_path)
    repo.git.add("alaya.toml")
    repo.git.commit("-qm", "review on", env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                                             "GIT_COMMITTER_NAME": "t",
                                             "GIT_COMMITTER_EMAIL": "t@t"})
    run(vault_path, "ingest", str(EXAMPLES / "session-20260402-091500.json"))
    return vault_path


def cards(root: Path) -> list[Path]:
    return sorted((root / "cards").rglob("*.md"))


def test_distill_waits_for_approval_then_merges(reviewed: Path) -> None:
    repo = git.Repo(reviewed)
    head = repo.head.commit.hexsha
    out = run(reviewed, "distill")
    assert out["sessions"][0]["status"] == "distilled"
    assert repo.head.commit.hexsha == head and not cards(reviewed)  # main untouched
    assert not repo.is_dirty(untracked_files=True)
    pending = run(reviewed, "review")["pending"]
    added = [p for p in pending if p["status"] == "added" and p["path"].startswith("cards/")]
    assert added and all(p["diff"] for p in added)
    # a link proposed on top, to a card that exists only on the proposal branch
    a, b = added[0]["id"], added[-1]["id"]
    if a != b:
        run(reviewed, "link", a, b, "--rel", "RELATES_TO")
        assert repo.head.commit.hexsha == head
    before = [p["path"] for p in run(reviewed, "review")["pending"]]
    approved = run(reviewed, "review", "approve")
    assert approved["approved"] == before
    assert cards(reviewed) and repo.head.commit.hexsha != head
    merge = repo.head.commit
    assert len(merge.parents) == 2 and merge.message.startswith("review: approve")
    assert run(reviewed, "review")["pending"] == []


def test_reject_leaves_no_trace_and_items_can_be_picked(reviewed: Path) -> None:
    repo = git.Repo(reviewed)
    head = repo.head.commit.hexsha
    run(reviewed, "distill")
    pending = run(reviewed, "review")["pending"]
    first = next(p for p in pending if p["path"].startswith("cards/"))
    # approve one card only, then reject the rest
    out = run(reviewed, "review", "approve", first["path"])
    assert out["approved"] == [first["path"]]
    assert [c.relative_to(reviewed).as_posix() for c in cards(reviewed)] == [first["path"]]
    after_one = repo.head.commit.hexsha
    run(reviewed, "review", "reject", "--all")
    assert run(reviewed, "review")["pending"] == []
    assert repo.head.commit.hexsha == after_one  # rejecting wrote nothing to main
    assert [c.relative_to(reviewed).as_posix() for c in cards(reviewed)] == [first["path"]]
    assert head in [c.hexsha for c in repo.iter_commits()]
    # a fresh proposal after a full reject starts from the main branch again
    res = CliRunner().invoke(cli, ["--vault", str(reviewed), "new", "--title", "Proposed card",
                                   "--type", "fact", "--json"])
    assert res.exit_code == 0, res.output
    assert [p["title"] for p in run(reviewed, "review")["pending"]] == ["Proposed card"]
    run(reviewed, "review", "reject", "Proposed card")
    assert run(reviewed, "review")["pending"] == []
    assert not (reviewed / json.loads(res.output)["path"]).exists()


def test_edit_a_proposal_before_approving(vault_path: Path, tmp_path: Path) -> None:
    out = run(vault_path, "new", "--title", "Draft fact", "--type", "fact", "--propose")
    assert not (vault_path / out["path"]).exists()
    bad = CliRunner().invoke(cli, ["--vault", str(vault_path), "review", "approve", "nope"])
    assert bad.exit_code == 1 and "no pending change matches" in bad.output
    text = (vault_path / ".alaya" / "review" / "worktree" / out["path"]).read_text()
    new = tmp_path / "new.md"
    new.write_text(text.replace("title: Draft fact", "title: Checked fact"))
    run(vault_path, "review", "edit", "Draft fact", "--text-file", str(new))
    run(vault_path, "review", "approve")
    assert "title: Checked fact" in (vault_path / out["path"]).read_text()


def test_recall_includes_pending_knowledge_only_when_asked(vault_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    run(vault_path, "new", "--title", "Kafka retention is seven days", "--type", "fact")
    run(vault_path, "new", "--title", "Zookeeper quorum needs three nodes", "--type", "fact",
        "--propose")
    assert CliRunner().invoke(cli, ["--vault", str(vault_path), "compile"]).exit_code == 0
    plain = run(vault_path, "recall", "zookeeper quorum nodes")
    assert "Zookeeper quorum needs three nodes" not in [n["title"] for n in plain["nodes"]]
    with_pending = run(vault_path, "recall", "zookeeper quorum nodes", "--pending")
    titles = [n["title"] for n in with_pending["nodes"]]
    assert titles[0] == "Zookeeper quorum needs three nodes"
    assert "Kafka retention is seven days" in titles  # the main branch's knowledge too
