"""Honest commits, the authorship predicate and safe adoption (issue 14, Build 4, 5, 7)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import git
from click.testing import CliRunner

from cli.main import cli
from vault_engine.store import history
from vault_engine.store.authorship import Authorship, is_persons_note
from vault_engine.store.init_vault import GIT_BLOCK_START, init_vault
from vault_engine.store.vault import Vault

from .conftest import PERSON, commit_as_person


def alaya(root: Path, *args: str) -> str:
    res = CliRunner().invoke(cli, ["--vault", str(root), *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def person_identity(root: Path) -> None:
    repo = git.Repo(root)
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", PERSON[0])
        cfg.set_value("user", "email", PERSON[1])


def test_uncommitted_paragraph_survives_link_and_the_commit_holds_only_the_relation(
        vault_path: Path) -> None:
    person_identity(vault_path)
    alaya(vault_path, "new", "--title", "网关重启", "--type", "fact", "--body", "原有正文。")
    alaya(vault_path, "new", "--title", "Telegram notices", "--type", "fact")
    note = vault_path / "cards" / "fact" / "网关重启.md"
    paragraph = "\n我自己的段落：重启前先通知值班同事。\nMy own paragraph, not yet committed.\n"
    with note.open("a", encoding="utf-8") as fh:
        fh.write(paragraph)
    alaya(vault_path, "link", "网关重启", "Telegram notices", "--rel", "DEPENDS_ON")

    repo = git.Repo(vault_path)
    head = repo.head.commit
    diff = repo.git.diff("HEAD~1", "HEAD", "--unified=0", "--", "cards/fact/网关重启.md")
    added = [ln for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    removed = [ln for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    assert removed == [] and len(added) <= 2 and any("DEPENDS_ON" in ln for ln in added), diff
    assert "我自己的段落" not in repo.git.show("HEAD:cards/fact/网关重启.md")
    # the paragraph is still there, and still uncommitted
    text = note.read_text(encoding="utf-8")
    assert paragraph in text and "DEPENDS_ON" in text
    assert "cards/fact/网关重启.md" in repo.git.status("--porcelain")  # quotepath off: plain
    pending = repo.git.diff("HEAD", "--unified=0", "--", "cards/fact/网关重启.md").splitlines()
    changes = [ln for ln in pending if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    assert changes == ["+", "+我自己的段落：重启前先通知值班同事。",
                       "+My own paragraph, not yet committed."], pending
    # authored by alaya, committed by the person, with trailers
    assert (head.author.name, head.author.email) == ("alaya", "alaya@localhost")
    assert (head.committer.name, head.committer.email) == PERSON
    assert "\nAlaya-Command: link\n" in head.message and "Alaya-Agent: none" in head.message
    assert repo.git.log("--author=alaya", "--format=%s").splitlines()[0].startswith("link:")
    assert repo.git.log(f"--author={PERSON[0]}", "--format=%s") == ""


def test_a_persons_staged_work_is_never_swept_into_an_alaya_commit(vault_path: Path) -> None:
    alaya(vault_path, "new", "--title", "Alpha", "--type", "fact")
    alaya(vault_path, "new", "--title", "Beta", "--type", "fact")
    mine = vault_path / "Journal.md"
    mine.write_text("# 日记\nstaged, not mine to commit\n", encoding="utf-8")
    repo = git.Repo(vault_path)
    repo.git.add("Journal.md")
    alaya(vault_path, "link", "Alpha", "Beta", "--rel", "SIMILAR_TO")
    assert set(repo.head.commit.stats.files) == {"cards/fact/Alpha.md"}
    assert repo.git.diff("--cached", "--name-only") == "Journal.md"  # still staged
    assert repo.git.diff("--name-only") == ""  # the link is in the index too, not undone


def test_alaya_trailer_names_the_agent(vault_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ALAYA_AGENT", "ops-bot")
    alaya(vault_path, "new", "--title", "Gamma", "--type", "fact")
    msg = git.Repo(vault_path).head.commit.message
    assert msg.rstrip().endswith("Alaya-Command: new\nAlaya-Agent: ops-bot")


def test_configured_author(vault_path: Path) -> None:
    cfg = vault_path / "alaya.toml"
    cfg.write_text(cfg.read_text().replace('author = ""', 'author = "记忆助手 <memory@example.org>"'),
                   encoding="utf-8")
    commit_as_person(vault_path)
    alaya(vault_path, "new", "--title", "Delta", "--type", "fact")
    c = git.Repo(vault_path).head.commit
    assert (c.author.name, c.author.email) == ("记忆助手", "memory@example.org")
    assert not is_persons_note(Vault.open(vault_path), "cards/fact/Delta.md")


def test_a_person_untracked_note_is_written_but_never_committed_by_alaya(vault_path: Path) -> None:
    alaya(vault_path, "new", "--title", "Beta", "--type", "fact")
    (vault_path / "My note.md").write_text("# Mine\n\nNever committed.\n", encoding="utf-8")
    before = git.Repo(vault_path).head.commit.hexsha
    out = alaya(vault_path, "link", "My note", "Beta", "--rel", "REFERENCES")
    assert "! My note.md: written, not committed" in out  # and it says so
    repo = git.Repo(vault_path)
    assert repo.head.commit.hexsha == before  # nothing of the person's committed
    assert "REFERENCES" in (vault_path / "My note.md").read_text(encoding="utf-8")
    assert "My note.md" in repo.git.status("--porcelain", "--untracked-files=all")


def test_commit_paths_with_nothing_changed_makes_no_commit(vault: Vault) -> None:
    head = git.Repo(vault.root).head.commit.hexsha
    assert history.commit_paths(vault.root, ["AGENTS.md"], "noop", ("alaya", "a@x")) is None
    assert git.Repo(vault.root).head.commit.hexsha == head


def test_the_persons_note_predicate_follows_git_history(vault_path: Path) -> None:
    v = Vault.open(vault_path)
    alaya(vault_path, "new", "--title", "Made by alaya", "--type", "fact")
    rel = "cards/fact/Made by alaya.md"
    assert not is_persons_note(v, rel)
    assert not is_persons_note(v, "AGENTS.md")  # the template, committed by alaya
    (vault_path / "人的笔记.md").write_text("# 我写的\n", encoding="utf-8")
    assert is_persons_note(v, "人的笔记.md")  # untracked
    commit_as_person(vault_path, "my note")
    assert is_persons_note(v, "人的笔记.md")  # committed by a person
    assert not is_persons_note(v, rel)
    with (vault_path / rel).open("a", encoding="utf-8") as fh:
        fh.write("\nI added this line.\n")
    assert is_persons_note(v, rel)  # edited by a person, not yet committed
    commit_as_person(vault_path, "edit")
    owners = Authorship.load(v)
    assert owners.is_persons(rel) and owners.is_persons("人的笔记.md")
    assert not owners.is_persons("MEMORY.md")


def test_predicate_without_git_trusts_only_distilled_notes(tmp_path: Path) -> None:
    root = tmp_path / "v"
    init_vault(root, commit=False)
    subprocess.run(["rm", "-rf", str(root / ".git")], check=True)
    (root / "cards").mkdir(exist_ok=True)
    (root / "cards" / "d.md").write_text(
        "---\nid: card-d\ntitle: D\nsource_sessions: ['[[session-1]]']\n---\nx\n")
    (root / "cards" / "h.md").write_text("---\nid: card-h\ntitle: H\n---\nmine\n")
    v = Vault.open(root)
    assert not is_persons_note(v, "cards/d.md")
    assert is_persons_note(v, "cards/h.md")


def _existing_repo(root: Path) -> dict[str, bytes]:
    (root / "日记").mkdir(parents=True)
    files = {
        ".gitignore": b".obsidian\n*.tmp",  # no final newline, ignores Obsidian's settings
        ".gitattributes": b"*.png binary\n",
        "AGENTS.md": b"# My agents\n\nBe brief.\n",
        "Home.md": b"---\nid: 20230101\n---\n# Home\n[[Plan]]\n",
        "日记/2021-05-04.md": "今天开始写日记。\n".encode(),
        "Plan.md": b"# Plan\n",
        ".obsidian/app.json": b'{"userIgnoreFilters": []}\n',
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    commit_as_person(root, "my vault")
    return files


def test_init_adopts_an_existing_git_vault_without_touching_a_byte(tmp_path: Path) -> None:
    root = tmp_path / "mine"
    files = _existing_repo(root)
    res = CliRunner().invoke(cli, ["init", str(root)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "Adopted 4 existing notes" in res.output and "marked block" in res.output
    for rel, data in files.items():
        now = (root / rel).read_bytes()
        if rel in (".gitignore", ".gitattributes", "AGENTS.md"):
            assert now.startswith(data) and now != data, rel  # their bytes, then alaya's block
        else:
            assert now == data, rel
    gi = (root / ".gitignore").read_text()
    assert gi.count(GIT_BLOCK_START) == 1 and ".alaya/" in gi
    assert "*.md merge=alaya" in (root / ".gitattributes").read_text()
    assert "<!-- alaya:agents:start -->" in (root / "AGENTS.md").read_text()
    assert not (root / ".obsidian" / "graph.json").exists()  # their settings are theirs
    repo = git.Repo(root)
    head = repo.head.commit
    assert head.author.name == "alaya" and head.message.startswith("init: adopt this vault")
    assert "Home.md" not in head.stats.files and ".alaya" not in repo.git.ls_files()
    assert repo.git.config("core.quotepath") == "false"
    assert repo.git.status("--porcelain") == ""
    # a second init changes nothing and makes no commit
    again = init_vault(root)
    assert again.already and again.commit is None and again.extended == ()
    assert repo.head.commit.hexsha == head.hexsha


def test_init_in_a_plain_folder_keeps_its_notes_and_prints_what_it_did(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "Note.md").write_bytes(b"# Note\n")
    (root / ".gitignore").write_bytes(b"secret/\n")
    res = CliRunner().invoke(cli, ["init", str(root), "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    import json

    doc = json.loads(res.output)
    assert doc["extended"] == [".gitignore"] and doc["adopted_notes"] == 1
    assert "AGENTS.md" in doc["created"] and doc["commit"]
    assert (root / "Note.md").read_bytes() == b"# Note\n"
    assert (root / ".gitignore").read_bytes().startswith(b"secret/\n")


def test_import_keeps_a_users_id_type_and_created_byte_for_byte(vault_path: Path,
                                                                 tmp_path: Path) -> None:
    src = tmp_path / "books"
    (src / "读书").mkdir(parents=True)
    head = "---\nid: 20230101\ntype: book\ncreated: 2021-05-04\ntags: [阅读]\n---\n"
    (src / "读书" / "三体.md").write_text(head + "# 三体\n很好看。 #科幻/硬科幻\n",
                                        encoding="utf-8")
    (src / "读书" / "续集").mkdir()
    (src / "读书" / "续集" / "Clash.md").write_text("---\nid: 20230101\n---\nsame id\n")
    (src / "Dated.md").write_text("no frontmatter\n")
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    commit_as_person(src, "books")
    out = alaya(vault_path, "import", str(src), "--json")
    assert "cards/imported/读书/三体.md" in out
    text = (vault_path / "cards" / "imported" / "读书" / "三体.md").read_text(encoding="utf-8")
    assert text.startswith(head)  # id, type and created exactly as written
    clash = (vault_path / "cards" / "imported" / "读书" / "续集" / "Clash.md").read_text()
    assert clash.startswith("---\nid: 20230101\nalaya_id: card-")  # theirs kept, alaya's beside
    dated = (vault_path / "cards" / "imported" / "Dated.md").read_text()
    assert "created: " in dated  # from the source's git history, not the file time
    when = git.Repo(src).head.commit.authored_datetime.astimezone(dt.UTC)
    assert f"created: {when.strftime('%Y-%m-%dT%H:%M:%S')}Z" in dated
    shown = alaya(vault_path, "show", "20230101", "--json")
    doc = json.loads(shown)
    assert doc["path"] == "cards/imported/读书/三体.md" and doc["type"] == "book"
    assert "科幻/硬科幻" in doc["tags"] and "阅读" in doc["tags"]  # inline tags are tags
    v = Vault.open(vault_path)
    assert is_persons_note(v, "cards/imported/读书/三体.md")  # committed by alaya, written by a person


def test_staged_and_unstaged_edits_in_the_same_file_stay_the_persons(vault_path: Path) -> None:
    alaya(vault_path, "new", "--title", "Alpha", "--type", "fact")
    alaya(vault_path, "new", "--title", "Beta", "--type", "fact")
    note = vault_path / "cards" / "fact" / "Alpha.md"
    repo = git.Repo(vault_path)
    with note.open("a", encoding="utf-8") as fh:
        fh.write("staged by me\n")
    repo.git.add("cards/fact/Alpha.md")
    with note.open("a", encoding="utf-8") as fh:
        fh.write("not staged yet\n")
    alaya(vault_path, "link", "Alpha", "Beta", "--rel", "DEPENDS_ON")
    committed = repo.git.show("HEAD:cards/fact/Alpha.md")
    assert "DEPENDS_ON" in committed and "staged by me" not in committed
    cached = repo.git.diff("--cached", "--unified=0").splitlines()
    assert [ln for ln in cached if ln.startswith("+") and not ln.startswith("+++")] == [
        "+staged by me"]
    unstaged = repo.git.diff("--unified=0").splitlines()
    assert [ln for ln in unstaged if ln.startswith("+") and not ln.startswith("+++")] == [
        "+not staged yet"]


def test_init_never_fails_half_way_when_the_vault_ignores_obsidian(tmp_path: Path) -> None:
    """The issue's failure: a .gitignore that ignores .obsidian made init stop half-way."""
    root = tmp_path / "ignored"
    root.mkdir()
    (root / ".gitignore").write_bytes(b".obsidian/\n")
    (root / "卡片").mkdir()
    (root / "卡片" / "想法.md").write_text("# 想法\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    commit_as_person(root, "mine")
    res = CliRunner().invoke(cli, ["init", str(root), "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["commit"] and doc["commit_error"] is None
    assert any(k.startswith(".obsidian/app.json: ignored") for k in doc["kept"])
    assert (root / ".obsidian" / "app.json").exists()  # written for Obsidian, not committed
    assert ".obsidian/app.json" not in git.Repo(root).git.ls_files()
    assert "alaya.toml" in git.Repo(root).git.ls_files()


def test_a_persons_own_cards_folder_is_not_taken_for_alaya_cards(vault_path: Path) -> None:
    (vault_path / "cards" / "flashcards").mkdir(parents=True)
    (vault_path / "cards" / "flashcards" / "Capital of France.md").write_text(
        "---\ntags: [geo]\n---\nParis.\n", encoding="utf-8")
    commit_as_person(vault_path)
    v = Vault.open(vault_path)
    note = v.load().by_path("cards/flashcards/Capital of France.md")
    assert note is not None and note.kind == "note"
    doc = json.loads(alaya(vault_path, "lint", "--format", "json"))
    assert not [f for f in doc["findings"] if f["path"].startswith("cards/flashcards/")]
