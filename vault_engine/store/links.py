"""Wikilink grammar and resolution, the way Obsidian does it.

Grammar: `[[target]]`, `[[target|display]]`, `[[target#Heading]]`, `[[target#^block]]`,
`[[#Heading]]` (same note), `![[embed]]`; inside tables `\\|` separates the display text.
Links inside inline code spans and fenced or indented code blocks are not links (markdown-it
finds the code blocks; code spans are masked per line by the CommonMark backtick rule).

Dataview inline fields `TYPE:: [[target]]` (a whole line, a list item, or bracketed
`[TYPE:: [[target]]]`) make typed relations; every other body link is RELATES_TO.

Resolution order (case-insensitive, as Obsidian): a path (`folder/name`), the file name, the
note id, the title, an alias. The first level with exactly one match wins; several matches at
that level are ambiguous. A target with a `..` segment, an absolute path or a drive letter never
resolves: the resolver only ever returns notes that are in the vault.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .model import WikiLink


class Linkable(Protocol):
    """What the resolver needs of a note (a `Note`, or a compiler's cached record)."""

    @property
    def path(self) -> str: ...
    @property
    def stem(self) -> str: ...
    @property
    def id(self) -> str | None: ...
    @property
    def title(self) -> str: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...


Note = Any  # a Linkable; kept loose so Note and compiler records both pass

WIKILINK_RE = re.compile(r"!?\[\[[^\[\]\n]+?\]\]")
_INLINE_FIELD_LINE_RE = re.compile(
    r"^\s*(?:>\s*)*(?:[-*+]\s+|\d+[.)]\s+)?(?:\[[ xX]\]\s+)?"
    r"(?P<key>[A-Za-z_][A-Za-z0-9_ -]{0,63}?)::\s*(?P<val>.*)$")
_INLINE_FIELD_BRACKET_RE = re.compile(
    r"[\[(](?P<key>[A-Za-z_][A-Za-z0-9_ -]{0,63}?)::\s*(?P<val>[^\[\]()]*(?:\[\[[^\]]*\]\][^\[\]()]*)*)[\])]")
_BACKTICKS_RE = re.compile(r"`+")
_NEEDS_MARKDOWN_RE = re.compile(r"`|~~~|^(?: {4}|\t)", re.M)
_UNSAFE_RE = re.compile(r"(^|/)\.\.(/|$)|^[A-Za-z]:|^/|^~")


def relation_type_name(key: str) -> str:
    """`caused by` / `caused-by` / `CausedBy`-ish keys → `CAUSED_BY`."""
    key = re.sub(r"[\s-]+", "_", key.strip())
    key = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key) if not key.isupper() else key
    return key.upper()


def parse_link(raw: str, *, line: int = 0, field: str | None = None) -> WikiLink:
    """Parse one `[[…]]` / `![[…]]` occurrence, or a bare target such as `Note#^t3`."""
    embed = raw.startswith("!")
    inner = raw[1:] if embed else raw
    if inner.startswith("[[") and inner.endswith("]]"):
        inner = inner[2:-2]
    else:
        raw = "[[" + inner + "]]"
    inner = inner.replace("\\|", "|")
    display = None
    if "|" in inner:
        inner, display = inner.split("|", 1)
    heading = block = None
    if "#" in inner:
        inner, anchor = inner.split("#", 1)
        if anchor.startswith("^"):
            block = anchor[1:].strip()
        else:
            heading = anchor.strip()
    return WikiLink(raw=raw, target=inner.strip(), heading=heading, block=block,
                    display=display.strip() if display else None, embed=embed, line=line,
                    field=field)


def links_in_text(text: str, *, line: int = 0, field: str | None = None) -> list[WikiLink]:
    """All wikilinks in a string that is not markdown (a frontmatter value)."""
    return [parse_link(m.group(0), line=line, field=field) for m in WIKILINK_RE.finditer(text)]


def _mask_code_spans(line: str) -> str:
    """Blank out inline code spans (`` `x` ``, ``` ``x`` ```) on one line."""
    out = []
    pos = 0
    runs = list(_BACKTICKS_RE.finditer(line))
    i = 0
    while i < len(runs):
        opener = runs[i]
        closer = next((r for r in runs[i + 1:] if len(r.group(0)) == len(opener.group(0))), None)
        if closer is None:
            i += 1
            continue
        out.append(line[pos:opener.start()])
        out.append(" " * (closer.end() - opener.start()))
        pos = closer.end()
        i = runs.index(closer) + 1
    out.append(line[pos:])
    return "".join(out)


def _code_block_lines(body: str) -> set[int]:
    """0-based body lines that belong to fenced or indented code blocks."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    lines: set[int] = set()
    for tok in md.parse(body):
        if tok.type in ("fence", "code_block") and tok.map:
            lines.update(range(tok.map[0], tok.map[1]))
    return lines


def scan_body(body: str, first_line: int = 1) -> tuple[list[WikiLink], list[tuple[str, WikiLink]]]:
    """Links in a markdown body, and (relation type, link) pairs from inline fields.

    Returns `(links, typed)`: `links` holds every link outside code; `typed` the subset that
    sits in a Dataview inline field, with the field's relation type.
    """
    lines = body.splitlines()
    code: set[int] = set()
    if _NEEDS_MARKDOWN_RE.search(body):
        code = _code_block_lines(body)
    links: list[WikiLink] = []
    typed: list[tuple[str, WikiLink]] = []
    for i, line in enumerate(lines):
        if i in code or "[[" not in line:
            continue
        if "`" in line:
            line = _mask_code_spans(line)
            if "[[" not in line:
                continue
        lineno = first_line + i
        fields: list[tuple[int, int, str]] = []
        m = _INLINE_FIELD_LINE_RE.match(line)
        if m and "[[" in m.group("val"):
            fields.append((m.start("val"), len(line), relation_type_name(m.group("key"))))
        else:
            for b in _INLINE_FIELD_BRACKET_RE.finditer(line):
                if "[[" in b.group("val"):
                    fields.append((b.start("val"), b.end("val"), relation_type_name(b.group("key"))))
        for lm in WIKILINK_RE.finditer(line):
            rel = next((t for s, e, t in fields if s <= lm.start() < e), None)
            link = parse_link(lm.group(0), line=lineno, field=rel)
            links.append(link)
            if rel is not None:
                typed.append((rel, link))
    return links, typed


_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_BLOCK_ID_RE = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$")


def headings_and_blocks(body: str) -> tuple[list[str], list[str]]:
    """Heading texts and `^block` ids of a body (outside fenced code, roughly)."""
    headings: list[str] = []
    blocks: list[str] = []
    fence: str | None = None
    for line in body.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
            continue
        if fence:
            continue
        hm = _HEADING_RE.match(line)
        if hm:
            headings.append(hm.group(2))
        bm = _BLOCK_ID_RE.search(line)
        if bm:
            blocks.append(bm.group(1))
    return headings, blocks


def normalize_name(text: str) -> str:
    """Case- and width-insensitive key for matching names, titles and aliases."""
    return unicodedata.normalize("NFC", text).strip().casefold()


def is_unsafe_target(target: str) -> bool:
    """True for a target that tries to leave the vault (`../`, absolute, drive, `~`)."""
    t = target.replace("\\", "/").strip()
    return bool(_UNSAFE_RE.search(t))


@dataclass(frozen=True)
class Resolution:
    """Outcome of resolving a link target: one note, several (ambiguous), or none."""

    target: str
    note: Note | None
    candidates: tuple[Note, ...] = ()
    reason: str = ""  # "path" | "name" | "id" | "title" | "alias" | "missing" | "unsafe" | "ambiguous"

    @property
    def ok(self) -> bool:
        return self.note is not None


class LinkResolver:
    """Resolves link targets and references (ids, titles, aliases) against a set of notes."""

    def __init__(self, notes: Iterable[Linkable], attachments: Sequence[str] = ()) -> None:
        self.by_path: dict[str, list[Note]] = defaultdict(list)
        self.by_name: dict[str, list[Note]] = defaultdict(list)
        self.by_id: dict[str, list[Note]] = defaultdict(list)
        self.by_title: dict[str, list[Note]] = defaultdict(list)
        self.by_alias: dict[str, list[Note]] = defaultdict(list)
        for note in notes:
            self.by_path[normalize_name(note.path[:-3] if note.path.endswith(".md") else note.path)].append(note)
            self.by_name[normalize_name(note.stem)].append(note)
            if note.id:
                self.by_id[normalize_name(note.id)].append(note)
            if note.title:
                self.by_title[normalize_name(note.title)].append(note)
            for alias in note.aliases:
                self.by_alias[normalize_name(alias)].append(note)
        self.attachments = {normalize_name(a) for a in attachments}
        self.attachments |= {normalize_name(a.rsplit("/", 1)[-1]) for a in attachments}

    def resolve(self, target: str) -> Resolution:
        t = target.replace("\\", "/").strip()
        if is_unsafe_target(t):
            return Resolution(target, None, (), "unsafe")
        if t.lower().endswith(".md"):
            t = t[:-3]
        key = normalize_name(t)
        if not key:
            return Resolution(target, None, (), "missing")
        levels: list[tuple[str, list[Note]]] = []
        if "/" in key:
            exact = self.by_path.get(key.lstrip("/"), [])
            suffix = exact or [n for p, ns in self.by_path.items() if p.endswith("/" + key)
                               for n in ns]
            levels.append(("path", suffix))
        levels += [("name", self.by_name.get(key, [])), ("id", self.by_id.get(key, [])),
                   ("title", self.by_title.get(key, [])), ("alias", self.by_alias.get(key, []))]
        for reason, found in levels:
            unique = list({id(n): n for n in found}.values())
            if len(unique) == 1:
                return Resolution(target, unique[0], tuple(unique), reason)
            if len(unique) > 1:
                return Resolution(target, None, tuple(sorted(unique, key=lambda n: n.path)),
                                  "ambiguous")
        if key in self.attachments:
            return Resolution(target, None, (), "attachment")
        return Resolution(target, None, (), "missing")


def link_target_for(note: Note, resolver: LinkResolver) -> str:
    """The shortest link text that resolves to `note` in Obsidian and in alaya.

    Obsidian resolves by file name, so the file name is used; when another note has the same
    file name the vault-relative path (without `.md`) disambiguates.
    """
    res = resolver.resolve(note.stem)
    if res.note is not None and res.note.path == note.path:
        return note.stem
    return note.path[:-3] if note.path.endswith(".md") else note.path


def format_link(target: str, display: str | None = None, anchor: str | None = None) -> str:
    inner = target + (f"#{anchor}" if anchor else "")
    if display and display != target:
        inner += f"|{display}"
    return f"[[{inner}]]"


def link_to(note: Note) -> str:
    """The wikilink alaya writes to a note (its id, else its path without `.md`)."""
    return format_link(note.id or note.path[:-3])
