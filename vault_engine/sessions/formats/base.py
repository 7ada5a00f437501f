"""What every transcript format parses into (`SessionIn` of `TurnIn`s), the error it raises,
and the helpers the formats share: ids, times, content parts, and tool calls folded into one
short line each (an agent's transcript is mostly tool traffic; the note keeps what was done
and what came back, the raw file keeps everything)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from vault_engine.errors import AlayaError
from vault_engine.primitives import to_datetime
from vault_engine.store.ids import is_valid_id, slug
from vault_engine.text.mend import mended

ROLES = {"user", "assistant", "system", "tool", "human", "ai", "bot", "agent", "developer"}
TOOL_INPUT_CHARS = 120  # of a tool call's input, in its summary line
TOOL_RESULT_CHARS = 160  # of what it returned


class IngestError(AlayaError):
    """The input cannot be ingested (malformed, truncated, inconsistent, unknown)."""


@dataclass(frozen=True)
class TurnIn:
    role: str
    content: str
    timestamp: dt.datetime | None = None
    name: str | None = None
    turn_id: str | None = None
    tool_calls: tuple[str, ...] = ()

    def __post_init__(self) -> None:  # a lone surrogate from a JSON escape: U+FFFD (text/mend)
        for name in ("role", "content", "name", "turn_id", "tool_calls"):
            object.__setattr__(self, name, mended(getattr(self, name)))


@dataclass(frozen=True)
class SessionIn:
    """A parsed session, before it is written."""

    id: str
    turns: tuple[TurnIn, ...]
    started: dt.datetime | None
    channel: str | None = None
    agent: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    raw: bytes = b""
    raw_ext: str = ".json"
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("id", "channel", "agent", "metadata"):
            object.__setattr__(self, name, mended(getattr(self, name)))


def session_id(value: Any, fallback: str) -> str:
    """A session's id from its transcript's id, key or file name — never carrying a token
    pasted into one (docs/security.md §2)."""
    from vault_engine.redaction import redact_name

    text = str(value).strip() if value not in (None, "") else fallback
    text = redact_name(text)
    if is_valid_id(text):
        return text
    return "session-" + slug(text)[:80]


def prefixed_id(prefix: str, value: Any, data: bytes) -> str:
    """`<prefix>-<value>` as a valid id; a hash of the input when the export has no id."""
    raw = str(value).strip() if value not in (None, "") else hashlib.sha256(data).hexdigest()[:12]
    return session_id(f"{prefix}-{raw}", f"{prefix}-{raw}")


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def timestamp(value: Any) -> dt.datetime | None:
    return to_datetime(value)


def first_time(turns: tuple[TurnIn, ...] | list[TurnIn]) -> dt.datetime | None:
    return min((t.timestamp for t in turns if t.timestamp), default=None)


def content_text(value: Any) -> str:
    """OpenAI-style content may be a string or a list of parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for p in value:
            if isinstance(p, dict):
                parts.append(str(p.get("text") or p.get("content") or ""))
            else:
                parts.append(str(p))
        return "\n".join(x for x in parts if x)
    return str(value)


def loads(data: bytes, source: str) -> Any:
    """The whole input as one JSON document, with the error a person can act on."""
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise IngestError(f"{source}: not UTF-8 text (byte {exc.start})",
                          fix="save the file as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise IngestError(f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: "
                          f"{exc.msg}", path=source, line=exc.lineno,
                          fix="fix the JSON (a truncated file cannot be ingested)") from None


def export_items(data: bytes, source: str, is_item: Any, what: str,
                 key: str) -> list[tuple[str, dict[str, Any]]]:
    """(where, conversation) of an export: a JSON list of conversations, or one alone. A
    conversation without its `key` is an error naming it."""
    obj = loads(data, source)
    items = obj if isinstance(obj, list) else [obj]
    out = []
    for i, item in enumerate(items):
        where = f"{source}: conversation {i + 1}" if isinstance(obj, list) else source
        if not is_item(item):
            raise IngestError(f"{where} has no `{key}`: not a {what} conversation",
                              fix=f"pass conversations.json from the {what} export unchanged")
        out.append((where, item))
    return out


def json_lines(data: bytes, source: str, *, final: bool = True) -> list[tuple[int, Any, str]]:
    """(line number, object, line) of a JSON Lines input. A bad line is an error naming it —
    except, with `final=False` (a transcript still being written), a last line without its
    newline, which is left for the next read."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestError(f"{source}: not UTF-8 text (byte {exc.start})",
                          fix="save the file as UTF-8") from None
    lines = text.splitlines(keepends=True)
    if not final and lines and not lines[-1].endswith("\n"):
        lines = lines[:-1]
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            last = n == len(lines) and not line.endswith("\n")
            raise IngestError(
                f"{source}: line {n} is not valid JSON ({exc.msg})"
                + (" — the file looks truncated mid-line" if last else ""),
                path=source, line=n,
                fix="repair or remove that line; nothing was ingested") from None
        out.append((n, obj, line))
    return out


def clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


# the argument that says what a tool call did, by tool (Claude Code, OpenClaw, MCP-style names)
_KEY_ARGS = ("command", "cmd", "file_path", "path", "filePath", "pattern", "query", "url",
             "description", "prompt", "code", "text")


def tool_input(args: Any) -> str:
    """A tool call's input in a few words: its telling argument, else its JSON."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return clip(args, TOOL_INPUT_CHARS)
    if isinstance(args, dict):
        for key in _KEY_ARGS:
            if isinstance(args.get(key), str) and args[key].strip():
                return clip(args[key], TOOL_INPUT_CHARS)
        if isinstance(args.get("todos"), list):
            return f"{len(args['todos'])} todo(s)"
    return clip(json.dumps(args, ensure_ascii=False, default=str), TOOL_INPUT_CHARS)


def tool_output(value: Any) -> str:
    """What a tool returned, as its first meaningful line(s), clipped."""
    text = content_text(value) if not isinstance(value, dict) else content_text(
        value.get("content") or value.get("text") or json.dumps(value, ensure_ascii=False))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "(no output)"
    shown = clip(" / ".join(lines[:3]), TOOL_RESULT_CHARS)
    return shown + (f" (+{len(lines) - 3} lines)" if len(lines) > 3 else "")


@dataclass
class ToolCall:
    """A tool call waiting for (or folded with) its result."""

    name: str
    args: str
    result: str | None = None
    error: bool = False

    def line(self) -> str:
        done = "" if self.result is None else (" → error: " if self.error else " → ") + \
            self.result
        args = self.args.replace("`", "'")
        return f"- tool {self.name}: `{args}`{done}"


def with_tools(text: str, calls: list[ToolCall]) -> str:
    """A turn's text followed by one summary line per tool call."""
    lines = "\n".join(c.line() for c in calls)
    return (text.rstrip() + "\n\n" + lines if text.strip() else lines) if calls else text


class TurnDraft:
    """A turn being assembled: its text blocks and tool calls, whose results may arrive in
    later records; `build` renders it once everything is in."""

    def __init__(self, role: str, when: Any, turn_id: Any = None, name: str | None = None) -> None:
        self.role, self.when, self.name = role, when, name
        self.turn_id = str(turn_id) if turn_id not in (None, "") else None
        self.texts: list[str] = []
        self.calls: list[ToolCall] = []

    def build(self) -> TurnIn | None:
        text = "\n\n".join(t for t in self.texts if t.strip())
        content = with_tools(text, self.calls)
        if not content.strip():
            return None
        return TurnIn(role=self.role, content=content, timestamp=timestamp(self.when),
                      name=self.name, turn_id=self.turn_id)


def build_all(drafts: list[TurnDraft]) -> tuple[TurnIn, ...]:
    return tuple(t for t in (d.build() for d in drafts) if t is not None)
