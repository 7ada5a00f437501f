"""Sentences and clauses, in Chinese and English alike, with code, logs, paths and identifiers
kept intact.

A turn is first cut into **regions**: the speaker's own prose, fenced code, pasted material
(block quotes `> …`, blocks between `---` lines, log lines) — `quoted.py` says what kind.
Prose and quoted regions are then cut into **sentences**:

- Chinese ends a sentence on 。！？；and …… with no space needed; a closing quote or bracket
  after the mark stays with its sentence (`他说：“好。”`);
- English ends on . ! ? followed by a space, a line end or a Chinese character — but not after
  an abbreviation (`e.g.`, `i.e.`, `etc.`, `vs.`, `Dr.`, `No. 5`) or inside a number, a
  version, a path, a URL or a dotted identifier (`errors.Join`, `v3.8.0`, `redis.conf`);
- a line break ends a sentence, and every list item (`- `, `* `, `1. `, `1、`, `①`) and table
  row is a sentence of its own, remembering the line that introduced the list (`改进项定下来了：`);
- inline code (`` `…` ``) and URLs are never cut.

**Clauses** cut a sentence further at ，, ；; ：: and dashes (never inside a number such as
`1,200`, a time such as `20:10`, a URL or inline code): titles are cut at clause boundaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .quoted import Region, regions

_PROTECT_RE = re.compile(
    r"`[^`\n]+`"  # inline code
    r"|https?://[^\s，。；！？、）)\]>\"'`]*[^\s，。；！？、）)\]>\"'`.,;:!?]"  # URLs
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail addresses
    r"|(?<![\w/])(?:~|\.{1,2})?/[\w.@%+~-]+(?:/[\w.@%+~-]*)+"  # paths
    r"|\b[A-Za-z_][\w-]*(?:\.[A-Za-z_0-9][\w-]*)+\(?\)?"  # dotted identifiers, calls
    r"|\bv?\d+(?:\.\d+)+\+?"  # versions, decimals, IPs
    r"|\b(?:TL;DR|tl;dr)\b")
ABBREVIATIONS = frozenset("""e.g i.e etc vs cf approx dr mr mrs ms prof st no nos fig al
jr sr inc ltd co corp dept est min max a.m p.m u.s u.k""".split())
_END_RE = re.compile(
    r"(?:……|…(?![.\w])|[。！？；]+|[!?]+(?=\s|$|[\u4e00-\u9fff”’」』）)\]\"'])"
    r"|\.(?=\s|$|[\u4e00-\u9fff]))"
    r"[”’」』）)\]\"']*")
_ITEM_RE = re.compile(r"^\s*(?:[-*•·]\s+|\d{1,2}[.)、]\s*|[（(]\d{1,2}[)）]\s*|[①-⑳]\s*"
                      r"|[a-z][.)]\s+)")
_TABLE_SEP_RE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CLAUSE_RE = re.compile(
    r"[，；：、]|——|(?<!\d),(?!\d)|,(?=\s)|;(?=\s)|:(?=\s)|\s[-–—]\s")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a turn, with where it sits and what it is."""

    text: str
    start: int  # offsets into the turn's text
    end: int
    quoted: str | None = None  # None: the speaker's own words; else the kind of material
    item: bool = False  # a list item or table row
    header: str | None = None  # the line that introduced the list this item belongs to
    table: bool = False

    @property
    def question(self) -> bool:
        return self.text.rstrip("”’」』）)\"' ").endswith(("?", "？", "吗", "呢"))


# a bracketed aside closed on the same line ("（DELETE、TRUNCATE、ALTER TABLE ... DROP PARTITION）")
# is part of its sentence: no mark inside it ends the sentence
_BRACKETED_RE = re.compile(r"（[^（）\n]{1,120}）|\([^()\n]{1,120}\)|【[^【】\n]{1,120}】")


def _protected(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _PROTECT_RE.finditer(text)]


def _asides(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _BRACKETED_RE.finditer(text)]


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(a < pos < b for a, b in spans)


def _is_abbreviation(text: str, dot: int) -> bool:
    """Is the `.` at `dot` the end of an abbreviation (`e.g.`, `Dr.`) or of an initial?"""
    m = re.search(r"(?<![A-Za-z])([A-Za-z]+(?:\.[A-Za-z]+)*)$", text[:dot])
    if not m:
        return False
    word = m.group(1).lower()
    if word in ("no", "nos"):  # "No. 5", not "said no."
        return bool(re.match(r"\s*\d", text[dot + 1:]))
    if word in ABBREVIATIONS:
        return True
    return len(word) == 1 and word.isalpha() and text[dot - 1].isupper()  # "J. Smith"


def split_line(line: str, offset: int = 0) -> list[tuple[str, int, int]]:
    """The sentences of one line: (text, start, end) with offsets from `offset`."""
    spans = _protected(line)
    asides = _asides(line)
    out: list[tuple[str, int, int]] = []
    start = 0
    for m in _END_RE.finditer(line):
        if _inside(m.start(), spans) or _inside(m.end() - 1, spans):
            continue
        if any(a < m.start() < b and m.end() < b for a, b in asides):
            continue  # "(… ALTER TABLE ... DROP …)": the aside goes on; "(see above.)" ends
        mark = m.group(0)
        if mark.startswith(".") and _is_abbreviation(line, m.start()):
            continue
        end = m.end()
        piece = line[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append((piece.strip(), offset + start + lead,
                        offset + start + lead + len(piece.strip())))
        start = end
    rest = line[start:]
    if rest.strip():
        lead = len(rest) - len(rest.lstrip())
        out.append((rest.strip(), offset + start + lead, offset + start + lead + len(rest.strip())))
    return out


def _table_cells(line: str) -> str:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return " · ".join(c for c in cells if c)


def sentences(text: str, *, include_code: bool = False) -> list[Sentence]:
    """Every sentence of a turn's text, in order (code regions only when asked)."""
    out: list[Sentence] = []
    for region in regions(text):
        if region.kind == "code" and not include_code:
            continue
        out.extend(_region_sentences(text, region))
    return out


def _region_sentences(text: str, region: Region) -> list[Sentence]:
    out: list[Sentence] = []
    quoted = None if region.kind == "prose" else (region.quote_kind or region.kind)
    header: str | None = None
    table_head: str | None = None
    pos = region.start
    for raw_line in text[region.start:region.end].split("\n"):
        line_start = pos
        pos += len(raw_line) + 1
        line = raw_line
        # a quoted region keeps its "> " markers in the text: read past them
        strip = re.match(r"^\s*(?:>\s?)+", line) if region.kind == "quote" else None
        if strip:
            line_start += strip.end()
            line = line[strip.end():]
        if not line.strip():
            header = None
            continue
        if region.kind == "pasted" and re.fullmatch(r"\s*(?:-{3,}|={3,}|—{2,}|_{3,})\s*", line):
            continue
        if region.kind == "code":
            out.append(Sentence(line.strip(), line_start, line_start + len(line), "code"))
            continue
        if line.lstrip().startswith("|"):
            if _TABLE_SEP_RE.match(line):
                if out and out[-1].table and table_head is None:
                    table_head = out.pop().text  # the row above the rule names the columns
                continue
            cells = _table_cells(line)
            if cells:
                out.append(Sentence(cells, line_start, line_start + len(line), quoted,
                                    item=True, header=table_head, table=True))
            continue
        table_head = None
        item = _ITEM_RE.match(line)
        if item:
            body_start = line_start + item.end()
            for s, a, b in split_line(line[item.end():], body_start):
                out.append(Sentence(s, a, b, quoted, item=True, header=header))
            continue
        parts = split_line(line, line_start)
        for s, a, b in parts:
            out.append(Sentence(s, a, b, quoted))
        last = parts[-1][0] if parts else ""
        header = last if last.endswith(("：", ":")) else None
    return out


def _bracketed(text: str) -> list[tuple[int, int]]:
    """Spans inside brackets and quotes: a clause never ends inside them."""
    out, stack = [], []
    pairs = {"（": "）", "(": ")", "“": "”", "「": "」", "『": "』", "《": "》", "[": "]"}
    quote = -1  # ASCII double quotes open and close with the same mark
    for i, ch in enumerate(text):
        if ch == '"':
            if quote < 0:
                quote = i
            else:
                out.append((quote, i + 1))
                quote = -1
            continue
        if ch in pairs:
            stack.append((ch, i))
        elif stack and ch == pairs[stack[-1][0]]:
            out.append((stack.pop()[1], i + 1))
    return out


def clause_spans(sentence: str) -> list[tuple[int, int]]:
    """(start, end) of each clause of a sentence; each clause keeps its trailing mark."""
    spans = _protected(sentence) + _bracketed(sentence)
    cuts = [m.end() for m in _CLAUSE_RE.finditer(sentence)
            if not _inside(m.start(), spans) and not _inside(m.end() - 1, spans)]
    out, start = [], 0
    for cut in cuts:
        if sentence[start:cut].strip(" ，,；;：:、—–-"):
            out.append((start, cut))
            start = cut
    if sentence[start:].strip():
        out.append((start, len(sentence)))
    elif out:
        out[-1] = (out[-1][0], len(sentence))
    return out


def clauses(sentence: str) -> list[str]:
    """The clauses of a sentence, each stripped of its boundary mark."""
    return [sentence[a:b].strip().rstrip("，,；;：:、—–- ").strip()
            for a, b in clause_spans(sentence) if sentence[a:b].strip()]


def has_cjk(text: str) -> bool:
    return bool(re.search(r"[\u3400-\u4dbf\u4e00-\u9fff]", text))


def cjk_share(text: str) -> float:
    """Share of Han characters among the letters of a text: its language, roughly."""
    han = len(re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff]", text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return han / (han + latin / 4) if han or latin else 0.0
