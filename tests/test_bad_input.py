"""Bad input: reported with file, line and fix; nothing else lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine.care.doctor import diagnose
from vault_engine.errors import NoteParseError
from vault_engine.store.namespaces import Caller
from vault_engine.store.notes import decode_note
from vault_engine.store.vault import Vault


def _write(root: Path, rel: str, data: bytes | str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


def test_malformed_yaml_is_reported_and_the_rest_loads(vault_path: Path) -> None:
    _write(vault_path, "cards/fact/ok.md", "---\nid: card-ok\ntitle: Fine\n---\nfine\n")
    _write(vault_path, "cards/fact/bad.md", "---\nid: card-bad\ntitle: broken: yes: no\n"
                                            "tags: [a\n---\nbody\n")
    index = Vault.open(vault_path).load()
    assert "card-ok" in index.ids()
    [issue] = index.issues
    assert issue.path == "cards/fact/bad.md" and issue.code == "malformed-frontmatter"
    assert issue.line in (3, 4, 5) and issue.fix
    checks = {c.name: c for c in diagnose(vault_path, Caller.owner())}
    assert not checks["notes"].ok
    assert any(item.startswith("cards/fact/bad.md:") for item in checks["notes"].items)


def test_doctor_cli_lists_the_bad_note_and_exits_1(vault_path: Path) -> None:
    _write(vault_path, "cards/fact/bad.md", "---\ntitle: [unclosed\n---\n")
    result = CliRunner().invoke(cli, ["--vault", str(vault_path), "doctor", "--json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    notes = next(c for c in data["checks"] if c["name"] == "notes")
    assert notes["ok"] is False and "cards/fact/bad.md:2" in notes["items"][0]


def test_binary_and_huge_files(vault_path: Path) -> None:
    _write(vault_path, "cards/fact/binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00garbage")
    huge = vault_path / "cards" / "fact" / "huge.md"
    with huge.open("wb") as fh:  # a sparse 50 MB file: must be refused without reading it
        fh.truncate(50 * 1024 * 1024)
    (vault_path / "attachments").mkdir()
    blob = vault_path / "attachments" / "dump.bin"
    with blob.open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    _write(vault_path, "cards/fact/ok.md", "---\nid: card-ok\n---\n")
    index = Vault.open(vault_path).load()
    by_path = {i.path: i for i in index.issues}
    assert "binary" in by_path["cards/fact/binary.md"].message
    assert "over the" in by_path["cards/fact/huge.md"].message
    assert "attachments/dump.bin" not in by_path  # not a note: an attachment
    assert "card-ok" in index.ids()


def test_non_utf8_names_the_line() -> None:
    with pytest.raises(NoteParseError) as info:
        decode_note(b"---\nid: a\n---\nline four \xff\xfe\n", "x.md")
    assert info.value.line == 4 and "UTF-8" in info.value.message


def test_invalid_ids_and_traversal_links(vault_path: Path) -> None:
    _write(vault_path, "cards/fact/evil.md",
           "---\nid: ../../etc/passwd\ntitle: Evil\n---\nsee [[../../etc/passwd]]\n")
    _write(vault_path, "cards/fact/slash.md", "---\nid: a/b\ntitle: Slash\n---\n")
    index = Vault.open(vault_path).load()
    evil = index.find("Evil")
    assert evil.id is None and evil.issues[0].code == "invalid-id"
    assert index.resolver.resolve("../../etc/passwd").reason == "unsafe"
    assert index.find("Slash").id is None
    runner = CliRunner()
    result = runner.invoke(cli, ["--vault", str(vault_path), "show", "../../etc/passwd"])
    assert result.exit_code == 1 and "outside the vault" in result.output
    vault = Vault.open(vault_path)
    with pytest.raises(Exception, match="outside the vault"):
        vault.abspath("../outside.md")


def test_symlink_out_of_the_vault_is_refused(vault_path: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\nid: secret\n---\n")
    (vault_path / "cards" / "link").symlink_to(outside, target_is_directory=True)
    vault = Vault.open(vault_path)
    assert "secret" not in vault.load().ids()  # symlinked folders are not followed
    with pytest.raises(Exception, match="outside the vault"):
        vault.abspath("cards/link/secret.md")


def test_duplicate_ids(vault_path: Path) -> None:
    _write(vault_path, "cards/fact/one.md", "---\nid: card-dup\ntitle: One\n---\n")
    _write(vault_path, "cards/fact/two.md", "---\nid: card-dup\ntitle: Two\n---\n")
    index = Vault.open(vault_path).load()
    assert set(index.duplicate_ids()) == {"card-dup"}
    result = CliRunner().invoke(cli, ["--vault", str(vault_path), "show", "card-dup"])
    assert result.exit_code == 1 and "2 notes" in result.output
    checks = {c.name: c for c in diagnose(vault_path, Caller.owner())}
    assert "card-dup" in checks["duplicate-ids"].items[0]


def test_cjk_titles_and_file_names(vault_path: Path) -> None:
    runner = CliRunner()
    base = ["--vault", str(vault_path)]
    r1 = runner.invoke(cli, base + ["new", "--title", "网关重启: 通知/告警", "--type", "gotcha"])
    assert r1.exit_code == 0, r1.output
    r2 = runner.invoke(cli, base + ["new", "--title", "通知机制", "--json"])
    assert r2.exit_code == 0
    path = vault_path / "cards" / "gotcha" / "网关重启 - 通知 - 告警.md"
    assert path.exists()
    r3 = runner.invoke(cli, base + ["link", "网关重启: 通知/告警", "通知机制", "--rel", "DEPENDS_ON"])
    assert r3.exit_code == 0, r3.output
    assert "{type: DEPENDS_ON, target: '[[通知机制]]', weight: 1.0}" in path.read_text("utf-8")
    shown = json.loads(runner.invoke(cli, base + ["show", "网关重启: 通知/告警", "--json"]).output)
    assert shown["relations"][0]["target"] == "通知机制"
