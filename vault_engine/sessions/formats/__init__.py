"""The transcript formats `alaya ingest` reads, and how it tells them apart.

| name | what | module |
|---|---|---|
| `session` | the session JSON of seed 000: {id, timestamp, channel, agent, turns: […]} | generic |
| `messages` | JSONL messages (seed 004), or a JSON list of {role, content} messages | generic |
| `transcript` | a markdown or text transcript: `Speaker: text` lines, `### Speaker` headings | generic |
| `claude-code` | a Claude Code transcript (~/.claude/projects/…/<sessionId>.jsonl) | claude_code |
| `chatgpt` | ChatGPT's export `conversations.json` (or one conversation of it) | chatgpt |
| `claude-ai` | Claude.ai's export `conversations.json` (or one conversation of it) | claude_ai |
| `openclaw` | an OpenClaw session file (~/.openclaw/agents/<agent>/sessions/<id>.jsonl) | openclaw |

Whatever the format, a session's metadata — channel, agent, topic, model, speaker names — comes
out one line, capped, and left out when it reads as an injection (fields.py).

`detect` looks at the shape — one JSON document or JSON Lines, and the keys of the records —
never at the file name. Input that fits none gets an error naming the formats above and the
shape it did have, so the person knows whether to pass `--format` or convert the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import chatgpt, claude_ai, claude_code, fields, generic, openclaw
from .base import IngestError, SessionIn, TurnIn

__all__ = ["FORMATS", "IngestError", "SessionIn", "TurnIn", "detect", "detect_records",
           "parse_input"]


@dataclass(frozen=True)
class Format:
    name: str
    label: str
    parse: Callable[[bytes, str], list[SessionIn]]


def _messages(data: bytes, source: str) -> list[SessionIn]:
    if data.lstrip()[:1] == b"[":
        return [generic.parse_message_list(data, source)]
    return generic.parse_jsonl(data, source)


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("session", "the session JSON (seed 000)",
           lambda d, s: [generic.parse_session_json(d, s)]),
    Format("messages", "JSONL messages or a JSON list of messages", _messages),
    Format("transcript", "a text transcript (`Speaker: text`)",
           lambda d, s: [generic.parse_transcript(d, s)]),
    Format("claude-code", "a Claude Code transcript (JSONL)",
           lambda d, s: [claude_code.parse(d, s)]),
    Format("chatgpt", "ChatGPT's conversations.json", chatgpt.parse),
    Format("claude-ai", "Claude.ai's conversations.json", claude_ai.parse),
    Format("openclaw", "an OpenClaw session file (JSONL)", lambda d, s: [openclaw.parse(d, s)]),
)}
SNIFF_LINES = 200  # JSON Lines: how many records decide the format
_JSON_TYPES = {"dict": "object", "list": "list", "str": "string", "int": "number",
               "float": "number", "bool": "boolean", "NoneType": "null"}


def _keys(objs: list[Any]) -> str:
    keys: list[str] = []
    for o in objs:
        for k in o if isinstance(o, dict) else ():
            if k not in keys:
                keys.append(str(k))
    return ", ".join(keys[:8]) + (" …" if len(keys) > 8 else "") if keys else "no keys"


def _unknown(source: str, looked: str) -> IngestError:
    known = "; ".join(f"{f.name} ({f.label})" for f in FORMATS.values())
    return IngestError(f"not a transcript format alaya knows: it looks like {looked}. "
                       f"Known formats: {known}",
                       path=source, fix="if it is one of them, pass `--format NAME`; otherwise "
                       'convert it to the session JSON {"id": "…", "turns": [{"role": "user", '
                       '"content": "…"}]}')


def detect_records(data: bytes) -> list[Any]:
    """The first SNIFF_LINES JSON Lines records that parse (what detection looks at)."""
    out = []
    for line in data[:1 << 20].splitlines()[:SNIFF_LINES]:
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def detect(data: bytes, source: str) -> str:
    """The name of the format `data` is in (see FORMATS), or the helpful IngestError."""
    if not data.strip():
        raise IngestError(f"{source}: the input is empty", fix="pass a session file")
    if b"\x00" in data[:8192]:
        raise IngestError(f"{source}: binary data, not a session",
                          fix="pass a session JSON, JSONL or text transcript (or an export's "
                              "conversations.json, not the zip)")
    if data.lstrip()[:1] not in (b"{", b"["):
        return "transcript"
    try:
        obj = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError:
        records = detect_records(data)
        if not records:  # not JSON Lines either: a broken JSON document
            return "session" if data.lstrip()[:1] == b"{" else "messages"
        if claude_code.looks_like(records):
            return "claude-code"
        if openclaw.looks_like(records):
            return "openclaw"
        if any(generic.is_message(r) for r in records):
            return "messages"
        kinds = sorted({str(r.get("type")) for r in records if isinstance(r, dict) and "type" in r})
        raise _unknown(source, f"JSON Lines of records with keys {_keys(records)}"
                       + (f" (type: {', '.join(kinds[:6])})" if kinds else "")) from None
    checks: tuple[tuple[str, Any], ...] = (
        ("chatgpt", chatgpt.looks_like), ("claude-ai", claude_ai.looks_like),
        ("messages", lambda o: all(generic.is_message(m) for m in (
            o if isinstance(o, list) else [o]))),
        ("claude-code", lambda o: isinstance(o, dict) and claude_code.looks_like([o])),
        ("openclaw", lambda o: isinstance(o, dict) and openclaw.looks_like([o])))
    if isinstance(obj, dict) and isinstance(obj.get("turns"), list):
        return "session"
    if isinstance(obj, dict | list) and obj:
        found = next((name for name, test in checks if test(obj)), None)
        if found:
            return found
    if isinstance(obj, dict):
        raise _unknown(source, f"a JSON object with keys {_keys([obj])}")
    if isinstance(obj, list) and obj:
        kinds = sorted({_JSON_TYPES.get(type(m).__name__, "value") + "s" for m in obj})
        with_keys = f" with keys {_keys(obj[:SNIFF_LINES])}" if any(
            isinstance(m, dict) for m in obj) else ""
        raise _unknown(source, f"a JSON list of {' and '.join(kinds)}{with_keys}")
    raise _unknown(source, "an empty JSON list" if obj == [] else
                   f"a JSON {_JSON_TYPES.get(type(obj).__name__, 'value')}")


def parse_input(data: bytes, source: str, fmt: str | None = None) -> list[SessionIn]:
    """Parse `data` in format `fmt` (None or "auto": detected)."""
    name = detect(data, source) if fmt in (None, "auto") else fmt
    if name not in FORMATS:
        from vault_engine.errors import UsageError

        raise UsageError(f"unknown format {fmt!r}", fix="use one of: auto, " + ", ".join(FORMATS))
    if name == "transcript" and fmt in (None, "auto"):
        try:
            parsed = FORMATS[name].parse(data, source)
        except IngestError as exc:
            if "no turns found" not in exc.message:
                raise
            raise _unknown(source, "plain text with no `Speaker: text` lines") from None
    else:
        parsed = FORMATS[name].parse(data, source)
    return [fields.clean(s) for s in parsed]  # metadata is one-line data (formats/fields.py)
