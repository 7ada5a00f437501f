"""Claude.ai's data export: `conversations.json`, a list of conversations (one alone is
accepted too), each `{uuid, name, created_at, chat_messages: [{uuid, sender, text, content,
created_at, attachments, files, parent_message_uuid?}]}`.

`sender` human → user, assistant → assistant. A message's text is its `text` blocks (or
`text`); `tool_use` / `tool_result` blocks are folded into one short line each; `thinking` is
left out; an attachment is named with its size, not pasted in. Where messages carry
`parent_message_uuid` (edited questions, retried answers), the turns follow the branch that
ends at the newest message. Each conversation becomes a session `claude-ai-<uuid>`; its raw
file is that conversation's object from the export.
"""

from __future__ import annotations

import json
from typing import Any

from .base import (
    IngestError,
    SessionIn,
    ToolCall,
    TurnIn,
    as_list,
    export_items,
    first_time,
    prefixed_id,
    timestamp,
    tool_input,
    tool_output,
    with_tools,
)

NAME = "claude-ai"
ROOT = "00000000-0000-4000-8000-000000000000"  # the parent of a conversation's first message


def is_conversation(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("chat_messages"), list)


def looks_like(obj: Any) -> bool:
    items = obj if isinstance(obj, list) else [obj]
    return bool(items) and all(is_conversation(c) for c in items)


def _branch(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_id = {m.get("uuid"): m for m in messages if m.get("uuid")}
    if not any(m.get("parent_message_uuid") for m in messages):
        return messages  # an older export: one line of messages
    newest = max(messages, key=lambda m: str(m.get("created_at") or ""))
    path, seen = [], set()
    node: dict[str, Any] | None = newest
    while node is not None and node.get("uuid") not in seen:
        seen.add(node.get("uuid"))
        path.append(node)
        parent = node.get("parent_message_uuid")
        node = by_id.get(parent) if parent and parent != ROOT else None
    return path[::-1]


def _message(msg: dict[str, Any], where: str) -> TurnIn | None:
    sender = str(msg.get("sender") or "")
    if sender not in ("human", "assistant"):
        raise IngestError(f"{where}: unknown sender {sender!r}",
                          fix="pass conversations.json from the Claude.ai export unchanged")
    texts: list[str] = []
    calls: list[ToolCall] = []
    blocks = as_list(msg.get("content"))
    for b in blocks:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            texts.append(str(b.get("text") or ""))
        elif b.get("type") == "tool_use":
            calls.append(ToolCall(str(b.get("name") or "tool"), tool_input(b.get("input"))))
        elif b.get("type") == "tool_result":
            output = tool_output(b.get("content"))
            if calls and calls[-1].result is None:
                calls[-1].result, calls[-1].error = output, bool(b.get("is_error"))
            else:
                calls.append(ToolCall(str(b.get("name") or "tool"), "", output))
    if not blocks and msg.get("text"):
        texts.append(str(msg["text"]))
    for a in (msg.get("attachments") or []) + (msg.get("files") or []):
        if isinstance(a, dict) and a.get("file_name"):
            size = f", {a['file_size']:,} bytes" if isinstance(a.get("file_size"), int) else ""
            texts.append(f"[attachment: {a['file_name']}{size}]")
    content = with_tools("\n\n".join(t for t in texts if t.strip()), calls)
    if not content.strip():
        return None
    return TurnIn(role="user" if sender == "human" else "assistant", content=content,
                  timestamp=timestamp(msg.get("created_at")),
                  name="claude" if sender == "assistant" else None,
                  turn_id=str(msg["uuid"]) if msg.get("uuid") else None)


def parse(data: bytes, source: str) -> list[SessionIn]:
    out = []
    for where, conv in export_items(data, source, is_conversation, "Claude.ai",
                                    "chat_messages"):
        msgs = [m for m in conv["chat_messages"] if isinstance(m, dict)]
        turns = tuple(t for t in (_message(m, f"{where}: message {j + 1}")
                                  for j, m in enumerate(_branch(msgs))) if t is not None)
        if not turns:
            continue
        raw = json.dumps(conv, ensure_ascii=False, indent=1).encode("utf-8")
        meta = {"topic": str(conv["name"])} if conv.get("name") else {}
        out.append(SessionIn(id=prefixed_id(NAME, conv.get("uuid"), raw), turns=turns,
                             started=timestamp(conv.get("created_at")) or first_time(turns),
                             channel=NAME, metadata=meta, raw=raw, raw_ext=".json",
                             source=source))
    return out
