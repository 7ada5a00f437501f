"""No human save is lost (issue #13): the write gateway checks the file at the replace itself,
puts back a save that lands during the replace, and re-applies its edit — against an editor
process saving every 2 ms while `alaya link` writes the same card 20 times."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vault_engine.store import atomic
from vault_engine.store import cards as card_ops
from vault_engine.store.notes import parse_note
from vault_engine.store.vault import Vault

EDITOR = textwrap.dedent("""
    import os, sys, time
    path, mode, stop = sys.argv[1], sys.argv[2], sys.argv[3]
    n = 0
    while not os.path.exists(stop):
        n += 1
        line = f"human save {n}\\n"
        if mode == "append":      # one write() at the end of the file, like an append-save
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            os.write(fd, line.encode())
            os.close(fd)
        else:                     # reload the file, add a line, write it back in place
            with open(path, "rb") as fh:
                text = fh.read()
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, text + line.encode())
            os.close(fd)
        time.sleep(0.002)
    print(n)
""")


@pytest.fixture
def linked_pair(vault_path: Path) -> tuple[Vault, Path]:
    vault = Vault.open(vault_path)
    card_ops.create_card(vault, card_ops.NewCard(title="Gateway restart", type="gotcha",
                                                 content="Notes:\n"))
    for i in range(20):
        card_ops.create_card(vault, card_ops.NewCard(title=f"Target {i}", type="fact"))
    return vault, vault_path / "cards" / "gotcha" / "Gateway restart.md"


@pytest.mark.parametrize("mode", ["append", "rewrite"])
def test_an_editor_saving_every_2ms_during_20_writes_loses_nothing(
        linked_pair: tuple[Vault, Path], tmp_path: Path, mode: str) -> None:
    vault, card = linked_pair
    stop = tmp_path / "stop"
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(card), mode, str(stop)],
                              stdout=subprocess.PIPE, text=True)
    try:
        for i in range(20):
            card_ops.link(vault, "Gateway restart", f"Target {i}", "DEPENDS_ON")
    finally:
        stop.write_text("")
        saves = int(editor.communicate(timeout=30)[0])
    text = card.read_text()
    assert saves > 20  # the editor really saved all along
    note = parse_note("cards/gotcha/Gateway restart.md", text)
    assert note.id and note.title == "Gateway restart" and "Notes:" in note.body
    assert text.endswith(f"human save {saves}\n")  # the last save is the file's end
    if mode == "append":
        # an editor that adds to the file: every save and every link survive
        for n in range(1, saves + 1):
            assert f"human save {n}\n" in text, (n, saves)
        for i in range(20):
            assert f"'[[Target {i}]]'" in text, i
    # an editor that reloads and rewrites the whole file in place can clobber a write made
    # between its read and its write (alaya's, or its own save merged back) — that is the
    # editor's race; alaya never builds a note from a half-saved file (the checks above)


def save_once_before_replace(card: Path, line: str,
                             monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Make the next os.replace onto `card` find an in-place save (`line` appended) that
    landed after alaya's check: the gap the gateway has to cover."""
    real_replace = os.replace
    saved: list[bool] = []

    def replace_after_a_save(src: str, dst: object) -> None:
        if Path(str(dst)) == card and not saved:
            with open(card, "a") as fh:
                fh.write(line)
            saved.append(True)
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace_after_a_save)
    return saved


def test_a_save_landing_during_the_replace_is_merged_and_the_edit_kept(
        linked_pair: tuple[Vault, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, card = linked_pair
    saved = save_once_before_replace(card, "saved during the replace\n", monkeypatch)
    card_ops.link(vault, "Gateway restart", "Target 3", "DEPENDS_ON")
    text = card.read_text()
    assert saved and "saved during the replace\n" in text and "'[[Target 3]]'" in text


def test_a_change_during_the_fsync_is_seen_at_the_replace(
        linked_pair: tuple[Vault, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The check runs after the temp file is written and synced, not before."""
    vault, card = linked_pair
    real_fsync = os.fsync
    changed = []

    def fsync_while_a_human_saves(fd: int) -> None:
        real_fsync(fd)
        if not changed:
            card.write_text(card.read_text() + "typed while alaya synced\n")
            changed.append(True)

    monkeypatch.setattr(atomic.os, "fsync", fsync_while_a_human_saves)
    card_ops.link(vault, "Gateway restart", "Target 4", "DEPENDS_ON")
    text = card.read_text()
    assert changed and "typed while alaya synced\n" in text and "'[[Target 4]]'" in text


def test_a_save_during_a_plain_write_is_merged_in(
        linked_pair: tuple[Vault, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, card = linked_pair
    rel = "cards/gotcha/Gateway restart.md"
    check = vault.current_checksum(rel)
    old = card.read_text()
    saved = save_once_before_replace(card, "mine\n", monkeypatch)
    vault.write_text(rel, old.replace("Notes:", "Notes (alaya):"), check)
    text = card.read_text()
    assert saved and "mine\n" in text and "Notes (alaya):" in text  # both survive
