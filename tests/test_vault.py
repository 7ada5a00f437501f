"""The write gateway: atomic, locked, checksum-guarded, merged, rolled back."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from vault_engine.errors import ConflictError
from vault_engine.store import cards
from vault_engine.store.frontmatter import FlowMap, NoteText
from vault_engine.store.vault import TMP_MARKER, Vault

from .conftest import git_log

CARD = "---\nid: card-a\ntitle: A\nrelations:\n  - {type: X, target: '[[B]]'}\n---\nbody\n"


def _card(vault: Vault, rel: str = "cards/fact/A.md", text: str = CARD) -> str:
    path = vault.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return rel


def test_guard_refuses_overwrite_of_changed_file(vault: Vault) -> None:
    rel = _card(vault)
    _text, check = vault.read_text(rel)
    (vault.root / rel).write_text(CARD + "human line\n", encoding="utf-8")
    with pytest.raises(ConflictError, match="changed on disk"):
        vault.write_text(rel, "tool text\n", check)
    assert (vault.root / rel).read_text(encoding="utf-8").endswith("human line\n")


def test_create_never_clobbers(vault: Vault) -> None:
    rel = _card(vault)
    with pytest.raises(ConflictError, match="already exists"), vault.transaction("x") as tx:
        tx.create(rel, "new\n")
    assert (vault.root / rel).read_text(encoding="utf-8") == CARD


def test_human_edit_between_read_and_write_is_merged(vault: Vault) -> None:
    """The human changed the frontmatter too (the region alaya edits): re-read, re-applied."""
    rel = _card(vault)
    calls = {"n": 0}

    def human_saves() -> None:  # Obsidian saves while the tool is editing
        calls["n"] += 1
        if calls["n"] == 1:
            text = (vault.root / rel).read_text(encoding="utf-8")
            (vault.root / rel).write_text(text.replace("body\n", "body, edited by a human\n")
                                          .replace("title: A\n", "title: A\ntags: [h]\n"),
                                          encoding="utf-8")

    def edit(doc: NoteText) -> None:
        doc.frontmatter.append_item("relations", FlowMap(type="Y", target="[[C]]"))

    vault.update_note(rel, edit, _before_write=human_saves)
    final = (vault.root / rel).read_text(encoding="utf-8")
    assert "body, edited by a human" in final and "tags: [h]" in final
    assert "{type: Y, target: '[[C]]'}" in final
    assert final.count("type: Y") == 1 and calls["n"] == 2


def test_human_body_edit_during_a_frontmatter_edit_is_merged_at_the_replace(
        vault: Vault) -> None:
    """Only the body changed under alaya's frontmatter edit (issue #13): the two regions are
    taken from each side at the replace itself — no re-read, nothing lost."""
    rel = _card(vault)
    calls = {"n": 0}

    def human_saves() -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            path = vault.root / rel
            path.write_text(path.read_text().replace("body\n", "body, typed meanwhile\n"))

    vault.update_note(rel, lambda doc: doc.frontmatter.append_item(
        "relations", FlowMap(type="Y", target="[[C]]")), _before_write=human_saves)
    final = (vault.root / rel).read_text(encoding="utf-8")
    assert "body, typed meanwhile" in final and "{type: Y, target: '[[C]]'}" in final
    assert calls["n"] == 1


def test_crash_mid_write_leaves_original_and_no_temp(vault: Vault, monkeypatch) -> None:
    rel = _card(vault)

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        vault.write_text(rel, "replacement\n", None)
    monkeypatch.undo()
    assert (vault.root / rel).read_text(encoding="utf-8") == CARD
    assert not [p for p in (vault.root / "cards" / "fact").iterdir() if TMP_MARKER in p.name]


def test_transaction_rolls_back_every_file(vault: Vault) -> None:
    rel = _card(vault)
    with pytest.raises(RuntimeError), vault.transaction("half") as tx:
        tx.update(rel, lambda doc: doc.set("title", "Changed"))
        tx.create("cards/fact/New.md", "---\nid: card-new\n---\n")
        raise RuntimeError("failure half-way")
    assert (vault.root / rel).read_text(encoding="utf-8") == CARD
    assert not (vault.root / "cards/fact/New.md").exists()
    assert git_log(vault.root) == [git_log(vault.root)[-1]]  # only the init commit


def _link_worker(root: str, target: str, queue: multiprocessing.Queue) -> None:
    try:
        cards.link(Vault.open(Path(root)), "Hub", target, "DEPENDS_ON")
        queue.put(None)
    except Exception as exc:  # reported to the parent, which fails the test
        queue.put(repr(exc))


def test_concurrent_writers_lose_nothing(vault: Vault) -> None:
    cards.create_card(vault, cards.NewCard(title="Hub"))
    targets = [f"Target {i}" for i in range(6)]
    for t in targets:
        cards.create_card(vault, cards.NewCard(title=t))
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_link_worker, args=(str(vault.root), t, queue)) for t in targets]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    errors = [queue.get(timeout=5) for _ in procs]
    assert errors == [None] * len(targets)
    hub = Vault.open(vault.root).load().find("Hub")
    assert sorted(r.target for r in hub.relations) == sorted(targets)
    messages = git_log(vault.root)
    assert sum(m.startswith("link: \"Hub\"") for m in messages) == len(targets)


def test_parsed_note_cache_reuses_unchanged_notes_and_never_serves_stale(vault_path: Path) -> None:
    from vault_engine.store.vault import PARSED_CACHE

    (vault_path / "cards" / "a.md").write_text("---\nid: card-a\ntitle: A\n---\nfirst\n")
    (vault_path / "cards" / "b.md").write_text("---\nid: card-b\ntitle: B\n---\nbody\n")
    vault = Vault.open(vault_path)
    first = {n.path: n for n in vault.load().notes}
    cache = vault_path / ".alaya" / PARSED_CACHE
    assert cache.exists()
    second = {n.path: n for n in Vault.open(vault_path).load().notes}
    assert second == first
    # same size, same second: only the checksum can tell — and it does
    (vault_path / "cards" / "a.md").write_text("---\nid: card-a\ntitle: A\n---\nfixed\n")
    third = {n.path: n for n in Vault.open(vault_path).load().notes}
    assert third["cards/a.md"].body.strip() == "fixed" and third["cards/b.md"] == first["cards/b.md"]
    cache.write_bytes(b"not a pickle")  # a broken cache is ignored and rewritten
    assert len(Vault.open(vault_path).load().notes) == len(first)
    (vault_path / "cards" / "b.md").unlink()
    assert "cards/b.md" not in {n.path for n in Vault.open(vault_path).load().notes}
