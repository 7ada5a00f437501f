"""CLI behaviour through CliRunner: output, exit codes, commits."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from cli.main import cli, command_names
from vault_engine.store.init_vault import template_files
from vault_engine.store.vault import Vault

from .conftest import git_log, git_show_files


def run(vault: Path, *args: str, input: str | None = None):
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args], input=input,
                                catch_exceptions=False)
    return result


def test_init_commits_template_and_second_run_changes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "v"
    first = CliRunner().invoke(cli, ["init", str(target), "--json"])
    assert first.exit_code == 0, first.output
    data = json.loads(first.output)
    expected = sorted(rel for rel, _ in template_files())
    assert sorted(data["created"]) == expected
    assert git_show_files(target) == expected  # the first commit holds the template
    assert git_log(target) == [git_log(target)[0]] and git_log(target)[0].startswith("init:")
    second = CliRunner().invoke(cli, ["init", str(target)])
    assert second.exit_code == 0 and "nothing changed" in second.output
    assert len(git_log(target)) == 1
    assert git.Repo(target).git.status("--porcelain") == ""


def test_init_without_git_identity_uses_config_identity(tmp_path: Path) -> None:
    target = tmp_path / "v"
    CliRunner().invoke(cli, ["init", str(target)])
    commit = git.Repo(target).head.commit
    assert (commit.author.name, commit.author.email) == ("alaya", "alaya@localhost")


def test_init_keeps_existing_files(tmp_path: Path) -> None:
    target = tmp_path / "v"
    target.mkdir()
    (target / "MEMORY.md").write_text("my own memory\n")
    CliRunner().invoke(cli, ["init", str(target)])
    assert (target / "MEMORY.md").read_text() == "my own memory\n"


def _two_cards(vault: Path) -> None:
    assert run(vault, "new", "--title", "Gateway restart", "--type", "pattern",
               "--body", "Restart the gateway.\n\nSee [[Telegram notices]].").exit_code == 0
    assert run(vault, "new", "--title", "Telegram notices", "--alias", "tg").exit_code == 0


def test_link_changes_only_relation_lines_and_makes_one_commit(vault_path: Path) -> None:
    _two_cards(vault_path)
    card = vault_path / "cards" / "pattern" / "Gateway restart.md"
    before = card.read_text(encoding="utf-8")
    commits = len(git_log(vault_path))
    result = run(vault_path, "link", "Gateway restart", "tg", "--rel", "DEPENDS_ON",
                 "--weight", "0.8", "--reason", "notice goes via Telegram")
    assert result.exit_code == 0, result.output
    after = card.read_text(encoding="utf-8")
    diff = [d for d in difflib.ndiff(before.splitlines(), after.splitlines())
            if d.startswith(("+ ", "- "))]
    assert diff == ["+ relations:", "+ - {type: DEPENDS_ON, target: '[[Telegram notices]]', "
                    "weight: 0.8, reason: notice goes via Telegram}"]
    assert len(git_log(vault_path)) == commits + 1
    assert git_log(vault_path)[0].startswith('link: "Gateway restart" DEPENDS_ON')
    assert git_show_files(vault_path) == ["cards/pattern/Gateway restart.md"]
    # a second relation adds exactly one line
    assert run(vault_path, "new", "--title", "Config change").exit_code == 0
    before = card.read_text(encoding="utf-8")
    assert run(vault_path, "link", "Gateway restart", "Config change", "--rel",
               "caused-by").exit_code == 0
    added = [d for d in difflib.ndiff(before.splitlines(), card.read_text("utf-8").splitlines())
             if d.startswith(("+ ", "- "))]
    assert added == ["+ - {type: CAUSED_BY, target: '[[Config change]]', weight: 1.0}"]


def test_link_to_missing_note_writes_nothing(vault_path: Path) -> None:
    _two_cards(vault_path)
    card = vault_path / "cards" / "pattern" / "Gateway restart.md"
    before = card.read_bytes()
    commits = git_log(vault_path)
    result = run(vault_path, "link", "Gateway restart", "Nowhere", "--rel", "DEPENDS_ON")
    assert result.exit_code == 1 and "no note matches 'Nowhere'" in result.output
    assert card.read_bytes() == before and git_log(vault_path) == commits
    bad = run(vault_path, "link", "Gateway restart", "tg", "--rel", "not a type!")
    assert bad.exit_code == 2


def test_symmetric_relation_stored_once_and_unlinked_from_either_end(vault_path: Path) -> None:
    _two_cards(vault_path)
    assert run(vault_path, "link", "Gateway restart", "tg", "--rel", "SIMILAR_TO").exit_code == 0
    again = run(vault_path, "link", "tg", "Gateway restart", "--rel", "SIMILAR_TO", "--json")
    assert json.loads(again.output)["changed"] is False
    commits = len(git_log(vault_path))
    gone = run(vault_path, "unlink", "tg", "Gateway restart", "--rel", "SIMILAR_TO")
    assert gone.exit_code == 0, gone.output
    text = (vault_path / "cards" / "pattern" / "Gateway restart.md").read_text("utf-8")
    assert "SIMILAR_TO" not in text
    assert len(git_log(vault_path)) == commits + 1
    missing = run(vault_path, "unlink", "tg", "Gateway restart")
    assert missing.exit_code == 1


def test_unlink_leaves_body_links_and_says_so(vault_path: Path) -> None:
    _two_cards(vault_path)
    result = run(vault_path, "unlink", "Gateway restart", "Telegram notices")
    assert result.exit_code == 1 and "wikilink in the note's text" in result.output


def test_new_from_json_stdin(vault_path: Path) -> None:
    _two_cards(vault_path)
    card = {"title": "Notify before restart", "content": "Always notify first.",
            "type": "pattern", "tags": ["gateway"], "importance": 0.8,
            "claims": [{"text": "Notify before restarting", "confidence": 0.9,
                        "evidence": [{"kind": "session", "source": "[[s-1#^t3]]"}]}],
            "relations": [{"type": "DEPENDS_ON", "target": "Telegram notices",
                           "reason": "uses it"}]}
    result = run(vault_path, "new", "-", "--json", input=json.dumps(card))
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    shown = json.loads(run(vault_path, "show", out["id"], "--json").output)
    assert shown["title"] == "Notify before restart" and shown["importance"] == 0.8
    assert shown["claims"][0]["evidence"][0]["source"] == "[[s-1#^t3]]"
    assert shown["relations"][0]["type"] == "DEPENDS_ON"
    assert git_log(vault_path)[0].startswith('new: pattern card "Notify before restart"')


def test_new_rejects_bad_input_with_usage_exit(vault_path: Path) -> None:
    bad_json = run(vault_path, "new", "-", input="{not json")
    assert bad_json.exit_code == 2 and "not valid JSON" in bad_json.output
    no_title = run(vault_path, "new", "-", "--json", input='{"type": "fact"}')
    assert no_title.exit_code == 2 and json.loads(no_title.output)["error"] == "UsageError"
    bad_conf = run(vault_path, "new", "-", input='{"title": "x", "importance": 7}')
    assert bad_conf.exit_code == 2
    dangling = run(vault_path, "new", "-", input='{"title": "x", "relations": '
                                                '[{"type": "CAUSES", "target": "ghost"}]}')
    assert dangling.exit_code == 1
    assert not list((vault_path / "cards").rglob("x.md"))
    assert run(vault_path, "new", "--title", "dup").exit_code == 0
    assert run(vault_path, "new", "--title", "DUP").exit_code == 1


def test_no_commit_leaves_change_uncommitted(vault_path: Path) -> None:
    commits = git_log(vault_path)
    assert run(vault_path, "new", "--title", "Draft", "--no-commit").exit_code == 0
    assert git_log(vault_path) == commits
    assert "Draft.md" in git.Repo(vault_path).git.status("--porcelain", "-uall")


def test_show_human_output_has_no_colour_when_piped(vault_path: Path) -> None:
    _two_cards(vault_path)
    result = run(vault_path, "show", "Gateway restart")
    assert result.exit_code == 0
    assert "\x1b[" not in result.output
    assert "Gateway restart  [pattern card]" in result.output
    assert "RELATES_TO → [[Telegram notices]]" in result.output


def test_usage_errors_exit_2_and_missing_vault_exits_1(tmp_path: Path) -> None:
    assert CliRunner().invoke(cli, ["show"]).exit_code == 2
    assert CliRunner().invoke(cli, ["frobnicate"]).exit_code == 2
    missing = CliRunner().invoke(cli, ["--vault", str(tmp_path / "none"), "show", "x"])
    assert missing.exit_code == 1 and "alaya init" in missing.output


def test_doctor_on_fresh_vault_is_clean(vault_path: Path) -> None:
    result = run(vault_path, "doctor", "--json")
    data = json.loads(result.output)
    assert result.exit_code == 0 and data["ok"] is True
    names = {c["name"] for c in data["checks"]}
    assert {"vault", "config", "git", "notes"} <= names


def test_every_command_has_help() -> None:
    for name in command_names():
        command = cli.get_command(None, name)
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0 and command.help and "Example" in result.output, name


def test_doctor_reports_stale_artifacts_lock_dead_server_and_budget(
        vault_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys
    import time

    from compilers.options import CompileOptions
    from compilers.pipeline import compile_vault
    from vault_engine.providers.embedding import HashEmbedder

    def checks() -> dict[str, dict]:
        res = CliRunner().invoke(cli, ["--vault", str(vault_path), "doctor", "--json"])
        return {c["name"]: c for c in json.loads(res.output)["checks"]}

    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    assert checks()["artifacts"]["fix"] == "alaya compile"  # never compiled
    compile_vault(Vault.open(vault_path), CompileOptions(embedder=HashEmbedder()))
    assert checks()["artifacts"]["ok"]
    (vault_path / "cards" / "new.md").write_text("---\nid: card-n\ntitle: New\n---\nx\n")
    c = checks()["artifacts"]
    assert not c["ok"] and "1 added" in c["message"] and c["fix"].startswith("alaya compile")
    (vault_path / ".alaya" / "serve.json").write_text('{"url": "http://127.0.0.1:1", '
                                                      '"pid": 999999999, "token": null}')
    assert "rm " in checks()["serve"]["fix"]
    memory = vault_path / "MEMORY.md"
    memory.write_text(memory.read_text() + "y" * 12_000)
    assert "budget" in checks()["memory-budget"]["message"]
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from filelock import FileLock; "
        f"l = FileLock({str(vault_path / '.alaya' / 'lock')!r}); l.acquire(); "
        "print('held', flush=True); time.sleep(30)")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert "fuser" in checks()["lock"]["fix"]
    finally:
        holder.kill()
        holder.wait(10)
    time.sleep(0.1)
    assert "lock" not in checks()


def test_alaya_now_sets_the_clock_of_every_command(vault_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_NOW", "2027-03-01T08:30:00Z")
    assert run(vault_path, "new", "--title", "What-if card").exit_code == 0
    card = Vault.open(vault_path).load().find("What-if card")
    assert str(card.created) == "2027-03-01 08:30:00+00:00"
    monkeypatch.setenv("ALAYA_NOW", "next tuesday")
    bad = CliRunner().invoke(cli, ["--vault", str(vault_path), "new", "--title", "Other"])
    assert bad.exit_code == 2 and "ALAYA_NOW='next tuesday' is not an ISO-8601 time" in bad.output
    assert "ALAYA_NOW=2027-03-01T00:00:00Z" in bad.output  # the fix
