"""Frontmatter that round-trips byte for byte.

A note is kept as its raw text. Parsing finds, with PyYAML's composer (libyaml when present),
the line span of every top-level key and of every item of block sequences; values are
constructed with the safe constructor so YAML types survive (a float stays a float, a date is
a datetime). Editing a key re-renders only that key's lines; appending to or removing from a
block sequence touches only the item lines. Everything else — comments, quoting styles, key
order, unknown keys, CRLF line endings, a BOM — is re-emitted exactly as read.

Why not ruamel.yaml round-trip: it is ~10x slower to load (see docs/benchmarks.md,
"Frontmatter round-trip") and still normalises some spacing on dump; we only need to rewrite
the keys we change, and the composer's marks tell us where they are.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from vault_engine.errors import NoteParseError

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_OPEN_RE = re.compile(r"^---[ \t]*$")
ALIAS_LIMIT = 10_000  # values YAML aliases may expand to in one frontmatter
_CLOSE_RE = re.compile(r"^(---|\.\.\.)[ \t]*$")


class FlowMap(dict):  # type: ignore[type-arg]
    """A mapping rendered in flow style on one line: `{type: X, target: '[[Y]]'}`."""


class FlowList(list):  # type: ignore[type-arg]
    """A list rendered in flow style on one line: `[a, b, c]`."""


class _Dumper(yaml.SafeDumper):
    pass


def _represent_flowlist(dumper: yaml.SafeDumper, data: FlowList) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


def _represent_flowmap(dumper: yaml.SafeDumper, data: FlowMap) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=True)


def _represent_datetime(dumper: yaml.SafeDumper, data: _dt.datetime) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", format_datetime(data))


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(FlowMap, _represent_flowmap)
_Dumper.add_representer(FlowList, _represent_flowlist)
_Dumper.add_representer(_dt.datetime, _represent_datetime)
_Dumper.add_representer(str, _represent_str)


def format_datetime(value: _dt.datetime) -> str:
    """ISO 8601 in UTC with a `Z`, seconds precision: `2026-03-31T06:29:00Z`."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.UTC)
    return value.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_SCALARS = (str, int, float, bool, _dt.date, type(None))


def styled(value: Any, top: bool = True) -> Any:
    """The house style: a list of scalars on one line (`tags: [a, b]`); everything else in
    block style, except mappings the caller marked `FlowMap` (relation and evidence items),
    which keep one line per item so diffs stay one line per change."""
    if isinstance(value, FlowMap | FlowList):
        return value
    if isinstance(value, list | tuple):
        if top and all(isinstance(v, _SCALARS) for v in value):
            return FlowList(value)
        return [styled(v, top=False) for v in value]
    if isinstance(value, Mapping):
        return {k: styled(v, top=True) for k, v in value.items()}
    return value


def dump_value(key: str, value: Any) -> str:
    """Render `key: value` as YAML lines in the house style."""
    text = yaml.dump({key: styled(value)}, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=1_000_000, indent=2)
    return text


def dump_item(value: Any, indent: int) -> str:
    """Render one block-sequence item (`- …`) indented by `indent` spaces."""
    text = yaml.dump([styled(value, top=False)], Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=1_000_000, indent=2)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


@dataclass(frozen=True)
class KeySpan:
    """Line span [start, end) of a top-level key inside the frontmatter lines."""

    key: str
    start: int
    end: int
    block_seq: bool
    items: tuple[tuple[int, int], ...] = ()  # spans of block-sequence items
    dash_indent: int = 0


@dataclass
class Frontmatter:
    """The frontmatter of one note: raw lines plus parsed data and key spans.

    `lines` are the lines between the `---` fences, each with its line ending. `data` is the
    constructed mapping. Mutating methods edit `lines` and re-parse, so `data` and spans
    always describe the current text.
    """

    lines: list[str]
    newline: str = "\n"
    data: dict[str, Any] = field(default_factory=dict)
    spans: dict[str, KeySpan] = field(default_factory=dict)
    first_line: int = 2  # 1-based file line of lines[0]
    path: str | None = None
    # keys written twice: (key, first line, second line), 1-based file lines; YAML keeps the
    # second value, lint reports both lines (`duplicate-key`)
    duplicates: list[tuple[str, int, int]] = field(default_factory=list)

    @classmethod
    def parse(cls, lines: list[str], *, newline: str = "\n", first_line: int = 2,
              path: str | None = None) -> Frontmatter:
        fm = cls(lines=list(lines), newline=newline, first_line=first_line, path=path)
        fm._reparse()
        return fm

    # -- parsing -------------------------------------------------------------------------
    def _reparse(self) -> None:
        text = "".join(self.lines)
        if not text.strip():
            self.data, self.spans = {}, {}
            return
        try:
            loader = _Loader(text)
            try:
                node = loader.get_single_node()
                if node is not None and "*" in text:
                    self._refuse_aliases(node, text)  # before building it: a bomb never grows
                data = loader.construct_document(node) if node is not None else {}
            finally:
                loader.dispose()
        except yaml.YAMLError as exc:
            raise self._yaml_error(exc) from None
        if node is None:
            self.data, self.spans = {}, {}
            return
        if not isinstance(node, yaml.MappingNode) or not isinstance(data, dict):
            raise NoteParseError(
                "frontmatter is not a mapping of keys to values", path=self.path,
                line=self.first_line, fix="write frontmatter as `key: value` lines")
        self.data = data
        self.spans = self._compute_spans(node)

    def _refuse_aliases(self, root: yaml.Node, text: str) -> None:
        """YAML anchors and aliases are bounded before a value is built: an alias that refers
        to itself (every reader would recurse forever) or aliases that expand to more than
        ALIAS_LIMIT values (an "alias bomb": a few hundred bytes, gigabytes built) are
        refused with the line of the first alias. Ordinary reuse — a merge key `<<: *base` —
        still works. The walk sees each node once."""
        size: dict[int, int] = {}
        path: set[int] = set()
        stack: list[tuple[yaml.Node, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            children = (node.value if isinstance(node, yaml.SequenceNode) else
                        [x for kv in node.value for x in kv]
                        if isinstance(node, yaml.MappingNode) else [])
            if done:
                path.discard(id(node))
                size[id(node)] = 1 + sum(size[id(c)] for c in children)
                continue
            if id(node) in size:
                continue
            path.add(id(node))
            stack.append((node, True))
            for child in children:
                if id(child) in path:
                    raise self._alias_error(text, "a YAML alias refers to the value that "
                                                  "holds it (it never ends)")
                if id(child) not in size:
                    stack.append((child, False))
        # expanded far beyond what is written: the sizes are counted, never built
        if size[id(root)] > max(ALIAS_LIMIT, 4 * len(size)):
            raise self._alias_error(text, f"YAML aliases expand to {size[id(root)]:,} values "
                                          "(an alias bomb)")

    def _alias_error(self, text: str, what: str) -> NoteParseError:
        return NoteParseError(f"{what}: refused", path=self.path,
                              line=self.first_line + self._alias_line(text),
                              fix="write the values out instead of `*name` aliases")

    @staticmethod
    def _alias_line(text: str) -> int:
        """0-based line of the first alias, from the event stream (only for the error)."""
        try:
            for event in yaml.parse(text, Loader=_Loader):
                if isinstance(event, yaml.AliasEvent) and event.start_mark is not None:
                    return int(event.start_mark.line)
        except yaml.YAMLError:
            pass
        return 0

    def _yaml_error(self, exc: yaml.YAMLError) -> NoteParseError:
        """Name the line at fault: where the problem is, or where the unclosed construct began
        when the problem is only noticed at the end of the frontmatter."""
        problem_mark = getattr(exc, "problem_mark", None)
        context_mark = getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        mark = problem_mark or context_mark
        if (context_mark is not None and problem_mark is not None
                and problem_mark.line >= len(self.lines)):
            mark = context_mark
        line = self.first_line + mark.line if mark is not None else self.first_line
        message = f"malformed YAML frontmatter: {problem}"
        if context and context_mark is not None:
            message += f" ({context} started on line {self.first_line + context_mark.line})"
        return NoteParseError(
            message, path=self.path, line=line,
            fix="correct the YAML at that line (quote values containing ': ' or ' #', close "
                "brackets and quotes, indent list items consistently)")

    def _compute_spans(self, node: yaml.MappingNode) -> dict[str, KeySpan]:
        spans: dict[str, KeySpan] = {}
        pairs = node.value
        n = len(self.lines)
        self.duplicates = []
        for i, (knode, vnode) in enumerate(pairs):
            start = knode.start_mark.line
            end = pairs[i + 1][0].start_mark.line if i + 1 < len(pairs) else n
            end = self._trim(start + 1, end, 0)
            key = str(knode.value)
            if key in spans:
                self.duplicates.append((key, self.first_line + spans[key].start,
                                        self.first_line + start))
            items: list[tuple[int, int]] = []
            block_seq = isinstance(vnode, yaml.SequenceNode) and not vnode.flow_style
            dash_indent = 0
            if block_seq and vnode.value:
                starts = [self._dash_line(item.start_mark.line, start) for item in vnode.value]
                dash_indent = _indent_of(self.lines[starts[0]])
                for j, s in enumerate(starts):
                    e = starts[j + 1] if j + 1 < len(starts) else end
                    items.append((s, self._trim(s + 1, e, dash_indent)))
            spans[key] = KeySpan(key, start, end, block_seq, tuple(items), dash_indent)
        return spans

    def _trim(self, lo: int, end: int, indent: int) -> int:
        """Move `end` back over trailing blank lines and comments indented at most `indent`.

        Such comments describe what follows them; deeper-indented `#` lines may be the
        content of a block scalar and stay with the value.
        """
        while end > lo:
            line = self.lines[end - 1]
            s = line.strip()
            if s == "" or (s.startswith("#") and _indent_of(line) <= indent):
                end -= 1
            else:
                break
        return end

    def _dash_line(self, line: int, floor: int) -> int:
        while line > floor and not self.lines[line].lstrip().startswith("-"):
            line -= 1
        return line

    # -- reading -------------------------------------------------------------------------
    def text(self) -> str:
        return "".join(self.lines)

    def line_of(self, key: str) -> int | None:
        """1-based file line where `key` starts."""
        span = self.spans.get(key)
        return None if span is None else self.first_line + span.start

    def item_line(self, key: str, index: int) -> int | None:
        span = self.spans.get(key)
        if span is None or index >= len(span.items):
            return self.line_of(key)
        return self.first_line + span.items[index][0]

    # -- editing -------------------------------------------------------------------------
    def _render(self, text: str) -> list[str]:
        out = text.splitlines(True)
        if self.newline != "\n":
            out = [ln[:-1] + self.newline if ln.endswith("\n") else ln for ln in out]
        return out

    def _ensure_trailing_newline(self) -> None:
        if self.lines and not self.lines[-1].endswith(("\n", "\r")):
            self.lines[-1] += self.newline

    def set(self, key: str, value: Any) -> None:
        """Set a top-level key; only that key's lines change (new keys go last)."""
        new = self._render(dump_value(key, value))
        span = self.spans.get(key)
        if span is None:
            self._ensure_trailing_newline()
            self.lines.extend(new)
        else:
            if span.end == len(self.lines) and not self.lines[span.end - 1].endswith(("\n", "\r")):
                new[-1] = new[-1].rstrip("\r\n")
            self.lines[span.start:span.end] = new
        self._reparse()

    def delete(self, key: str) -> bool:
        span = self.spans.get(key)
        if span is None:
            return False
        del self.lines[span.start:span.end]
        self._reparse()
        return True

    def append_item(self, key: str, value: Any) -> None:
        """Append to a list; a block sequence gains only the new item's lines."""
        span = self.spans.get(key)
        current = self.data.get(key)
        if span is not None and span.block_seq and span.items:
            last_end = span.items[-1][1]
            new = self._render(dump_item(value, span.dash_indent))
            if last_end == len(self.lines):
                self._ensure_trailing_newline()
            self.lines[last_end:last_end] = new
            self._reparse()
            return
        items = list(current) if isinstance(current, list) else []
        items.append(value)
        self.set(key, items)

    def remove_items(self, key: str, predicate: Callable[[Any], bool]) -> int:
        """Remove list items matching `predicate`; block items lose only their own lines."""
        current = self.data.get(key)
        if not isinstance(current, list):
            return 0
        doomed = [i for i, item in enumerate(current) if predicate(item)]
        if not doomed:
            return 0
        span = self.spans[key]
        if span.block_seq and len(span.items) == len(current) and len(doomed) < len(current):
            for i in reversed(doomed):
                s, e = span.items[i]
                del self.lines[s:e]
            self._reparse()
        else:
            keep = [item for i, item in enumerate(current) if i not in set(doomed)]
            self.set(key, keep)
        return len(doomed)


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


@dataclass
class NoteText:
    """A whole note split into BOM, frontmatter fences, frontmatter and body — losslessly."""

    bom: str
    open_fence: str  # "---\n" or "" when the note has no frontmatter
    frontmatter: Frontmatter
    close_fence: str
    body: str
    newline: str
    path: str | None = None

    @property
    def body_line(self) -> int:
        """1-based file line where the body starts."""
        if not self.open_fence:
            return 1
        return 2 + len(self.frontmatter.lines) + 1

    def render(self) -> str:
        return (self.bom + self.open_fence + self.frontmatter.text() + self.close_fence
                + self.body)

    def ensure_frontmatter(self) -> None:
        if not self.open_fence:
            self.open_fence = "---" + self.newline
            self.close_fence = "---" + self.newline
            self.frontmatter = Frontmatter.parse([], newline=self.newline, first_line=2,
                                                 path=self.path)

    def set(self, key: str, value: Any) -> None:
        self.ensure_frontmatter()
        self.frontmatter.set(key, value)

    def update(self, values: Mapping[str, Any]) -> None:
        for k, v in values.items():
            self.set(k, v)

    def set_body(self, body: str) -> None:
        self.body = body

    @classmethod
    def parse(cls, text: str, path: str | None = None) -> NoteText:
        bom = ""
        if text.startswith("\ufeff"):
            bom, text = "\ufeff", text[1:]
        newline = "\r\n" if "\r\n" in text[:4096] else "\n"
        lines = text.splitlines(True)
        if lines and _OPEN_RE.match(lines[0].rstrip("\r\n")):
            for i in range(1, len(lines)):
                if _CLOSE_RE.match(lines[i].rstrip("\r\n")):
                    fm = Frontmatter.parse(lines[1:i], newline=newline, first_line=2, path=path)
                    return cls(bom, lines[0], fm, lines[i], "".join(lines[i + 1:]), newline,
                               path)
            raise NoteParseError("frontmatter opened with '---' on line 1 is never closed",
                                 path=path, line=1,
                                 fix="add a line with '---' after the last frontmatter key")
        empty = Frontmatter.parse([], newline=newline, path=path)
        return cls(bom, "", empty, "", text, newline, path)


def new_note_text(values: Mapping[str, Any], body: str) -> str:
    """Render a new note: frontmatter keys in the given order, then the body."""
    note = NoteText.parse("---\n---\n")
    for key, value in values.items():
        if value is None:
            continue
        note.frontmatter.set(key, value)
    return note.render() + body


def iter_scalar_strings(value: Any) -> Iterable[str]:
    """Every string found inside a YAML value (for wikilinks in frontmatter)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from iter_scalar_strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from iter_scalar_strings(v)


def flow_claims(claims: Any) -> list[Any]:
    """Claims as the house style renders them: each evidence item on one line (a FlowMap)."""
    out = []
    for c in claims:
        c = dict(c)
        if isinstance(c.get("evidence"), list):
            c["evidence"] = [FlowMap(e) if isinstance(e, dict) else e for e in c["evidence"]]
        out.append(c)
    return out
