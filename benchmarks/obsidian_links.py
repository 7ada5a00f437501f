"""An independent oracle of Obsidian's link rules, to check alaya against.

Pure standard library; imports nothing from the project.  It answers two
questions the way Obsidian (desktop 1.x) does: which links does a note body
contain, and which file (and heading / block) does each link land on.

Usage::

    python benchmarks/obsidian_links.py VAULT [--json] [--frontmatter] [--quiet]

Rules, and where each comes from
================================

Sources are abbreviated:

* [IL]  obsidian-help "Linking notes and files/Internal links.md"
* [EF]  obsidian-help "Linking notes and files/Embed files.md"
* [AL]  obsidian-help "Linking notes and files/Aliases.md"
* [BF]  obsidian-help "Editing and formatting/Basic formatting syntax.md"
* [AF]  obsidian-help "Editing and formatting/Advanced formatting syntax.md" (tables, math)
* [FF]  obsidian-help "Files and folders/Accepted file formats.md"
* [PR]  obsidian-help "Editing and formatting/Properties.md" (links in properties)
* [ST]  obsidian-help "User interface/Settings.md", section Files and links
        ("New link format": shortest path / relative path / absolute path)
* [API] docs.obsidian.md TypeScript API: ``getFirstLinkpathDest`` ("Get the best
        match for a linkpath"), ``parseLinktext`` (path + subpath split at the
        first ``#``), ``stripHeading`` ("Normalizes headings for link matching
        by stripping out special characters and shrinking consecutive spaces").
* [OBS] observations made in a real Obsidian 1.13.7 through
        ``app.metadataCache`` and published in github.com/pvliesdonk/
        markdown-vault-mcp issue #1358 / PRs #1380, #1385, #1514
        (third-party, but the only console-verified source found).
* [SRC] Obsidian's own heading sanitiser as quoted from the app source in
        github.com/mgmeyers/obsidian-copy-block-link PR #15 (2022):
        ``/[!"#$%&()*+,.:;<=>?@^`{|}~\\/\\[\\]\\\\]/g`` -> " ", then collapse
        whitespace and trim.  Corroborated by obsidian-html issue #303
        ("Obsidian replaces these symbols with spaces": ``# wifi 2.4 vs 5.0``
        is linked as ``#wifi 2 4 vs 5 0``) and obsidian-webpage-export
        issue #609 (``# Minecraft: The Video Game`` linked as
        ``#Minecraft The Video Game``).
* [OL]  obsidian-help "Plugins/Outgoing links.md" (links in code blocks)
* [CM]  CommonMark / GFM (code spans, fences, HTML comments, link
        destinations), which Obsidian says it follows ("Obsidian Flavored
        Markdown").
* [CHOICE] our own decision where no source says; listed under "Unsure".

Extraction
----------

1. Wikilink ``[[target]]``, ``[[target|display]]``, ``[[target#Heading]]``,
   ``[[target#H1#H2]]`` (one ``#`` per sub-heading), ``[[target#^block-id]]``
   [IL].  The display text follows the first ``|`` [IL]; for an embed it
   carries the size (``![[img.png|100x145]]``) [EF].  The path/subpath split is
   at the first ``#`` [API parseLinktext].  A single ``]`` does not end the
   target (``[[Sq]uare]]`` is the link ``Sq]uare``) [OBS].
2. Embed: ``!`` before a wikilink or a markdown link [EF].
3. ``[[target\\|display]]``: the escaped bar used inside tables [AF] is read
   as the display separator (we accept it everywhere, not only in tables)
   [AF + CHOICE].
4. Markdown link ``[text](dest)``: dest is URL-encoded (``%20``) [IL][BF], or
   wrapped in ``<...>`` with literal spaces [BF "Escape blank spaces in
   links"; CM].  A destination with a raw space and no ``<>`` is not a link
   [CM; OBS PR #1514].  An optional ``"title"`` is dropped [CM].  The
   destination is percent-decoded, then split at the first ``#`` (the
   fragment is decoded too) [OBS PR #1385: ``[y](My%20Note.md)`` resolves].
5. External: a markdown destination with a URI scheme (``https:``,
   ``obsidian:``, ``mailto:``, ``file:`` ...) or starting with ``//`` is not an
   internal link and is skipped [BF].  A *wikilink* whose target has a scheme
   (``[[https://x]]``) is, in Obsidian, an unresolved note link [OBS], so we
   keep it (it resolves to nothing).
6. Not links: anything in fenced code (```` ``` ```` or ``~~~``, also inside
   block quotes/callouts and list items), indented code blocks (4 spaces after
   a blank line, outside lists), inline code spans [BF][CM]; ``$...$`` and
   ``$$...$$`` math [AF]; ``%%comments%%`` inline and across lines [BF]; HTML
   comments ``<!-- -->`` [CM].  (That Obsidian's metadata cache does not index
   links inside comments and math is our reading of "Comments are only visible
   in Editing view" - see Unsure.)  Raw HTML blocks ``<pre>``, ``<script>``,
   ``<style>``, ``<textarea>`` (up to their closing tag) hold no Markdown, so no
   link or fence either [CM HTML block type 1; OFM "Obsidian does not support
   using Markdown formatting ... inside of HTML tags"].  Code blocks are also
   confirmed by [OL] obsidian-help "Plugins/Outgoing links.md": "due to the
   nature of code blocks, links don't show up under the Links section".
7. Frontmatter: ``extract_links`` reads the body only (YAML between the first
   two ``---`` lines is blanked, line numbers kept).  Obsidian *does* index a
   wikilink written as a quoted text property (``related: "[[Note]]"``, also
   in lists) and counts it in ``resolvedLinks`` / backlinks / graph [PR].
   ``extract_frontmatter_links`` returns those separately, and
   ``vault_pairs(..., include_frontmatter=True)`` / ``--frontmatter`` adds
   them.  Default: body links only [CHOICE], so the count is comparable with
   tools that ignore properties.

Resolution - ``resolve(target, source_path, files)``
----------------------------------------------------

Models ``metadataCache.getFirstLinkpathDest(linkpath, sourcePath)`` [API]:

a. Empty linkpath (``[[#Heading]]``, ``[t](#Heading)``) is the source note
   itself - a self link [IL; OBS: recorded as a self-edge in resolvedLinks].
b. Case-insensitive everywhere: ``[[log]]``/``[[LOG]]`` -> ``Log.md``;
   ``[[Ext.MD]]`` -> ``Ext.md`` [OBS].
c. A note may be named with or without ``.md`` [IL]; any other file needs its
   full name with extension (``[[Figure 1.png]]``) [IL][FF].  So a linkpath
   ``p`` is looked up as the file ``p`` and as ``p.md`` (``[[v1.2 notes]]``
   finds ``v1.2 notes.md``).
d. An exact vault-relative path wins, even over a file of that name in the
   source's own folder: ``[[Note]]`` is the root ``Note.md``, ``[[b/Note]]`` is
   ``b/Note.md`` [OBS PR #1380 rule 1]; folder paths start at the vault root
   [IL].  A leading ``/`` is dropped [CHOICE].
e. Then a path relative to the source note's folder: ``./x``, ``../x`` and a
   plain ``sub/x`` - the form the "Relative path to file" link format writes
   [ST; API normalizePath resolves ``.`` and ``..``].  A ``./`` or ``../``
   path that does not resolve this way (or climbs out of the vault) is
   unresolved [CHOICE].
f. Then every file whose name matches and whose path ends with the linkpath
   at a folder boundary (``[[Alpha/Tasks]]`` finds ``Projects/Alpha/Tasks.md``)
   [CHOICE for the boundary; suffix matching itself is the behaviour that the
   "shortest path when possible" format relies on, ST].  Among several:
   the one in the source note's own folder wins (an ancestor folder counts
   for nothing), else the shortest path string (``a/b/Note.md`` beats
   ``zzzz/Note.md``) [OBS PR #1380 rules 2-3], else alphabetical by
   lower-cased path [CHOICE].
g. Aliases, a ``title`` property and an ``id`` property are never link
   targets: ``[[AL]]`` with ``aliases: [AL]`` stays unresolved [OBS]; aliases
   are only autocomplete suggestions that expand to ``[[Note|Alias]]`` [AL].

Headings and blocks - ``heading_exists`` / ``block_exists``
----------------------------------------------------------

* Headings are ATX (``#`` .. ``######`` + space, closing ``#``s removed) and
  setext (``===`` / ``---`` under a paragraph line) outside code, math and
  comments [BF][CM].
* Both the heading text and each link segment are normalised with
  ``strip_heading``: the characters ``! " # $ % & ( ) * + , . : ; < = > ? @
  ^ ` { | } ~ / [ ] \\`` become spaces, whitespace is collapsed, the result
  trimmed [SRC][API stripHeading] - so ``## What is this?`` matches
  ``#What is this``, ``## The **bold** part`` matches ``#The bold part``,
  ``## Step 1: Install`` matches ``#Step 1 Install``, and ``## See [[X]]``
  matches ``#See X``.  Comparison is case-insensitive [CHOICE, see Unsure].
* ``#A#B``: B must be a heading *inside A's section* (after A, deeper level,
  before the next heading of A's level or higher); intermediate levels may be
  skipped; a single ``#B`` matches B at any level [IL "multiple hash symbols
  for each subheading"].
* ``#^id``: a block id is `` ^id`` at the end of a line (after a space, or
  alone on its own line after a list/table/quote) made of Latin letters,
  digits and dashes [IL][EF]; compared case-insensitively [CHOICE].
* ``heading_ok`` is ``None`` when the link has no subpath or its file did not
  resolve, ``True``/``False`` otherwise; it covers block ids too.  Sub-paths
  of non-markdown files (``#page=3``, ``#height=400`` on a PDF,
  ``#outline`` / ``#interface`` / ``#icon`` CSS hooks on images) are not
  checked and stay ``None`` [EF].

Folders skipped by ``vault_pairs`` / the CLI: ``.obsidian/``, ``.git/``,
``.trash/`` and any dot-file or dot-folder (Obsidian hides them).

Unsure (no source settles these)
--------------------------------

* Case-insensitive heading and block matching: widely relied on, but one
  plugin author (obsidian42-strange-new-worlds issue #131) says headings and
  block ids are case-sensitive.  We match case-insensitively.
* Whether ``[[b/Note]]`` matches ``ab/Note.md`` (a plain string suffix) -
  we require a folder boundary.
* The order of (e) relative-to-source vs (f) suffix/name match when both find
  different files (``[[sub/x]]`` with ``src-folder/sub/x.md`` and a shorter
  ``other/sub/x.md``) - we try relative first.
* Alphabetical final tie-break (two candidates of equal path length, neither
  beside the source).
* Links inside ``%%comments%%``, ``$math$`` and HTML comments: we do not count
  them (they are not rendered); the metadata cache's exact behaviour was not
  observed.
* Headings inside HTML blocks, block ids on table rows, footnote bodies, and
  reference-style links ``[t][ref]`` are not modelled (reference links are
  ignored).
* ``\\|`` outside tables; whitespace around a target (``[[ Note ]]`` - we
  strip it).
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import unquote

__all__ = [
    "Link",
    "Resolution",
    "extract_links",
    "extract_frontmatter_links",
    "split_frontmatter",
    "strip_heading",
    "parse_headings",
    "parse_block_ids",
    "resolve",
    "heading_exists",
    "block_exists",
    "list_vault_files",
    "resolve_vault",
    "vault_pairs",
    "main",
]

SKIP_DIRS = {".obsidian", ".git", ".trash"}

# ---------------------------------------------------------------------------
# data


@dataclass
class Link:
    """One link occurrence in a note body."""

    line: int  # 1-based line in the file (frontmatter lines count)
    raw: str  # the text as written, e.g. "![[Note#H|x]]"
    target: str  # the link path part, decoded for markdown links ("" = self)
    heading: list[str] = field(default_factory=list)  # heading path segments
    block: str | None = None  # block id without "^"
    display: str | None = None  # text after "|" / inside [...]
    is_embed: bool = False
    kind: str = "wiki"  # "wiki" | "markdown"
    subpath: str = ""  # everything after the first "#", as written (decoded)
    in_frontmatter: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Resolution:
    source: str
    link: Link
    target_path: str | None
    heading_ok: bool | None

    def to_dict(self) -> dict:
        d = self.link.to_dict()
        d.update(source=self.source, target_path=self.target_path, heading_ok=self.heading_ok)
        return d


# ---------------------------------------------------------------------------
# masking: code, math, comments -> spaces (offsets and newlines preserved)

_FM_RE = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(\r?\n|\Z)", re.S)


def split_frontmatter(text: str) -> tuple[str, str]:
    """Return (frontmatter_block_including_fences, rest).  '' if none."""
    m = _FM_RE.match(text)
    if not m:
        return "", text
    return text[: m.end()], text[m.end() :]


def _blank(s: str) -> str:
    """Same length, newlines kept, everything else a space."""
    return re.sub(r"[^\n]", " ", s)


_QUOTE_PREFIX = re.compile(r"^(?:[ \t]*>)*[ \t]*")
_FENCE_OPEN = re.compile(r"^(`{3,}|~{3,})(.*)$")
_HTML_RAW_OPEN = re.compile(r"^ {0,3}<(pre|script|style|textarea)(?=[\s>]|$)", re.I)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def _mask_blocks(lines: list[str]) -> list[bool]:
    """Per line: True if the line is inside fenced or indented code."""
    code = [False] * len(lines)
    i = 0
    in_list = False
    prev_blank = True
    while i < len(lines):
        line = lines[i]
        body = _QUOTE_PREFIX.sub("", line, count=1)
        h = _HTML_RAW_OPEN.match(line)
        if h:
            # CommonMark HTML block type 1 (<pre>, <script>, <style>, <textarea>):
            # raw HTML up to the line holding the closing tag; no Markdown inside,
            # so no fence and no link either ([CM]; OFM "does not support Markdown
            # formatting ... inside of HTML tags").
            close = re.compile(r"</" + h.group(1) + r">", re.I)
            j = i
            while j < len(lines):
                code[j] = True
                if close.search(lines[j], h.end() if j == i else 0):
                    break
                j += 1
            i = j + 1
            prev_blank = False
            continue
        m = _FENCE_OPEN.match(body)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = m.group(1)
            code[i] = True
            j = i + 1
            while j < len(lines):
                b = _QUOTE_PREFIX.sub("", lines[j], count=1)
                code[j] = True
                if re.match(r"^" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$", b):
                    break
                j += 1
            i = j + 1
            prev_blank = False
            continue
        stripped = line.strip()
        if not stripped:
            prev_blank = True
            i += 1
            continue
        if _LIST_ITEM.match(line):
            in_list = True
        elif not line[:1].isspace() and prev_blank:
            in_list = False
        # indented code: 4 spaces / a tab after a blank line, not in a list, not in a quote
        if prev_blank and not in_list and (line.startswith("    ") or line.startswith("\t")):
            j = i
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith("    ") or lines[j].startswith("\t")):
                code[j] = True
                j += 1
            # trailing blank lines are not code, harmless either way
            i = j
            prev_blank = False
            continue
        prev_blank = False
        i += 1
    return code


def _mask_inline(text: str) -> str:
    """Blank inline code, %% comments, HTML comments and $ / $$ math.

    Runs over the whole (already fence-masked) text so %% and $$ and <!-- -->
    can span lines.  Offsets are preserved.
    """
    out = list(text)
    n = len(text)
    i = 0

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in "`$%<":
            i += 2
            continue
        if c == "`":
            j = i
            while j < n and text[j] == "`":
                j += 1
            run = j - i
            # find a closing run of exactly `run` backticks, not across a blank line
            k = j
            found = -1
            while k < n:
                if text[k] == "`":
                    m = k
                    while m < n and text[m] == "`":
                        m += 1
                    if m - k == run:
                        found = k
                        break
                    k = m
                    continue
                if text.startswith("\n\n", k):
                    break  # a code span does not cross a blank line
                k += 1
            if found >= 0:
                blank(i, found + run)
                i = found + run
            else:
                i = j
            continue
        if text.startswith("%%", i):
            end = text.find("%%", i + 2)
            stop = n if end < 0 else end + 2
            blank(i, stop)
            i = stop
            continue
        if text.startswith("<!--", i):
            end = text.find("-->", i + 4)
            stop = n if end < 0 else end + 3
            blank(i, stop)
            i = stop
            continue
        if text.startswith("$$", i):
            end = text.find("$$", i + 2)
            if end >= 0:
                blank(i, end + 2)
                i = end + 2
                continue
            i += 2
            continue
        if c == "$":
            # inline math: $x$ - no space after the opening, none before the
            # closing, closing not followed by a digit; stays on one line
            if i + 1 < n and not text[i + 1].isspace() and text[i + 1] != "$":
                k = i + 1
                while k < n and text[k] != "\n":
                    if text[k] == "\\":
                        k += 2
                        continue
                    if text[k] == "$" and not text[k - 1].isspace() and not (k + 1 < n and text[k + 1].isdigit()):
                        break
                    k += 1
                if k < n and text[k] == "$":
                    blank(i, k + 1)
                    i = k + 1
                    continue
            i += 1
            continue
        i += 1
    return "".join(out)


def _masked_body(text: str) -> str:
    """The file text with frontmatter, code, math and comments blanked."""
    fm, body = split_frontmatter(text)
    lines = body.split("\n")
    code = _mask_blocks(lines)
    masked_lines = [(_blank(ln) if c else ln) for ln, c in zip(lines, code, strict=True)]
    masked = "\n".join(masked_lines)
    masked = _mask_inline(masked)
    return _blank(fm) + masked


# ---------------------------------------------------------------------------
# link extraction

_WIKI_RE = re.compile(r"(!?)\[\[([^\n]+?)\]\]")
# [text](dest) with dest either <...> or a run without spaces (balanced parens
# one level deep), optional title.  The text may hold one level of [..].
_MD_RE = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*"
    r"(<[^<>\n]*>|(?:[^\s()<>]|\([^\s()]*\))+)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _is_external(dest: str) -> bool:
    return bool(_SCHEME_RE.match(dest)) or dest.startswith("//")


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _split_subpath(target: str, subpath_raw: str | None) -> tuple[list[str], str | None]:
    if not subpath_raw:
        return [], None
    if subpath_raw.startswith("^"):
        return [], subpath_raw[1:].strip()
    parts = [p.strip() for p in subpath_raw.split("#")]
    return [p for p in parts if p], None


def _parse_wiki_inner(inner: str) -> tuple[str, str, str | None]:
    """inner text of [[...]] -> (linktext, subpath-less handled later, display)."""
    # display: first "|" (an escaped "\|" counts, its backslash dropped)
    m = re.search(r"\\?\|", inner)
    display = None
    if m:
        display = inner[m.end() :]
        inner = inner[: m.start()]
    return inner, "", display


def extract_links(text: str, *, _masked: str | None = None) -> list[Link]:
    """All links in a note's body, in document order."""
    masked = _masked if _masked is not None else _masked_body(text)
    found: list[tuple[int, Link]] = []
    wiki_spans: list[tuple[int, int]] = []
    for m in _WIKI_RE.finditer(masked):
        start, end = m.span()
        raw = text[start:end]
        inner = text[m.start(2) : m.end(2)]
        linktext, _, display = _parse_wiki_inner(inner)
        if "#" in linktext:
            path, sub = linktext.split("#", 1)
        else:
            path, sub = linktext, ""
        heading, block = _split_subpath(path, sub)
        found.append(
            (
                start,
                Link(
                    line=_line_of(text, start),
                    raw=raw,
                    target=path.strip(),
                    heading=heading,
                    block=block,
                    display=display,
                    is_embed=bool(m.group(1)),
                    kind="wiki",
                    subpath=sub,
                ),
            )
        )
        wiki_spans.append((start, end))

    def inside_wiki(pos: int) -> bool:
        return any(a <= pos < b for a, b in wiki_spans)

    for m in _MD_RE.finditer(masked):
        start, end = m.span()
        if inside_wiki(start):
            continue
        dest = text[m.start(3) : m.end(3)]
        if dest.startswith("<") and dest.endswith(">"):
            dest = dest[1:-1]
        dest = dest.strip()
        if not dest or _is_external(dest):
            continue
        if "#" in dest:
            path_enc, sub_enc = dest.split("#", 1)
        else:
            path_enc, sub_enc = dest, ""
        path = unquote(path_enc)
        sub = unquote(sub_enc)
        heading, block = _split_subpath(path, sub)
        found.append(
            (
                start,
                Link(
                    line=_line_of(text, start),
                    raw=text[start:end],
                    target=path.strip(),
                    heading=heading,
                    block=block,
                    display=text[m.start(2) : m.end(2)],
                    is_embed=bool(m.group(1)),
                    kind="markdown",
                    subpath=sub,
                ),
            )
        )
    found.sort(key=lambda t: t[0])
    return [lk for _, lk in found]


_FM_WIKI_RE = re.compile(r"\[\[([^\n\]]+?)\]\]")


def extract_frontmatter_links(text: str) -> list[Link]:
    """Wikilinks written in frontmatter property values ("[[Note]]") [PR]."""
    fm, _ = split_frontmatter(text)
    out: list[Link] = []
    if not fm:
        return out
    for m in _FM_WIKI_RE.finditer(fm):
        linktext, _, display = _parse_wiki_inner(m.group(1))
        path, _, sub = linktext.partition("#")
        heading, block = _split_subpath(path, sub)
        out.append(
            Link(
                line=_line_of(fm, m.start()),
                raw=m.group(0),
                target=path.strip(),
                heading=heading,
                block=block,
                display=display,
                is_embed=False,
                kind="wiki",
                subpath=sub,
                in_frontmatter=True,
            )
        )
    return out


# ---------------------------------------------------------------------------
# headings and blocks

_STRIP_CHARS = re.compile(r"[!\"#$%&()*+,.:;<=>?@^`{|}~/\[\]\\]")


def strip_heading(s: str) -> str:
    """Obsidian's heading normalisation for link matching [SRC][API]."""
    return re.sub(r"\s+", " ", _STRIP_CHARS.sub(" ", s)).strip()


def _norm_heading(s: str) -> str:
    return strip_heading(s).casefold()


_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def parse_headings(text: str, *, _masked: str | None = None) -> list[tuple[int, str]]:
    """(level, raw heading text) for each heading, in order."""
    masked = _masked if _masked is not None else _masked_body(text)
    # use the masked text to know what is code; take heading text from the masked
    # text too (inline code inside a heading is blanked - close enough for matching)
    # but prefer the original when the line is not masked at all.
    orig_lines = text.split("\n")
    lines = masked.split("\n")
    out: list[tuple[int, str]] = []
    prev_para = False
    for idx, line in enumerate(lines):
        src = orig_lines[idx] if idx < len(orig_lines) else line
        if not line.strip():
            prev_para = False
            continue
        m = _ATX_RE.match(line)
        if m and line.lstrip().startswith("#"):
            mo = _ATX_RE.match(src)
            title = (mo.group(2) if mo else m.group(2)) or ""
            out.append((len(m.group(1)), title.strip()))
            prev_para = False
            continue
        sm = _SETEXT_RE.match(line)
        if sm and prev_para and idx > 0:
            level = 1 if sm.group(1).startswith("=") else 2
            out.append((level, orig_lines[idx - 1].strip()))
            prev_para = False
            continue
        s = line.lstrip()
        prev_para = not (
            s.startswith((">", "|", "#")) or _LIST_ITEM.match(line) or line.startswith("    ") or line.startswith("\t")
        )
    return out


_BLOCK_ID_RE = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$")


def parse_block_ids(text: str, *, _masked: str | None = None) -> set[str]:
    """Block ids (casefolded) defined in the note, outside code/comments."""
    masked = _masked if _masked is not None else _masked_body(text)
    ids: set[str] = set()
    for line in masked.split("\n"):
        m = _BLOCK_ID_RE.search(line)
        if m:
            ids.add(m.group(1).casefold())
    return ids


def heading_exists(headings: list[tuple[int, str]], path: list[str]) -> bool:
    """True if the heading path (["A", "B"]) exists: B inside A's section."""
    if not path:
        return True
    want = [_norm_heading(p) for p in path]
    normed = [(lvl, _norm_heading(t)) for lvl, t in headings]

    def search(start: int, k: int, parent_level: int, section_end: int) -> bool:
        for i in range(start, section_end):
            lvl, t = normed[i]
            if lvl <= parent_level:
                break
            if t == want[k]:
                if k == len(want) - 1:
                    return True
                # the section of heading i ends at the next heading of level <= lvl
                end = i + 1
                while end < section_end and normed[end][0] > lvl:
                    end += 1
                if search(i + 1, k + 1, lvl, end):
                    return True
        return False

    return search(0, 0, 0, len(normed))


def block_exists(block_ids: set[str], block: str) -> bool:
    return block.casefold() in block_ids


# ---------------------------------------------------------------------------
# resolution


def list_vault_files(vault_dir: str | Path) -> list[str]:
    """Vault-relative POSIX paths of every file Obsidian would see."""
    root = Path(vault_dir)
    out: list[str] = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if any(part.startswith(".") or part in SKIP_DIRS for part in rel.parts):
            continue
        if p.is_file():
            out.append(rel.as_posix())
    return out


class _Index:
    """Case-insensitive lookups over a file list (built once per vault)."""

    def __init__(self, files: list[str] | set[str] | tuple[str, ...]):
        self.files = list(files)
        self.by_lower: dict[str, str] = {}
        self.by_name: dict[str, list[str]] = {}
        for f in sorted(self.files):
            lo = f.casefold()
            self.by_lower.setdefault(lo, f)
            self.by_name.setdefault(posixpath.basename(lo), []).append(f)


_INDEX_CACHE: dict[int, tuple[object, _Index]] = {}


def _index_for(files) -> _Index:
    if isinstance(files, _Index):
        return files
    key = id(files)
    hit = _INDEX_CACHE.get(key)
    if hit is not None and hit[0] is files:
        return hit[1]
    idx = _Index(files)
    _INDEX_CACHE.clear()
    _INDEX_CACHE[key] = (files, idx)
    return idx


def _lookup_exact(idx: _Index, path: str) -> str | None:
    lo = path.casefold()
    hit = idx.by_lower.get(lo)
    if hit is not None:
        return hit
    return idx.by_lower.get(lo + ".md")


def resolve(target: str, source_path: str, files) -> str | None:
    """Model of getFirstLinkpathDest(linkpath, sourcePath); None if unresolved.

    ``files`` is an iterable of vault-relative POSIX paths (every file, notes
    and attachments).  See the module docstring, "Resolution".
    """
    idx = _index_for(files)
    linkpath = target.strip().replace("\\", "/")
    if linkpath == "":
        return idx.by_lower.get(source_path.casefold(), source_path)
    relative_only = linkpath.startswith("./") or linkpath.startswith("../") or linkpath in (".", "..")
    if linkpath.startswith("/"):
        linkpath = linkpath.lstrip("/")
    src_dir = posixpath.dirname(source_path)

    # d. exact vault path
    if not relative_only:
        hit = _lookup_exact(idx, linkpath)
        if hit:
            return hit

    # e. relative to the source folder
    joined = posixpath.normpath(posixpath.join(src_dir, linkpath)) if src_dir else posixpath.normpath(linkpath)
    if not joined.startswith("../") and joined not in ("..", "."):
        hit = _lookup_exact(idx, joined)
        if hit:
            return hit
    if relative_only:
        return None

    # f. name / path-suffix match
    lo = linkpath.casefold()
    name = posixpath.basename(lo)
    cands: list[str] = []
    for key in (name, name + ".md"):
        for f in idx.by_name.get(key, []):
            fl = f.casefold()
            for want in (lo, lo + ".md"):
                if fl == want or fl.endswith("/" + want):
                    cands.append(f)
                    break
    if not cands:
        return None
    cands = sorted(set(cands), key=lambda f: (len(f), f.casefold()))
    src_dir_lo = src_dir.casefold()
    for f in cands:
        if posixpath.dirname(f).casefold() == src_dir_lo:
            return f
    return cands[0]


# ---------------------------------------------------------------------------
# whole vault


def _note_info(text: str) -> tuple[list[tuple[int, str]], set[str], str]:
    masked = _masked_body(text)
    return parse_headings(text, _masked=masked), parse_block_ids(text, _masked=masked), masked


def resolve_vault(vault_dir: str | Path, *, include_frontmatter: bool = False) -> dict:
    """Resolve every link of every note.  Returns a dict with 'files', 'notes',
    'resolutions' (list[Resolution])."""
    root = Path(vault_dir)
    files = list_vault_files(root)
    idx = _Index(files)
    notes = [f for f in files if f.casefold().endswith(".md")]
    info: dict[str, tuple[list[tuple[int, str]], set[str], str]] = {}
    texts: dict[str, str] = {}
    for n in notes:
        t = (root / n).read_text(encoding="utf-8", errors="replace")
        texts[n] = t
        info[n] = _note_info(t)
    resolutions: list[Resolution] = []
    for n in notes:
        t = texts[n]
        links = extract_links(t, _masked=info[n][2])
        if include_frontmatter:
            links = extract_frontmatter_links(t) + links
        for lk in links:
            dest = resolve(lk.target, n, idx)
            ok: bool | None = None
            # non-markdown sub-paths (#page=3, #icon) are not checked
            if dest is not None and (lk.heading or lk.block) and dest in info:
                heads, blocks, _ = info[dest]
                ok = block_exists(blocks, lk.block) if lk.block is not None else heading_exists(heads, lk.heading)
            resolutions.append(Resolution(source=n, link=lk, target_path=dest, heading_ok=ok))
    return {"files": files, "notes": notes, "resolutions": resolutions}


def vault_pairs(
    vault_dir: str | Path, *, include_frontmatter: bool = False, include_self: bool = True
) -> set[tuple[str, str]]:
    """(source note, target note) for every resolved note-to-note link.

    Embeds of notes count (Obsidian's resolvedLinks includes embeds).  A self
    link (``[[#Heading]]``) gives (n, n) unless include_self=False.
    """
    res = resolve_vault(vault_dir, include_frontmatter=include_frontmatter)
    pairs: set[tuple[str, str]] = set()
    for r in res["resolutions"]:
        if r.target_path and r.target_path.casefold().endswith(".md"):
            if not include_self and r.target_path == r.source:
                continue
            pairs.add((r.source, r.target_path))
    return pairs


def summarize(vault_dir: str | Path, *, include_frontmatter: bool = False) -> dict:
    res = resolve_vault(vault_dir, include_frontmatter=include_frontmatter)
    rs: list[Resolution] = res["resolutions"]
    unresolved = [r for r in rs if r.target_path is None]
    misses = [r for r in rs if r.heading_ok is False]
    pairs = {(r.source, r.target_path) for r in rs if r.target_path and r.target_path.casefold().endswith(".md")}
    return {
        "vault": str(vault_dir),
        "files": len(res["files"]),
        "notes": len(res["notes"]),
        "links": len(rs),
        "wiki_links": sum(1 for r in rs if r.link.kind == "wiki"),
        "markdown_links": sum(1 for r in rs if r.link.kind == "markdown"),
        "embeds": sum(1 for r in rs if r.link.is_embed),
        "resolved": len(rs) - len(unresolved),
        "resolved_to_notes": sum(1 for r in rs if r.target_path and r.target_path.casefold().endswith(".md")),
        "resolved_to_attachments": sum(1 for r in rs if r.target_path and not r.target_path.casefold().endswith(".md")),
        "unresolved": len(unresolved),
        "with_subpath": sum(1 for r in rs if r.heading_ok is not None),
        "heading_misses": len(misses),
        "pairs": len(pairs),
        "self_pairs": sum(1 for a, b in pairs if a == b),
        "unresolved_list": [
            {"file": r.source, "line": r.link.line, "raw": r.link.raw, "target": r.link.target} for r in unresolved
        ],
        "heading_miss_list": [
            {
                "file": r.source,
                "line": r.link.line,
                "raw": r.link.raw,
                "target_path": r.target_path,
                "heading": r.link.heading,
                "block": r.link.block,
            }
            for r in misses
        ],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Resolve a vault's links the way Obsidian does.")
    ap.add_argument("vault")
    ap.add_argument("--json", action="store_true", help="print the full summary as JSON")
    ap.add_argument("--frontmatter", action="store_true", help="also count wikilinks in properties")
    ap.add_argument("--quiet", action="store_true", help="counts only, no lists")
    args = ap.parse_args(argv)
    s = summarize(args.vault, include_frontmatter=args.frontmatter)
    if args.json:
        print(json.dumps(s, ensure_ascii=False, indent=2))
        return 0
    keys = [
        "files",
        "notes",
        "links",
        "wiki_links",
        "markdown_links",
        "embeds",
        "resolved",
        "resolved_to_notes",
        "resolved_to_attachments",
        "unresolved",
        "with_subpath",
        "heading_misses",
        "pairs",
        "self_pairs",
    ]
    print(f"vault: {s['vault']}")
    for k in keys:
        print(f"{k}: {s[k]}")
    if not args.quiet:
        if s["unresolved_list"]:
            print("\nunresolved:")
            for u in s["unresolved_list"]:
                print(f"  {u['file']}:{u['line']}: {u['raw']}")
        if s["heading_miss_list"]:
            print("\nheading / block misses:")
            for u in s["heading_miss_list"]:
                sub = ("^" + u["block"]) if u["block"] is not None else "#".join(u["heading"])
                print(f"  {u['file']}:{u['line']}: {u['raw']}  -> {u['target_path']} #{sub}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
