"""Hostile files in the vault (issue #13): a self-referencing YAML alias, an alias bomb,
duplicate keys, symlinks out of the vault and dangling ones, UTF-16 — each a finding with its
file and line, never a crash or a hang, and every other note keeps working."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cli.main import cli

ALAYA = str(Path(sys.executable).parent / "alaya")
SELF_ALIAS = "---\ntitle: loop\nself: &a [*a]\n---\nA note that refers to itself.\n"
BOMB = "---\ntitle: bomb\n" + "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9 if i else ["lol"] * 9)
    + "]\n" for i in range(9)) + "---\n"
DUPLICATE = "---\nid: card-dup\ntitle: First title\ntype: fact\ntitle: Second title\n---\nx\n"


def alaya(vault: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault), *args])


@pytest.fixture
def hostile(vault_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    v = vault_path
    assert alaya(v, "new", "--title", "Gateway restart", "--type", "gotcha", "--claim",
                 "Restarting the gateway drops Telegram notices").exit_code == 0
    assert alaya(v, "new", "--title", "Telegram notices", "--type", "fact").exit_code == 0
    bad = v / "cards" / "bad"
    bad.mkdir(parents=True)
    (bad / "self.md").write_text(SELF_ALIAS)
    (bad / "bomb.md").write_text(BOMB)
    (bad / "dup.md").write_text(DUPLICATE)
    (bad / "utf16.md").write_bytes("---\ntitle: 中文笔记\n---\n正文\n".encode("utf-16"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text("---\ntitle: Outside\n---\nsshkey-outside-the-vault\n")
    os.symlink(outside / "private.md", v / "cards" / "outside.md")
    os.symlink(outside, v / "cards" / "linked-folder")
    os.symlink(v / "cards" / "gone.md", v / "cards" / "dangling.md")
    return v


def test_the_payloads_are_the_sizes_the_issue_names() -> None:
    assert len(SELF_ALIAS.encode()) < 80 and 300 < len(BOMB.encode()) < 450


def test_every_command_survives_and_reports_each_file(hostile: Path) -> None:
    v = hostile
    # compile and recall in a real process, with a deadline: a bomb would hang them
    env = {**os.environ, "ALAYA_EMBED_PROVIDER": "hash"}
    done = subprocess.run([ALAYA, "--vault", str(v), "compile", "--json"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    compiled = json.loads(done.stdout)
    bad = {m["path"] for m in compiled["malformed"]}
    assert {"cards/bad/self.md", "cards/bad/bomb.md", "cards/bad/utf16.md"} <= bad
    recall = json.loads(subprocess.run(
        [ALAYA, "--vault", str(v), "recall", "gateway restart telegram sshkey", "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=True).stdout)
    assert recall["nodes"] and "sshkey-outside" not in json.dumps(recall)
    for args in (["doctor"], ["show", "Gateway restart"], ["link", "Gateway restart",
                 "Telegram notices", "--rel", "DEPENDS_ON"], ["new", "--title", "Another"],
                 ["status"], ["export", "--format", "markdown", "--output",
                                    str(v.parent / "export")]):
        result = alaya(v, *args)
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            (args, result.output)
        assert "Traceback" not in result.output, (args, result.output)
    assert not any("sshkey-outside" in p.read_text() for p in (v.parent / "export").rglob("*.md"))
    assert "Restarting the gateway" in alaya(v, "show", "Gateway restart").output
    lint = json.loads(alaya(v, "lint", "--format", "json", "--no-report").output)
    by = {(f["path"], f["code"]): f for f in lint["findings"]}
    loop = by[("cards/bad/self.md", "malformed-frontmatter")]
    assert loop["line"] == 3 and "alias" in loop["message"]
    assert by[("cards/bad/bomb.md", "malformed-frontmatter")]["line"] == 4
    dup = by[("cards/bad/dup.md", "duplicate-key")]
    assert dup["severity"] == "error" and "lines 3 and 5" in dup["message"]
    utf16 = by[("cards/bad/utf16.md", "unreadable-note")]
    assert "UTF-16" in utf16["message"] and "re-encode it as UTF-8" in utf16["fix"]
    assert "binary" not in utf16["message"]
    for link in ("cards/outside.md", "cards/linked-folder", "cards/dangling.md"):
        assert by[(link, "symlink")]["severity"] == "warning"
    assert "outside the vault" in by[("cards/outside.md", "symlink")]["message"]
    assert "does not exist" in by[("cards/dangling.md", "symlink")]["message"]
    doctor = json.loads(alaya(v, "doctor", "--json").output)
    names = {c["name"]: c for c in doctor["checks"]}
    assert len(names["symlinks"]["items"]) == 3
    assert any("cards/bad/self.md:3" in i for i in names["notes"]["items"])


def test_import_never_follows_a_symlink(vault_path: Path, tmp_path: Path) -> None:
    source = tmp_path / "obsidian"
    source.mkdir()
    (source / "note.md").write_text("---\ntitle: Real\n---\nreal text\n")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "id_rsa.md").write_text("---\ntitle: Key\n---\nprivate-outside\n")
    os.symlink(secret, source / "linked")
    os.symlink(secret / "id_rsa.md", source / "key.md")
    result = alaya(vault_path, "import", str(source), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["imported"] == ["cards/imported/note.md"]
    assert any("symlink" in s for s in report["skipped"])
    assert not any("private-outside" in p.read_text() for p in vault_path.rglob("*.md"))
