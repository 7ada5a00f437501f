"""Golden files: every template note and every awkward fixture note round-trips byte for byte,
and a scripted edit produces exactly the checked-in result."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from vault_engine.store.frontmatter import FlowMap, NoteText
from vault_engine.store.init_vault import template_files
from vault_engine.store.notes import parse_note

FIXTURES = Path(__file__).parent / "fixtures"
AWKWARD = sorted(p for p in (FIXTURES / "awkward").rglob("*.md"))
TEMPLATE = [(rel, src) for rel, src in template_files() if rel.endswith(".md")]


@pytest.mark.parametrize("path", AWKWARD, ids=lambda p: p.name)
def test_awkward_fixture_roundtrips(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    assert NoteText.parse(text).render() == text
    rel = path.relative_to(FIXTURES / "awkward").as_posix()
    note = parse_note(rel, text)
    assert note.path == rel and not [i for i in note.issues if i.severity == "error"]


@pytest.mark.parametrize("rel,src", TEMPLATE, ids=lambda x: str(x))
def test_template_notes_roundtrip(rel: str, src: Path) -> None:
    text = src.read_text(encoding="utf-8")
    assert NoteText.parse(text).render() == text
    parse_note(rel, text)


def _scripted_edit(text: str) -> str:
    doc = NoteText.parse(text)
    doc.frontmatter.append_item("relations", FlowMap(type="SIMILAR_TO", target="[[Brad]]",
                                                     weight=0.5, reason="both about routing"))
    doc.set("updated", dt.datetime(2026, 4, 2, 9, 30, tzinfo=dt.UTC))
    doc.set("tags", ["gateway", "telegram", "ops", "网关"])
    return doc.render()


@pytest.mark.parametrize("name", ["Gateway restart drops Telegram notices.md", "crlf.md"])
def test_scripted_edit_matches_golden(name: str) -> None:
    src = FIXTURES / "awkward" / "cards" / "gotcha" / name
    golden = FIXTURES / "golden" / (name[:-3] + ".after.md")
    result = _scripted_edit(src.read_bytes().decode("utf-8"))
    if os.environ.get("ALAYA_REGEN_GOLDEN"):
        golden.write_bytes(result.encode("utf-8"))
    assert result == golden.read_bytes().decode("utf-8")
