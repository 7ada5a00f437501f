"""Links, read and resolved exactly the way Obsidian does (docs/vault-format.md, "Links").

Grammar: `[[target]]`, `[[target|display]]`, `[[target#Heading]]`, `[[target#A#B]]` (a
heading inside a heading), `[[target#^block]]`, `[[#Heading]]` (same note), embeds `![[…]]`,
and markdown links `[text](Note.md)`, `[text](Folder/Note%20name.md)`, `[text](<Note name.md>)`.
Inside tables `\\|` separates the display text. Nothing inside inline code, fenced or
indented code, `$math$` / `$$math$$`, `%%comments%%` or `<!-- comments -->` is a link.

Dataview inline fields `TYPE:: [[target]]` (a whole line, a list item, or bracketed
`[TYPE:: [[target]]]`) make typed relations; an embed is an EMBEDS edge; every other body link
(wikilink or markdown link) is RELATES_TO.

Resolution (`LinkResolver.resolve(target, source)`), as Obsidian's `getFirstLinkpathDest`:
case-insensitive; a note matches with or without `.md`, any other file only by its full name;
an exact vault path wins, then a path relative to the source note's folder (`./x`, `../x`,
`sub/x`), then every file whose path ends with the link at a folder boundary — among several,
the one in the source's own folder, else the shortest path, else the first alphabetically.
A link never leaves the vault. Titles, aliases and ids are not link targets in Obsidian:
`LinkResolver.lookup` (where an agent names a note: `show`, `--from-nodes`, MCP) and links that
alaya keeps in frontmatter accept them too; a note body never does (lint says how to fix it).
Headings match after Obsidian's normalisation (`strip_heading`), block ids case-insensitively.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from dataclasses import replace as dc_replace
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

WIKILINK_RE = re.compile(r"!?\[\[[^\n]+?\]\]")
_INLINE_FIELD_LINE_RE = re.compile(
    r"^\s*(?:>\s*)*(?:[-*+]\s+|\d+[.)]\s+)?(?:\[[ xX]\]\s+)?"
    r"(?P<key>[A-Za-z_][A-Za-z0-9_ -]{0,63}?)::\s*(?P<val>.*)$")
_INLINE_FIELD_BRACKET_RE = re.compile(
    r"[\[(](?P<key>[A-Za-z_][A-Za-z0-9_ -]{0,63}?)::\s*(?P<val>[^\[\]()]*(?:\[\[[^\]]*\]\][^\[\]()]*)*)[\])]")
_BACKTICKS_RE = re.compile(r"`+")
_NEEDS_MARKDOWN_RE = re.compile(r"`|~~~|^(?: {4}|\t)", re.M)
_UNSAFE_RE = re.compile(r"(^|/)\.\.(/|$)|^[A-Za-z]:|^/|^~")
_DRIVE_RE = re.compile(r"^[A-Za-z]:[\\/]")


def relation_type_name(key: str) -> str:
    """`caused by` / `caused-by` / `CausedBy`-ish keys → `CAUSED_BY`."""
    key = re.sub(r"[\s-]+", "_", key.strip())
    key = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key) if not key.isupper() else key
    return key.upper()


def parse_link(raw: str, *, line: int = 0, field: str | None = None,
               frontmatter: bool = False) -> WikiLink:
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
                    field=field, frontmatter=frontmatter)


def links_in_text(text: str, *, line: int = 0, field: str | None = None) -> list[WikiLink]:
    """All wikilinks in a string that is not markdown (a frontmatter value)."""
    return [parse_link(m.group(0), line=line, field=field, frontmatter=True)
            for m in WIKILINK_RE.finditer(text)]


_MASK_RE = re.compile(
    r"\\[\\`$%<]"  # an escaped marker: kept, never opens anything
    r"|(?<!`)(?P<ticks>`+)(?!`).*?(?<!`)(?P=ticks)(?!`)"  # inline code (one line)
    r"|%%.*?(?:%%|\Z)"  # Obsidian comments, across lines
    r"|<!--.*?(?:-->|\Z)"  # HTML comments
    r"|\$\$.+?\$\$"  # display math
    r"|\$(?=[^\s$])[^\n$]*?(?<=[^\s\\])\$(?!\d)",  # inline math: $x$, not "$5 and $10"
    re.S)
_MASK_HINT_RE = re.compile(r"[`$%<]")


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _mask_inline(body: str) -> str:
    """Blank inline code, comments and math, keeping every offset and newline."""
    if not _MASK_HINT_RE.search(body):
        return body

    def sub(m: re.Match[str]) -> str:
        text = m.group(0)
        return text if text.startswith("\\") else _blank(text)

    return _MASK_RE.sub(sub, body)


def _code_block_lines(body: str) -> set[int]:
    """0-based body lines that belong to fenced or indented code blocks (markdown-it)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    lines: set[int] = set()
    for tok in md.parse(body):
        if tok.type in ("fence", "code_block") and tok.map:
            lines.update(range(tok.map[0], tok.map[1]))
    return lines


def masked_body(body: str) -> str:
    """`body` with everything that cannot hold a link (code, math, comments) blanked."""
    if _NEEDS_MARKDOWN_RE.search(body):
        code = _code_block_lines(body)
        if code:
            lines = body.split("\n")
            body = "\n".join(_blank(ln) if i in code else ln for i, ln in enumerate(lines))
    return _mask_inline(body)


# [text](dest): dest in <…> (spaces allowed) or without spaces; an optional "title".
_MD_LINK_RE = re.compile(
    r"(?P<embed>!?)\[(?P<text>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*"
    r"(?P<dest><[^<>\n]*>|(?:[^\s()<>]|\([^\s()]*\))+)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:|^//")


def parse_markdown_link(raw: str, text: str, dest: str, *, embed: bool, line: int,
                        field: str | None = None) -> WikiLink | None:
    """A markdown link to a vault file, or None for an external one (`https:`, `mailto:` …)."""
    from urllib.parse import unquote

    dest = dest[1:-1] if dest.startswith("<") and dest.endswith(">") else dest
    dest = dest.strip()
    if not dest or _SCHEME_RE.match(dest):
        return None
    path, _, anchor = dest.partition("#")
    path, anchor = unquote(path), unquote(anchor)
    heading = block = None
    if anchor.startswith("^"):
        block = anchor[1:].strip()
    elif anchor:
        heading = anchor.strip()
    return WikiLink(raw=raw, target=path.strip(), heading=heading, block=block,
                    display=text or None, embed=embed, line=line, field=field, kind="markdown")


def scan_body(body: str, first_line: int = 1) -> tuple[list[WikiLink], list[tuple[str, WikiLink]]]:
    """Links in a markdown body, and (relation type, link) pairs from inline fields.

    Returns `(links, typed)`: `links` holds every link outside code, math and comments
    (wikilinks, embeds, markdown links to vault files) in document order; `typed` the subset
    that sits in a Dataview inline field, with the field's relation type.
    """
    if "[[" not in body and "](" not in body:
        return [], []
    masked = masked_body(body)
    links: list[WikiLink] = []
    typed: list[tuple[str, WikiLink]] = []
    original = body.split("\n")
    managed: set[int] = set()  # 0-based lines inside managed blocks
    if "<!-- alaya:" in body:
        from .blocks import block_spans

        for first, last in block_spans(body):
            managed.update(range(first - 1, last))
    for i, line in enumerate(masked.split("\n")):
        has_wiki, has_md = "[[" in line, "](" in line
        if not has_wiki and not has_md:
            continue
        text = original[i]
        lineno = first_line + i
        fields: list[tuple[int, int, str]] = []
        m = _INLINE_FIELD_LINE_RE.match(line)
        if m and "[[" in m.group("val"):
            fields.append((m.start("val"), len(line), relation_type_name(m.group("key"))))
        elif has_wiki:
            for b in _INLINE_FIELD_BRACKET_RE.finditer(line):
                if "[[" in b.group("val"):
                    fields.append((b.start("val"), b.end("val"), relation_type_name(b.group("key"))))
        found: list[tuple[int, WikiLink]] = []
        spans: list[tuple[int, int]] = []
        for lm in WIKILINK_RE.finditer(line) if has_wiki else ():
            rel = next((t for s, e, t in fields if s <= lm.start() < e), None)
            link = parse_link(text[lm.start():lm.end()], line=lineno, field=rel)
            if i in managed:
                link = dc_replace(link, managed=True)
            spans.append(lm.span())
            found.append((lm.start(), link))
            if rel is not None:
                typed.append((rel, link))
        for mm in _MD_LINK_RE.finditer(line) if has_md else ():
            if any(s <= mm.start() < e for s, e in spans):
                continue
            md = parse_markdown_link(text[mm.start():mm.end()], text[mm.start("text"):mm.end("text")],
                                     text[mm.start("dest"):mm.end("dest")],
                                     embed=bool(mm.group("embed")), line=lineno)
            if md is not None and i in managed:
                md = dc_replace(md, managed=True)
            if md is not None:
                found.append((mm.start(), md))
        found.sort(key=lambda t: t[0])
        links.extend(link for _, link in found)
    return links, typed


_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_BLOCK_ID_RE = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$")
_STRIP_RE = re.compile(r"[!\"#$%&()*+,.:;<=>?@^`{|}~/\[\]\\]")


def strip_heading(text: str) -> str:
    """Obsidian's heading normalisation for link matching: punctuation and markup characters
    become spaces, runs of space shrink to one, case is ignored (`## What is this?` and
    `[[Note#what is this]]` match; so do `## The **bold** part` and `#The bold part`)."""
    return " ".join(_STRIP_RE.sub(" ", text).split()).casefold()


def headings_and_blocks(body: str) -> tuple[list[tuple[int, str]], list[str]]:
    """(level, text) of every ATX and setext heading, and the `^block` ids, of a body —
    outside code, math and comments."""
    masked = masked_body(body) if _NEEDS_MARKDOWN_RE.search(body) or "%%" in body \
        or "$" in body or "<!--" in body else body
    headings: list[tuple[int, str]] = []
    blocks: list[str] = []
    original = body.split("\n")
    prev_para = False
    for i, line in enumerate(masked.split("\n")):
        if not line.strip():
            prev_para = False
            continue
        hm = _HEADING_RE.match(line) if line.lstrip().startswith("#") else None
        if hm:
            om = _HEADING_RE.match(original[i])
            headings.append((len(hm.group(1)), ((om or hm).group(2) or "").strip()))
            prev_para = False
            continue
        if prev_para and _SETEXT_RE.match(line) and i > 0:
            headings.append((1 if line.strip().startswith("=") else 2, original[i - 1].strip()))
            prev_para = False
            continue
        bm = _BLOCK_ID_RE.search(line)
        if bm:
            blocks.append(bm.group(1))
        s = line.lstrip()
        prev_para = not (s.startswith((">", "|", "-", "*", "+")) or s[:1].isdigit()
                         or line.startswith(("    ", "\t")))
    return headings, blocks


_TAG_RE = re.compile(r"(?:(?<=\s)|^)#([^\s#!\"$%&'()*+,.:;<=>?@\[\]^`{|}~\\，。；：！？、（）【】《》]+)",
                     re.M)


def inline_tags(body: str) -> list[str]:
    """Obsidian's inline tags in a body: `#tag`, `#nested/tag`, `#部署` — not in code, math,
    comments or links, not a heading's `# `, never all digits (`#123` is not a tag)."""
    if "#" not in body:
        return []
    masked = masked_body(body)
    masked = WIKILINK_RE.sub(lambda m: _blank(m.group(0)), masked)
    masked = _MD_LINK_RE.sub(lambda m: _blank(m.group(0)), masked)
    out: list[str] = []
    for m in _TAG_RE.finditer(masked):
        tag = m.group(1).strip("/")
        if tag and not tag.replace("/", "").isdigit() and tag not in out:
            out.append(tag)
    return out


def has_heading(headings: Sequence[tuple[int, str]], anchor: str) -> bool:
    """Does `anchor` (`A`, or `A#B` for B inside A's section) name a heading?"""
    want = [strip_heading(p) for p in anchor.split("#") if p.strip()]
    if not want:
        return True
    normed = [(level, strip_heading(text)) for level, text in headings]

    def search(start: int, k: int, parent: int, stop: int) -> bool:
        for i in range(start, stop):
            level, text = normed[i]
            if level <= parent:
                return False
            if text != want[k]:
                continue
            if k == len(want) - 1:
                return True
            end = i + 1
            while end < stop and normed[end][0] > level:
                end += 1
            if search(i + 1, k + 1, level, end):
                return True
        return False

    return search(0, 0, 0, len(normed))


def has_block(block_ids: Sequence[str], block: str) -> bool:
    want = block.lstrip("^").casefold()
    return any(b.casefold() == want for b in block_ids)


def normalize_name(text: str) -> str:
    """Case- and width-insensitive key for matching names, titles and aliases."""
    return unicodedata.normalize("NFC", text).strip().casefold()


def is_unsafe_target(target: str) -> bool:
    """True for a reference that tries to leave the vault (`../`, absolute, drive, `~`)."""
    t = target.replace("\\", "/").strip()
    return bool(_UNSAFE_RE.search(t))


@dataclass(frozen=True)
class Resolution:
    """Outcome of resolving a link target: a note, an attachment, or nothing."""

    target: str
    note: Note | None
    candidates: tuple[Note, ...] = ()
    # "path" | "relative" | "name" | "self" | "id" | "title" | "alias" | "attachment"
    # | "missing" | "unsafe" | "ambiguous" (lookup only)
    reason: str = ""
    file: str | None = None  # the vault file the link lands on (a note or an attachment)
    hint: Note | None = None  # missing in Obsidian, but this note has that id/title/alias
    hint_kind: str = ""

    @property
    def ok(self) -> bool:
        return self.note is not None


class LinkResolver:
    """Resolves link targets (Obsidian's rules) and references (plus ids, titles, aliases)."""

    def __init__(self, notes: Iterable[Linkable], attachments: Sequence[str] = ()) -> None:
        self.files: dict[str, Note | None] = {}  # casefolded vault path → note (None: attachment)
        self.paths: dict[str, str] = {}  # casefolded → as written
        self.by_base: dict[str, list[str]] = defaultdict(list)  # casefolded file name → paths
        self.by_id: dict[str, list[Note]] = defaultdict(list)
        self.by_title: dict[str, list[Note]] = defaultdict(list)
        self.by_alias: dict[str, list[Note]] = defaultdict(list)
        entries: list[tuple[str, Note | None]] = [(n.path, n) for n in notes]
        entries += [(a, None) for a in attachments]
        for path, note in sorted(entries, key=lambda e: e[0]):
            key = normalize_name(path)
            if key in self.files:
                continue
            self.files[key] = note
            self.paths[key] = path
            self.by_base[key.rsplit("/", 1)[-1]].append(key)
            if note is None:
                continue
            if note.id:
                self.by_id[normalize_name(note.id)].append(note)
            if note.title:
                self.by_title[normalize_name(note.title)].append(note)
            for alias in note.aliases:
                self.by_alias[normalize_name(alias)].append(note)
        self._memo: dict[tuple[str, str, bool], Resolution] = {}

    # -- Obsidian's rules ---------------------------------------------------------------------
    def _exact(self, key: str) -> str | None:
        if key in self.files:
            return key
        return key + ".md" if key + ".md" in self.files else None

    def _find(self, target: str, source: str) -> tuple[str | None, str]:
        t = unicodedata.normalize("NFC", target).strip().replace("\\", "/")
        if not t:
            return (normalize_name(source) if source else None), "self"
        relative_only = t.startswith(("./", "../")) or t in (".", "..")
        t = t.lstrip("/")
        key = t.casefold()
        if not relative_only:
            hit = self._exact(key)
            if hit:
                return hit, "path"
        src_dir = posixpath.dirname(normalize_name(source)) if source else ""
        joined = posixpath.normpath(posixpath.join(src_dir, key)) if src_dir or relative_only \
            else key
        if joined != key and not joined.startswith("../") and joined not in ("..", "."):
            hit = self._exact(joined)
            if hit:
                return hit, "relative"
        if relative_only:
            return None, "unsafe" if joined.startswith("..") else "missing"
        base = key.rsplit("/", 1)[-1]
        cands = [p for b in (base, base + ".md") for p in self.by_base.get(b, ())
                 if any(p == w or p.endswith("/" + w) for w in (key, key + ".md"))]
        if not cands:
            return None, "missing"
        cands.sort(key=lambda p: (len(p), p))
        own = next((p for p in cands if posixpath.dirname(p) == src_dir), None)
        return own or cands[0], "name"

    def resolve(self, target: str, source: str = "", *, extras: bool = False) -> Resolution:
        """Where the link `target` written in the note at `source` lands, by Obsidian's rules.

        `extras=True` (links alaya keeps in frontmatter) also accepts an id, title or alias when
        Obsidian's rules find nothing; otherwise such a match is only a `hint` for lint.
        """
        memo_key = (target, posixpath.dirname(source), extras) if target else (target, source, extras)
        hit = self._memo.get(memo_key)
        if hit is not None:
            return hit
        if "\x00" in target or _DRIVE_RE.match(target.strip()) or target.strip().startswith("~"):
            res = Resolution(target, None, (), "unsafe")
        else:
            key, reason = self._find(target, source)
            if key is not None:
                note = self.files.get(key)
                res = Resolution(target, note, (note,) if note is not None else (),
                                 reason if note is not None else "attachment", self.paths[key])
            else:
                res = Resolution(target, None, (), reason)
                extra = self._extras(target) if reason == "missing" else None
                if extra is not None and extra.note is not None:
                    res = extra if extras else Resolution(target, None, (), reason,
                                                          hint=extra.note,
                                                          hint_kind=extra.reason)
        self._memo[memo_key] = res
        return res

    def resolve_link(self, link: WikiLink, source: str) -> Resolution:
        """`resolve` for a parsed link: links alaya keeps (frontmatter, managed blocks) also
        accept alaya's extras — what older alaya versions wrote there keeps working."""
        return self.resolve(link.target, source, extras=link.frontmatter or link.managed)

    def _extras(self, target: str) -> Resolution | None:
        key = normalize_name(target.removesuffix(".md") if target.lower().endswith(".md")
                             else target)
        for reason, table in (("id", self.by_id), ("title", self.by_title),
                              ("alias", self.by_alias)):
            found = list({id(n): n for n in table.get(key, [])}.values())
            if len(found) == 1:
                return Resolution(target, found[0], tuple(found), reason, found[0].path)
            if len(found) > 1:
                return Resolution(target, None, tuple(sorted(found, key=lambda n: n.path)),
                                  "ambiguous")
        return None

    def lookup(self, ref: str) -> Resolution:
        """A note an agent or a person names on the command line: an id, a path or file name
        (Obsidian's rules, from the vault root), a title or an alias."""
        ref = ref.strip()
        if ref.startswith("[[") and ref.endswith("]]"):
            ref = parse_link(ref).target
        if is_unsafe_target(ref):
            return Resolution(ref, None, (), "unsafe")
        by_id = list({id(n): n for n in self.by_id.get(normalize_name(ref), [])}.values())
        if len(by_id) == 1:
            return Resolution(ref, by_id[0], (by_id[0],), "id", by_id[0].path)
        res = self.resolve(ref)
        if res.note is not None and res.reason == "name":
            # Several files share the name: a link picks the shortest path (it knows its
            # source folder); a bare name on the command line is better asked about.
            key = normalize_name(ref.removesuffix(".md") if ref.lower().endswith(".md") else ref)
            base = key.rsplit("/", 1)[-1]
            same = [self.files[p] for b in (base, base + ".md") for p in self.by_base.get(b, ())
                    if self.files.get(p) is not None
                    and any(p == w or p.endswith("/" + w) for w in (key, key + ".md"))]
            if len(same) > 1:
                return Resolution(ref, None, tuple(sorted(same, key=lambda n: n.path)),
                                  "ambiguous")
        if res.note is not None:
            return res
        return self._extras(ref) or res


def link_target_for(note: Note, resolver: LinkResolver) -> str:
    """The shortest link text that lands on `note` in Obsidian from any note of the vault.

    The file name when no other file has it; else the shortest trailing part of the path that
    no other file ends with (Obsidian's "shortest path when possible"), else the full path.
    """
    path = note.path[:-3] if note.path.endswith(".md") else note.path
    parts = path.split("/")
    for i in range(len(parts) - 1, -1, -1):
        candidate = "/".join(parts[i:])
        key = normalize_name(candidate)
        base = key.rsplit("/", 1)[-1]
        matches = [p for b in (base, base + ".md") for p in resolver.by_base.get(b, ())
                   if any(p == w or p.endswith("/" + w) for w in (key, key + ".md"))]
        if matches == [normalize_name(note.path)]:
            return candidate
    return path


def format_link(target: str, display: str | None = None, anchor: str | None = None) -> str:
    """`[[target#anchor|display]]`; `|`, `[`, `]` and newlines in the display are dropped,
    since Obsidian would read them as link syntax."""
    inner = target + (f"#{anchor}" if anchor else "")
    if display:
        display = " ".join(re.sub(r"[|\[\]]", " ", display).split())
    if display and display != target:
        inner += f"|{display}"
    return f"[[{inner}]]"


def link_to(note: Note, resolver: LinkResolver, anchor: str | None = None) -> str:
    """The wikilink alaya writes to a note: its file name (or shortest unambiguous path) with
    its title as display text — a link Obsidian opens. Ids stay in frontmatter."""
    return format_link(link_target_for(note, resolver), display=note.title, anchor=anchor)
