"""OpenClaw session files: `~/.openclaw/agents/<agentId>/sessions/<sessionId>.jsonl`.

The first line is the header `{"type": "session", "version", "id", "timestamp", "cwd"}`; then
entries `{type, id, parentId, timestamp, …}`. `message` entries hold the agent's messages —
`user`, `assistant` (blocks: `text`, `thinking`, `toolCall {id, name, arguments}`) and
`toolResult {toolCallId, toolName, content, isError}`, which is folded into the line of the
call it answers; `bashExecution` (a `!command` the person ran) becomes one line too. A
`compaction` or `branch_summary` entry's summary is kept as a `system` turn; `custom`,
`model_change`, `thinking_level_change`, `label` and `session_info` entries are not turns.

Entries form a tree (`parentId`): branching rewinds to an earlier entry. The turns follow the
branch that ends at the last entry written. The session id is `openclaw-<header id>`.
`final=False` holds back the last turn (a transcript still being written).
"""

from __future__ import annotations

from typing import Any

from .base import (
    IngestError,
    SessionIn,
    ToolCall,
    TurnDraft,
    build_all,
    content_text,
    first_time,
    json_lines,
    prefixed_id,
    timestamp,
    tool_input,
    tool_output,
)

NAME = "openclaw"
ENTRY_TYPES = {"message", "custom", "custom_message", "model_change", "thinking_level_change",
               "compaction", "branch_summary", "label", "session_info"}


def looks_like(records: list[Any]) -> bool:
    dicts = [r for r in records if isinstance(r, dict)]
    if dicts and dicts[0].get("type") == "session" and "version" in dicts[0]:
        return True
    return any(r.get("type") == "message" and isinstance(r.get("message"), dict)
               and "parentId" in r for r in dicts)


def _branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries on the path from the root to the last one written."""
    if not any("parentId" in e for e in entries):
        return entries  # version 1: a line of entries
    by_id = {e.get("id"): e for e in entries if e.get("id")}
    path, seen = [], set()
    node: dict[str, Any] | None = entries[-1] if entries else None
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        path.append(node)
        parent = node.get("parentId")
        node = by_id.get(parent) if parent else None
    return path[::-1]


def parse(data: bytes, source: str, *, final: bool = True) -> SessionIn:
    records = json_lines(data, source, final=final)
    header: dict[str, Any] = {}
    entries: list[dict[str, Any]] = []
    for n, rec, _line in records:
        if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
            raise IngestError(f"{source}: line {n} is not an OpenClaw entry (no `type`)",
                              path=source, line=n,
                              fix="pass the session file itself (~/.openclaw/agents/…/<id>.jsonl)")
        if rec["type"] == "session":
            header = header or rec
        else:
            entries.append(rec)
    drafts: list[TurnDraft] = []
    calls: dict[str, ToolCall] = {}
    meta: dict[str, Any] = {"cwd": header["cwd"]} if header.get("cwd") else {}
    for e in _branch(entries):
        kind, when = e["type"], e.get("timestamp")
        if kind in ("compaction", "branch_summary") and e.get("summary"):
            d = TurnDraft("system", when, e.get("id"), kind.replace("_", " "))
            d.texts.append(str(e["summary"]))
            drafts.append(d)
            continue
        msg = e.get("message") if kind == "message" else None
        role = msg.get("role") if isinstance(msg, dict) else None
        if msg is None or role is None:
            continue
        if role == "toolResult":
            call = calls.pop(str(msg.get("toolCallId")), None)
            if call is not None:
                call.result, call.error = tool_output(msg.get("content")), bool(msg.get("isError"))
            continue
        if role == "bashExecution":  # a `!command` the person ran in the session
            d = TurnDraft("user", when, e.get("id"))
            d.calls.append(ToolCall("bash", tool_input(msg.get("command")),
                                    tool_output(msg.get("output")), bool(msg.get("exitCode"))))
            drafts.append(d)
            continue
        if role not in ("user", "assistant"):
            continue
        d = TurnDraft(role, when or msg.get("timestamp"), e.get("id"),
                      "openclaw" if role == "assistant" else None)
        blocks = msg.get("content")
        for b in blocks if isinstance(blocks, list) else [blocks]:
            if isinstance(b, str):
                d.texts.append(b)
            elif isinstance(b, dict) and b.get("type") == "text":
                d.texts.append(str(b.get("text") or ""))
            elif isinstance(b, dict) and b.get("type") == "image":
                d.texts.append("[image]")
            elif isinstance(b, dict) and b.get("type") == "toolCall":
                call = ToolCall(str(b.get("name") or "tool"), tool_input(b.get("arguments")))
                d.calls.append(call)
                calls[str(b.get("id"))] = call
        if msg.get("errorMessage"):
            d.texts.append(f"(error: {content_text(msg['errorMessage'])})")
        if role == "assistant" and msg.get("model"):
            meta.setdefault("model", msg["model"])
        drafts.append(d)
    if not final and drafts:
        drafts = drafts[:-1]
    turns = build_all(drafts)
    if not header and not turns:
        raise IngestError(f"{source}: no OpenClaw session header or messages",
                          fix="pass the session file itself (~/.openclaw/agents/…/<id>.jsonl)")
    return SessionIn(id=prefixed_id(NAME, header.get("id"), data), turns=turns,
                     started=timestamp(header.get("timestamp")) or first_time(turns),
                     channel=NAME, metadata=meta, raw=data, raw_ext=".jsonl", source=source)
