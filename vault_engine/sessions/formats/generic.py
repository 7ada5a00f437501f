"""alaya's own formats: the session JSON of seed 000, JSONL messages (seed 004), a JSON list
of chat messages, and a plain markdown or text transcript."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import re
from pathlib import Path
from typing import Any

from vault_engine.primitives import to_datetime
from vault_engine.store.ids import slug

from .base import (
    ROLES,
    IngestError,
    SessionIn,
    TurnIn,
    content_text,
    first_time,
    json_lines,
    loads,
    session_id,
    timestamp,
)


def _tool_calls(value: Any) -> tuple[str, ...]:
    out = []
    for call in value if isinstance(value, list) else []:
        if isinstance(call, dict):
            fn = call["function"] if isinstance(call.get("function"), dict) else call
            out.append(str(fn.get("name") or call.get("type") or "tool"))
    return tuple(out)


def turn(obj: Any, where: str) -> TurnIn:
    """One message object: {role | speaker, content | text, name?, timestamp?, id?}."""
    if not isinstance(obj, dict):
        raise IngestError(f"{where}: a turn must be an object with role and content",
                          fix='write turns as {"role": "user", "content": "…"}')
    role = str(obj.get("role") or obj.get("speaker") or "").strip()
    if not role:
        raise IngestError(f"{where}: the turn has no `role`", fix='add "role": "user" or "assistant"')
    content = content_text(obj.get("content", obj.get("text")))
    name = obj.get("name") or obj.get("speaker_name")
    if role.lower() not in ROLES and not name:  # {"speaker": "Caroline"} style
        name, role = role, "user"
    return TurnIn(role=role.lower(), content=content, timestamp=timestamp(obj.get("timestamp")),
                  name=str(name) if name else None,
                  turn_id=str(obj["id"]) if obj.get("id") is not None else None,
                  tool_calls=_tool_calls(obj.get("tool_calls")))


def is_message(obj: Any) -> bool:
    return isinstance(obj, dict) and "turns" not in obj and ("role" in obj or "content" in obj)


def parse_session_json(data: bytes, source: str) -> SessionIn:
    obj = loads(data, source)
    if not isinstance(obj, dict) or not isinstance(obj.get("turns"), list):
        raise IngestError(f"{source}: expected a session object with a `turns` list",
                          fix='see docs/distill.md for the format: {"id": …, "turns": [ … ]}')
    turns = tuple(turn(t, f"{source}: turns[{i}]") for i, t in enumerate(obj["turns"]))
    agent = obj.get("agent")
    if agent:  # the assistant speaks as the agent
        turns = tuple(dataclasses.replace(t, name=str(agent)) if t.role == "assistant"
                      and not t.name else t for t in turns)
    fallback = "session-" + hashlib.sha256(data).hexdigest()[:12]
    started = timestamp(obj.get("timestamp")) or next(
        (t.timestamp for t in turns if t.timestamp), None)
    meta: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
    return SessionIn(id=session_id(obj.get("id"), fallback), turns=turns, started=started,
                     channel=obj.get("channel"), agent=obj.get("agent"), metadata=dict(meta),
                     raw=data, raw_ext=".json", source=source)


def parse_message_list(data: bytes, source: str) -> SessionIn:
    """A JSON list of chat messages ([{"role", "content"}, …]): one session, named after
    the file."""
    obj = loads(data, source)
    if not isinstance(obj, list) or not all(is_message(m) for m in obj):
        raise IngestError(f"{source}: expected a JSON list of messages with role and content",
                          fix='[{"role": "user", "content": "…"}, …]')
    turns = tuple(turn(m, f"{source}: [{i}]") for i, m in enumerate(obj))
    return SessionIn(id=_stem_id(source, data), turns=turns, started=first_time(turns),
                     raw=data, raw_ext=".json", source=source)


def parse_jsonl(data: bytes, source: str) -> list[SessionIn]:
    groups: dict[str, list[tuple[int, dict[str, Any], str]]] = {}
    for n, obj, line in json_lines(data, source):
        if not isinstance(obj, dict):
            raise IngestError(f"{source}: line {n} is not a JSON object", path=source, line=n,
                              fix='one {"role", "content", "timestamp", "sessionKey"} per line')
        key = str(obj.get("sessionKey") or obj.get("session_id") or obj.get("session") or "default")
        groups.setdefault(key, []).append((n, obj, line))
    sessions = []
    for key, rows in groups.items():
        turns = tuple(turn(obj, f"{source}: line {n}") for n, obj, _ in rows)
        raw = "".join(line if line.endswith("\n") else line + "\n" for _, _, line in rows)
        sessions.append(SessionIn(id=session_id(key, key), turns=turns, started=first_time(turns),
                                  raw=raw.encode("utf-8"), raw_ext=".jsonl", source=source))
    return sessions


_SPEAKER_RE = re.compile(
    r"^\s*(?:[-*]\s+)?(?:\*\*(?P<b>[^*]{1,40})\*\*|(?P<p>[A-Za-z\u4e00-\u9fff][\w .'\u4e00-\u9fff-]{0,39}?))"
    r"\s*(?:\((?P<when>[^)]{4,40})\))?\s*[:：]\s?(?P<text>.*)$")
_HEADING_SPEAKER_RE = re.compile(r"^#{2,4}\s+(?P<name>[^\n]{1,40})$")


def parse_transcript(data: bytes, source: str) -> SessionIn:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestError(f"{source}: not UTF-8 text (byte {exc.start})",
                          fix="save the transcript as UTF-8") from None
    turns: list[TurnIn] = []
    current: list[str] = []
    speaker: str | None = None
    when: dt.datetime | None = None

    def flush() -> None:
        if speaker is not None and "\n".join(current).strip():
            role = speaker.lower() if speaker.lower() in ROLES else "user"
            name = None if speaker.lower() in ROLES else speaker
            turns.append(TurnIn(role=role_of(role), content="\n".join(current).strip(),
                                timestamp=when, name=name))

    for line in text.splitlines():
        hm = _HEADING_SPEAKER_RE.match(line)
        sm = _SPEAKER_RE.match(line) if not hm else None
        if hm or (sm and (sm.group("b") or sm.group("p"))):
            flush()
            if hm:
                speaker, when, current = hm.group("name").strip(), None, []
            else:
                assert sm is not None
                speaker = (sm.group("b") or sm.group("p")).strip()
                when = to_datetime(sm.group("when")) if sm.group("when") else None
                current = [sm.group("text")]
            continue
        current.append(line)
    flush()
    if not turns:
        raise IngestError(f"{source}: no turns found in the transcript",
                          fix="write one turn per `Speaker: text` line (or a `### Speaker` heading)")
    ext = Path(source).suffix if Path(source).suffix in (".md", ".txt") else ".txt"
    return SessionIn(id=_stem_id(source, data), turns=tuple(turns), started=next(
        (t.timestamp for t in turns if t.timestamp), None),
        raw=data, raw_ext=ext + ".raw" if ext == ".md" else ext, source=source)


def _stem_id(source: str, data: bytes) -> str:
    stem = Path(source).stem if source not in ("-", "<stdin>") else "transcript"
    return session_id(stem, stem) if stem.startswith("session") else \
        "session-" + slug(stem)[:40] + "-" + hashlib.sha256(data).hexdigest()[:8]


def role_of(role: str) -> str:
    return {"human": "user", "ai": "assistant", "bot": "assistant"}.get(role, role)
