"""Wikilink grammar, code exclusion, inline fields and Obsidian-style resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_engine.errors import AmbiguousError, NotFoundError, UnsafePathError
from vault_engine.store.links import LinkResolver, is_unsafe_target, parse_link, scan_body
from vault_engine.store.notes import parse_note
from vault_engine.store.vault import Vault


def test_parse_link_parts() -> None:
    link = parse_link("![[Folder/Note#^t3|shown]]")
    assert (link.target, link.block, link.heading, link.display, link.embed) == (
        "Folder/Note", "t3", None, "shown", True)
    heading = parse_link("[[Note#Some heading]]")
    assert heading.heading == "Some heading" and heading.block is None
    same_note = parse_link("[[#Local]]")
    assert same_note.target == "" and same_note.heading == "Local"


def test_links_in_code_are_not_links() -> None:
    body = ("a [[One]] and `[[Two]]` and ``x [[Three]] x``\n\n"
            "```\n[[Four]]\n```\n\n~~~md\n[[Five]]\n~~~\n\n    [[Six indented code]]\n\n"
            "- item [[Seven]]\n> quote [[Eight]]\n| a | [[Nine\\|9]] |\n")
    links, _ = scan_body(body, 1)
    assert [link.target for link in links] == ["One", "Seven", "Eight", "Nine"]
    assert links[-1].display == "9"
    assert links[0].line == 1 and links[1].line == 13


def test_inline_fields_are_typed() -> None:
    body = ("CAUSED_BY:: [[A]]\n- depends on:: [[B]], [[C]]\n"
            "text [REFERENCES:: [[D]]] then [[E]]\nled-to:: [[F]]\nnot a field [[G]]\n")
    _, typed = scan_body(body, 10)
    assert [(t, link.target, link.line) for t, link in typed] == [
        ("CAUSED_BY", "A", 10), ("DEPENDS_ON", "B", 11), ("DEPENDS_ON", "C", 11),
        ("REFERENCES", "D", 12), ("LED_TO", "F", 13)]


def test_body_relations_from_note() -> None:
    note = parse_note("cards/x.md", "---\nid: x\n---\nsee [[A]]\nCAUSES:: [[B]]\n")
    assert [(r.type, r.target, r.origin) for r in note.relations] == [
        ("CAUSES", "B", "inline"), ("RELATES_TO", "A", "body")]


@pytest.mark.parametrize("target", ["../../etc/passwd", "/etc/passwd", "..", "a/../../b",
                                    "C:/Windows", "~/secrets", "..\\..\\x"])
def test_unsafe_targets(target: str) -> None:
    assert is_unsafe_target(target)


def _notes() -> list:
    return [
        parse_note("cards/pattern/Gateway restart.md",
                   "---\nid: card-1\ntitle: Gateway restart\naliases: [restart notice]\n---\n"),
        parse_note("cards/concept/Telegram.md", "---\nid: card-2\ntitle: Telegram bot\n---\n"),
        parse_note("entities/Telegram.md", "---\nid: ent-1\ntitle: Telegram (company)\n---\n"),
        parse_note("entities/网关.md", "---\nid: ent-2\ntitle: 网关\naliases: [Gateway 中文]\n---\n"),
    ]


def test_resolution_order_and_ambiguity() -> None:
    """Obsidian's rules for links (issue 14: aliases, titles and ids are not link targets in
    a body; they are hints for lint and work where an agent names a note, `lookup`)."""
    r = LinkResolver(_notes(), attachments=["attachments/diagram.png"])
    assert r.resolve("gateway restart").note.id == "card-1"  # file name, case-insensitive
    assert r.resolve("Gateway restart.md").note.id == "card-1"
    for ref, kind, note_id in (("card-2", "id", "card-2"), ("Telegram bot", "title", "card-2"),
                               ("restart notice", "alias", "card-1"),
                               ("gateway 中文", "alias", "ent-2")):
        res = r.resolve(ref)
        assert res.note is None and res.hint.id == note_id and res.hint_kind == kind, ref
        assert r.resolve(ref, extras=True).note.id == note_id  # alaya's frontmatter links
        assert r.lookup(ref).note.id == note_id  # where an agent names a note
    assert r.resolve("网关").note.id == "ent-2"
    # two files named Telegram.md: the source's own folder wins, else the shortest path
    assert r.resolve("Telegram", "cards/concept/Other.md").note.id == "card-2"
    assert r.resolve("Telegram", "Home.md").note.id == "ent-1"
    amb = r.lookup("Telegram")  # a bare name on the command line is asked about
    assert amb.reason == "ambiguous" and len(amb.candidates) == 2
    assert r.resolve("entities/Telegram").note.id == "ent-1"  # an exact path
    assert r.resolve("concept/Telegram").note.id == "card-2"  # path suffix, as Obsidian
    assert r.resolve("diagram.png").reason == "attachment"
    assert r.resolve("diagram").reason == "missing"  # an attachment needs its extension
    assert r.resolve("nothing").reason == "missing"
    assert r.resolve("../../etc/passwd").reason == "unsafe"
    assert r.resolve("../Telegram", "cards/concept/sub/x.md").note.id == "card-2"  # relative
    assert r.resolve("./Telegram", "entities/x.md").note.id == "ent-1"
    assert r.resolve("../../../x", "cards/concept/x.md").reason == "unsafe"  # leaves the vault


def test_vault_find_refuses_traversal_and_reports_ambiguity(awkward_vault: Path) -> None:
    index = Vault.open(awkward_vault).load()
    assert index.find("restart notice").id == "card-7f3a2c"
    assert index.find("重启通知模式").id == "card-中文-1"
    with pytest.raises(UnsafePathError):
        index.find("../../etc/passwd")
    with pytest.raises(NotFoundError):
        index.find("no such note")
    ambiguous = Vault.open(awkward_vault)
    (awkward_vault / "cards" / "Brad.md").write_text("---\nid: card-brad\n---\n")
    with pytest.raises(AmbiguousError):
        ambiguous.load().find("Brad")
