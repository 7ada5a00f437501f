"""Frontmatter round-trip: unchanged notes keep every byte; an edit touches only its lines."""

from __future__ import annotations

import datetime as dt
import difflib
import string

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_engine.errors import NoteParseError
from vault_engine.store.frontmatter import FlowMap, NoteText, dump_value, new_note_text

SAMPLE = """---
# leading comment
id: card-1   # trailing comment
title: 'Single quoted'
other: "double"
tags: [a, b]
relations:
  - {type: X, target: "[[A]]"}
  # about Y
  - type: Y
    target: B
score: 1.50
when: 2026-03-31T06:29:00Z
---
body [[link]]
"""


def changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.ndiff(before.splitlines(), after.splitlines())
            if line.startswith(("- ", "+ "))]


def test_unchanged_note_renders_identically() -> None:
    assert NoteText.parse(SAMPLE).render() == SAMPLE


def test_types_are_kept() -> None:
    data = NoteText.parse(SAMPLE).frontmatter.data
    assert data["score"] == 1.5 and isinstance(data["score"], float)
    assert data["when"] == dt.datetime(2026, 3, 31, 6, 29, tzinfo=dt.UTC)
    assert data["tags"] == ["a", "b"]


def test_set_changes_only_that_key() -> None:
    doc = NoteText.parse(SAMPLE)
    doc.set("other", "changed")
    after = doc.render()
    assert changed_lines(SAMPLE, after) == ['- other: "double"', "+ other: changed"]
    assert NoteText.parse(after).frontmatter.data["score"] == 1.5


def test_append_to_block_sequence_adds_one_line() -> None:
    doc = NoteText.parse(SAMPLE)
    doc.frontmatter.append_item("relations", FlowMap(type="DEPENDS_ON", target="[[Z]]"))
    after = doc.render()
    assert changed_lines(SAMPLE, after) == ["+   - {type: DEPENDS_ON, target: '[[Z]]'}"]
    rels = NoteText.parse(after).frontmatter.data["relations"]
    assert rels[-1] == {"type": "DEPENDS_ON", "target": "[[Z]]"}


def test_remove_item_keeps_comments_of_others() -> None:
    doc = NoteText.parse(SAMPLE)
    removed = doc.frontmatter.remove_items("relations", lambda r: r["type"] == "X")
    assert removed == 1
    after = doc.render()
    assert changed_lines(SAMPLE, after) == ['-   - {type: X, target: "[[A]]"}']
    assert "# about Y" in after


def test_new_key_goes_last_and_delete_removes_lines() -> None:
    doc = NoteText.parse(SAMPLE)
    doc.set("updated", dt.datetime(2026, 4, 1, 8, 0, tzinfo=dt.UTC))
    assert changed_lines(SAMPLE, doc.render()) == ["+ updated: 2026-04-01T08:00:00Z"]
    doc.frontmatter.delete("updated")
    assert doc.render() == SAMPLE


def test_crlf_and_bom_survive_edits() -> None:
    text = "\ufeff---\r\nid: x\r\ntags: [a]\r\n---\r\nbody\r\n"
    doc = NoteText.parse(text)
    assert doc.render() == text
    doc.set("tags", ["a", "b"])
    assert doc.render() == "\ufeff---\r\nid: x\r\ntags: [a, b]\r\n---\r\nbody\r\n"


def test_note_without_frontmatter_gains_one() -> None:
    doc = NoteText.parse("# Title\n\ntext\n")
    doc.set("id", "note-1")
    assert doc.render() == "---\nid: note-1\n---\n# Title\n\ntext\n"


def test_malformed_yaml_names_the_file_line() -> None:
    text = "---\nid: a\ntitle: [unclosed\ntags: x\n---\nbody\n"
    with pytest.raises(NoteParseError) as info:
        NoteText.parse(text, path="cards/bad.md")
    assert info.value.path == "cards/bad.md"
    assert info.value.line in (3, 4)
    assert "fix" in str(info.value)


def test_unclosed_frontmatter_is_an_error() -> None:
    with pytest.raises(NoteParseError, match="never closed"):
        NoteText.parse("---\nid: a\nbody\n", path="x.md")


def test_frontmatter_that_is_not_a_mapping() -> None:
    with pytest.raises(NoteParseError, match="not a mapping"):
        NoteText.parse("---\n- a\n- b\n---\n", path="x.md")


def test_multiline_strings_render_as_block_scalars() -> None:
    text = new_note_text({"id": "x", "text": "line one\nline two"}, "")
    assert "text: |-\n  line one\n  line two\n" in text
    assert NoteText.parse(text).frontmatter.data["text"] == "line one\nline two"


# -- property tests ---------------------------------------------------------------------

keys = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12).filter(
    lambda k: yaml.safe_load(k + ": 1") == {k: 1})  # not a YAML keyword such as `no`
scalars = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40),
    st.integers(-10**6, 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.none(),
    st.sampled_from(["[[Link]]", "网关", "a: b", "# not comment", "'quoted'", "yes", "1.0"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)), max_leaves=10)
# The styles a human may have typed: each mapping rendered flow, block or default.
styles = st.sampled_from([None, True, False])


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, dict[str, object]]:
    data = draw(st.dictionaries(keys, values, min_size=1, max_size=6))
    parts = []
    for k, v in data.items():
        style = draw(styles)
        if style and isinstance(v, list | dict) and v:
            flow = yaml.safe_dump(v, default_flow_style=True, allow_unicode=True,
                                  sort_keys=False, width=10**6).strip()
            chunk = f"{k}: {flow}\n"
        else:
            nested = isinstance(v, list | dict) and style is None  # flow only for leaf collections
            chunk = yaml.safe_dump({k: v}, default_flow_style=None if nested else False,
                                   allow_unicode=True, sort_keys=False,
                                   width=draw(st.sampled_from([40, 80, 10**6])))
        if draw(st.booleans()):
            chunk = "# comment about " + k + "\n" + chunk
        parts.append(chunk)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    fm = "".join(parts).replace("\n", newline)
    body = draw(st.text(max_size=60)).replace("\r", "")
    return f"---{newline}{fm}---{newline}{body}", data


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_property_roundtrip_is_byte_identical(doc: tuple[str, dict[str, object]]) -> None:
    text, data = doc
    parsed = NoteText.parse(text)
    assert parsed.render() == text
    assert parsed.frontmatter.data == data


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.data())
def test_property_edit_changes_only_that_key(doc: tuple[str, dict[str, object]],
                                             data: st.DataObject) -> None:
    text, original = doc
    key = data.draw(st.sampled_from(sorted(original)))
    new_value = data.draw(values)
    parsed = NoteText.parse(text)
    parsed.set(key, new_value)
    after = parsed.render()
    reparsed = NoteText.parse(after).frontmatter.data
    assert reparsed[key] == new_value
    for other, value in original.items():
        if other != key:
            assert reparsed[other] == value
    # Only lines of that key changed: removing them from both sides leaves the same text.
    old_span = NoteText.parse(text).frontmatter.spans[key]
    new_span = NoteText.parse(after).frontmatter.spans[key]
    before_lines = NoteText.parse(text).frontmatter.lines
    after_lines = NoteText.parse(after).frontmatter.lines
    assert (before_lines[:old_span.start] + before_lines[old_span.end:]
            == after_lines[:new_span.start] + after_lines[new_span.end:])
    assert "".join(after_lines[new_span.start:new_span.end]).replace("\r\n", "\n") == \
        dump_value(key, new_value)
