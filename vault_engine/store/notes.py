"""Parse a note file into typed objects; read bytes safely.

`parse_note(path, text)` is pure: text in, a `Note` (or `Card`, `Entity`, `Session`,
`Tombstone`) out, with problems collected as `Issue`s instead of exceptions wherever the rest
of the note is still usable. Only an unparseable frontmatter raises `NoteParseError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from vault_engine.errors import NoteParseError
from vault_engine.primitives import checksum, to_datetime

from .frontmatter import NoteText, iter_scalar_strings
from .ids import is_valid_id
from .links import headings_and_blocks, inline_tags, links_in_text, parse_link, scan_body
from .model import Card, Claim, Entity, Evidence, Issue, Note, Relation, Session, Tombstone, Turn, WikiLink

# Folder (first path segment) → note kind.
FOLDER_KINDS = {
    "cards": "card", "entities": "entity", "sessions": "session", "scenes": "scene",
    "reports": "report", "archive": "archive", "queries": "query", "templates": "template",
}
ROOT_KINDS = {"MEMORY.md": "memory", "persona.md": "persona", "AGENTS.md": "doc"}
BINARY_SNIFF_BYTES = 8192
EMBED_RELATION = "EMBEDS"  # the edge type of an embed `![[Note]]` (docs/vault-format.md)


def kind_for_path(rel: str) -> str:
    if rel in ROOT_KINDS:
        return ROOT_KINDS[rel]
    head, _, rest = rel.partition("/")
    if head.startswith("@") and rest in ROOT_KINDS:  # an agent's own persona (store/namespaces.py)
        return ROOT_KINDS[rest]
    first = rel.split("/", 1)[0]
    return FOLDER_KINDS.get(first, "note") if "/" in rel else "note"


_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 LE"), (b"\x00\x00\xfe\xff", "UTF-32 BE"),
         (b"\xff\xfe", "UTF-16 LE"), (b"\xfe\xff", "UTF-16 BE"))


def decode_note(data: bytes, rel: str) -> str:
    """Bytes → text, refusing binary content and invalid UTF-8 with the line at fault. UTF-16
    and UTF-32 text (with a byte-order mark) is named as such: Obsidian reads notes as UTF-8,
    so alaya asks for the file to be re-encoded rather than write back another encoding."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            raise NoteParseError(
                f"{name} text (byte-order mark {bom.hex(' ')}): notes must be UTF-8",
                path=rel, line=1,
                fix=f"re-encode it as UTF-8, e.g. `iconv -f {name.replace(' ', '')} -t UTF-8 "
                    f"'{rel}' > tmp.md && mv tmp.md '{rel}'` (or \"Save with encoding → "
                    "UTF-8\" in your editor)")
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise NoteParseError("binary content in a .md file", path=rel, line=None,
                             fix="move the file out of the vault or rename it without .md")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise NoteParseError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            path=rel, line=line, fix="re-save the file as UTF-8") from None


def _as_str_tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip()) if "," in value else (value,)
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value if v is not None and str(v).strip())
    return (str(value),)


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _unlink(text: str) -> str:
    """`[[session-x]]` → `session-x` (used for source_sessions, merged_into)."""
    text = text.strip()
    if text.startswith("[[") and text.endswith("]]"):
        return parse_link(text).target
    return text


class _Collector:
    def __init__(self, rel: str) -> None:
        self.rel = rel
        self.issues: list[Issue] = []

    def add(self, code: str, line: int | None, message: str, fix: str,
            severity: str = "error") -> None:
        self.issues.append(Issue(code=code, path=self.rel, line=line, message=message, fix=fix,
                                 severity=severity))


def _relations(meta: Mapping[str, Any], note_text: NoteText, issues: _Collector,
               body_links: list[WikiLink], typed: list[tuple[str, WikiLink]]
               ) -> tuple[Relation, ...]:
    fm = note_text.frontmatter
    rels: list[Relation] = []
    raw = meta.get("relations")
    if raw is not None and not isinstance(raw, list):
        issues.add("malformed-relation", fm.line_of("relations"),
                   "`relations` must be a list", "write `relations:` as a list of "
                   "{type, target, weight, reason} items")
        raw = []
    for i, item in enumerate(raw or []):
        line = fm.item_line("relations", i) or 0
        if not isinstance(item, Mapping) or not item.get("type") or not item.get("target"):
            issues.add("malformed-relation", line,
                       "a relation needs `type` and `target`",
                       "write it as {type: DEPENDS_ON, target: '[[Other note]]'}")
            continue
        link = parse_link(str(item["target"]), line=line, field="relations", frontmatter=True)
        weight = _as_float(item.get("weight"))
        extra = {k: v for k, v in item.items() if k not in ("type", "target", "weight", "reason")}
        rels.append(Relation(type=str(item["type"]).strip().upper(), target=link.target,
                             link=link, weight=1.0 if weight is None else weight,
                             reason=item.get("reason"), origin="frontmatter", line=line,
                             extra=extra))
    typed_ids = {id(link) for _, link in typed}
    for rel_type, link in typed:
        rels.append(Relation(type=rel_type, target=link.target, link=link, weight=1.0,
                             origin="inline", line=link.line))
    for link in body_links:
        if id(link) in typed_ids or not link.target:
            continue
        if link.embed:  # ![[Note#section]] shows that note inside this one
            rels.append(Relation(type=EMBED_RELATION, target=link.target, link=link,
                                 weight=0.5, origin="embed", line=link.line))
            continue
        rels.append(Relation(type="RELATES_TO", target=link.target, link=link, weight=0.5,
                             origin="body", line=link.line))
    return tuple(rels)


def _evidence(raw: Any, line: int) -> tuple[Evidence, ...]:
    out: list[Evidence] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, str):
            item = {"kind": "link" if "[[" in item else "text", "source": item}
        if not isinstance(item, Mapping):
            continue
        source = str(item.get("source") or item.get("sourceId") or "")
        link = parse_link(source, line=line, field="evidence",
                          frontmatter=True) if "[[" in source else None
        out.append(Evidence(kind=str(item.get("kind") or "unknown"), source=source,
                            confidence=_as_float(item.get("confidence")), link=link,
                            extra={k: v for k, v in item.items()
                                   if k not in ("kind", "source", "confidence")}))
    return tuple(out)


def _claims(meta: Mapping[str, Any], note_text: NoteText, issues: _Collector) -> tuple[Claim, ...]:
    raw = meta.get("claims")
    fm = note_text.frontmatter
    if raw is None:
        return ()
    if not isinstance(raw, list):
        issues.add("malformed-claim", fm.line_of("claims"), "`claims` must be a list",
                   "write claims as a list of {id, text, confidence, status, evidence}")
        return ()
    out: list[Claim] = []
    for i, item in enumerate(raw):
        line = fm.item_line("claims", i) or 0
        if isinstance(item, str):
            item = {"id": f"c{i + 1}", "text": item}
        if not isinstance(item, Mapping) or not item.get("text"):
            issues.add("malformed-claim", line, "a claim needs `text`",
                       "write it as {id: c1, text: '…', confidence: 0.8}")
            continue
        status = str(item.get("status") or "supported")
        known = ("id", "text", "confidence", "status", "valid_from", "valid_until", "evidence")
        out.append(Claim(id=str(item.get("id") or f"c{i + 1}"), text=str(item["text"]),
                         confidence=_as_float(item.get("confidence")), status=status,
                         valid_from=to_datetime(item.get("valid_from")),
                         valid_until=to_datetime(item.get("valid_until")),
                         evidence=_evidence(item.get("evidence"), line), line=line,
                         extra={k: v for k, v in item.items() if k not in known}))
    return tuple(out)


_TURN_HEAD_RE = re.compile(r"^> \[!(?P<callout>\w+)\][+-]? (?P<head>.*)$")
_TURN_ANCHOR_RE = re.compile(r"^\^(t\d+)\s*$")


def parse_turns(body: str, first_line: int) -> tuple[Turn, ...]:
    """Turns of a session note: a callout per turn followed by its `^tN` anchor line.

    ```
    > [!user] t3 · user · Alice · 2026-03-31 06:29:05
    > the turn's text, every line prefixed by "> "

    ^t3
    ```
    """
    turns: list[Turn] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        m = _TURN_HEAD_RE.match(lines[i])
        if not m:
            i += 1
            continue
        head_line = i
        parts = [p.strip() for p in m.group("head").split(" · ")]
        content: list[str] = []
        i += 1
        while i < len(lines) and lines[i].startswith(">"):
            content.append(lines[i][2:] if lines[i].startswith("> ") else lines[i][1:])
            i += 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        anchor = None
        if i < len(lines):
            am = _TURN_ANCHOR_RE.match(lines[i])
            if am:
                anchor = am.group(1)
                i += 1
        anchor = anchor or (parts[0] if parts and parts[0].startswith("t") else None)
        if anchor is None:
            continue
        role = parts[1] if len(parts) > 1 else m.group("callout")
        name = parts[2] if len(parts) > 2 and parts[2] and parts[2] != role else None
        when = to_datetime(parts[3]) if len(parts) > 3 else None
        source_id = None
        dates: tuple[tuple[str, str], ...] = ()
        for part in parts[4:]:  # each by its prefix: "id D1:3", "dates: yesterday = 2023-05-07"
            if part.startswith("dates:"):
                dates = _turn_dates(part[6:])
            elif source_id is None:
                source_id = part.removeprefix("id ").strip()
        index = int(anchor[1:]) if anchor[1:].isdigit() else len(turns) + 1
        turns.append(Turn(anchor=anchor, index=index, role=role, name=name, timestamp=when,
                          text="\n".join(content), line=first_line + head_line,
                          source_id=source_id or None, dates=dates))
    return tuple(turns)


def _turn_dates(text: str) -> tuple[tuple[str, str], ...]:
    """`yesterday = 2023-05-07; 上周六 = 2023-05-06` → (("yesterday", "2023-05-07"), …)."""
    out = []
    for item in text.split(";"):
        said, sep, day = item.partition("=")
        if sep and said.strip() and day.strip():
            out.append((said.strip(), day.strip()))
    return tuple(out)


def parse_note(rel: str, text: str, *, check: str | None = None) -> Note:
    """Parse note text at vault-relative path `rel`. Raises NoteParseError on bad YAML."""
    doc = NoteText.parse(text, path=rel)
    fm = doc.frontmatter
    meta = dict(fm.data)
    issues = _Collector(rel)
    kind = kind_for_path(rel)
    if kind == "card" and not any(k in meta for k in ("id", "alaya_id", "type", "claims")):
        kind = "note"  # a person's own note in a `cards/` folder of theirs, not an alaya card
    stem = rel.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.endswith(".md") else stem
    body_line = doc.body_line

    raw_id = meta.get("id")
    note_id: str | None = None
    if is_valid_id(meta.get("alaya_id")):  # a person's own `id` kept beside alaya's
        note_id = str(meta["alaya_id"])
    elif raw_id is not None:
        if is_valid_id(raw_id):
            note_id = str(raw_id)
        else:
            issues.add("invalid-id", fm.line_of("id"),
                       f"id {raw_id!r} is not usable (no '/', '..', spaces)",
                       "use letters, digits, '-', '_' or '.', e.g. card-7f3a2c1d")
    title = meta.get("title")
    title = str(title) if title not in (None, "") else stem

    body_links, typed = scan_body(doc.body, body_line)
    fm_links: list[WikiLink] = []
    for key, value in meta.items():
        if key in ("relations", "claims"):
            continue
        line = fm.line_of(key) or 0
        for s in iter_scalar_strings(value):
            if "[[" in s:
                fm_links.extend(links_in_text(s, line=line, field=key))
    rel_links = []
    for i, item in enumerate(meta.get("relations") or [] if isinstance(meta.get("relations"), list) else []):
        if isinstance(item, Mapping) and item.get("target"):
            rel_links.append(parse_link(str(item["target"]), line=fm.item_line("relations", i) or 0,
                                        field="relations", frontmatter=True))
    for key, first, second in fm.duplicates:
        issues.add("duplicate-key", second,
                   f"frontmatter key `{key}` is written twice, on lines {first} and {second}: "
                   "YAML keeps only the second value", f"delete one of them (line {first} or "
                   f"{second}), keeping the value you mean")
    claims = _claims(meta, doc, issues)
    ev_links = [ev.link for c in claims for ev in c.evidence if ev.link is not None]
    relations = _relations(meta, doc, issues, body_links, typed)
    headings, blocks = headings_and_blocks(doc.body)

    common: dict[str, Any] = {
        "path": rel, "kind": kind, "id": note_id, "title": title, "meta": meta,
        "body": doc.body, "body_line": body_line,
        "checksum": check or checksum(text.encode("utf-8")),
        "links": tuple(fm_links + rel_links + ev_links + body_links), "relations": relations,
        "headings": tuple(headings), "block_ids": tuple(blocks),
        "aliases": _as_str_tuple(meta.get("aliases")),
        "tags": _tags(meta, doc.body),
        "namespace": str(meta.get("namespace") or "shared"),
        "key_lines": {k: fm.line_of(k) or 0 for k in fm.spans},
    }
    note: Note
    if kind == "card":
        note = Card(**common, type=_opt_str(meta.get("type")),
                    created=to_datetime(meta.get("created")),
                    updated=to_datetime(meta.get("updated")),
                    importance=_as_float(meta.get("importance")),
                    pinned=bool(meta.get("pinned") or False),
                    source_sessions=tuple(_unlink(s) for s in _as_str_tuple(meta.get("source_sessions"))),
                    claims=claims, issues=tuple(issues.issues))
    elif kind == "entity":
        note = Entity(**common, entity_type=_opt_str(meta.get("type")),
                      lane=_opt_str(meta.get("lane")),
                      ask_for=_as_str_tuple(meta.get("ask_for", meta.get("askFor"))),
                      claims=claims, issues=tuple(issues.issues))
    elif kind == "session":
        note = Session(**common, started=to_datetime(meta.get("started")),
                       ended=to_datetime(meta.get("ended")),
                       channel=_opt_str(meta.get("channel")), agent=_opt_str(meta.get("agent")),
                       raw=_opt_str(meta.get("raw")),
                       turns=parse_turns(doc.body, body_line), issues=tuple(issues.issues))
    elif kind == "archive":
        merged = meta.get("merged_into")
        note = Tombstone(**common, reason=_opt_str(meta.get("archived_reason") or meta.get("reason")),
                         merged_into=_unlink(str(merged)) if merged else None,
                         archived=to_datetime(meta.get("archived")), issues=tuple(issues.issues))
    else:
        note = Note(**common, issues=tuple(issues.issues))
    return note


def _tags(meta: Mapping[str, Any], body: str) -> tuple[str, ...]:
    """Frontmatter `tags` (`tag` also, as Obsidian reads it), then inline `#tags` of the body."""
    out: list[str] = []
    for key in ("tags", "tag"):
        for t in _as_str_tuple(meta.get(key)):
            t = t.strip().lstrip("#")
            if t and t not in out:
                out.append(t)
    for t in inline_tags(body):
        if t not in out:
            out.append(t)
    return tuple(out)


def _opt_str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)
