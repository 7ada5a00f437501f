"""ChatGPT's data export: `conversations.json`, a list of conversations (one conversation
object alone is accepted too).

A conversation is a tree (`mapping`: node id → {message, parent, children}): regenerated
answers and edited questions are siblings. The turns are the path from the root to
`current_node` — the branch the person last saw — in order. Hidden and empty messages
(system prompts, custom instructions, reasoning) are not turns; a tool's output and the
assistant's call to it (`recipient` other than "all") are folded into one short line on the
next assistant turn. Each conversation becomes a session `chatgpt-<conversation id>`; its
raw file is that conversation's object from the export.
"""

from __future__ import annotations

import json
from typing import Any

from .base import (
    IngestError,
    SessionIn,
    ToolCall,
    TurnIn,
    as_dict,
    clip,
    export_items,
    first_time,
    prefixed_id,
    timestamp,
    tool_output,
    with_tools,
)

NAME = "chatgpt"
_SKIPPED_CONTENT = {"thoughts", "reasoning_recap", "user_editable_context", "model_editable_context",
                    "system_error"}


def is_conversation(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("mapping"), dict)


def looks_like(obj: Any) -> bool:
    items = obj if isinstance(obj, list) else [obj]
    return bool(items) and all(is_conversation(c) for c in items)


def _text(message: dict[str, Any]) -> str:
    content = as_dict(message.get("content"))
    kind = content.get("content_type")
    if kind in _SKIPPED_CONTENT:
        return ""
    if kind == "code" or (kind is None and "text" in content):
        return str(content.get("text") or "")
    parts = []
    for p in content.get("parts") or []:
        if isinstance(p, str):
            parts.append(p)
        elif isinstance(p, dict):
            if p.get("content_type") == "image_asset_pointer" or "asset_pointer" in p:
                parts.append("[image]")
            elif isinstance(p.get("text"), str):
                parts.append(p["text"])
    if not parts and isinstance(content.get("text"), str):
        parts.append(content["text"])
    return "\n".join(x for x in parts if x)


def _branch(conv: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The messages from the root to the current node, in order."""
    mapping = conv["mapping"]
    node_id = conv.get("current_node")
    if node_id not in mapping:  # no pointer: the newest leaf
        leaves = [k for k, v in mapping.items() if isinstance(v, dict) and not v.get("children")]
        node_id = max(leaves, key=lambda k: ((mapping[k].get("message") or {}).get("create_time")
                                             or 0), default=None)
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while node_id is not None and node_id in mapping:
        if node_id in seen:
            raise IngestError(f"{where}: the conversation's `mapping` has a cycle at {node_id}",
                              fix="export the conversation again")
        seen.add(node_id)
        node = mapping[node_id] if isinstance(mapping[node_id], dict) else {}
        if isinstance(node.get("message"), dict):
            path.append(node["message"])
        node_id = node.get("parent")
    return path[::-1]


def _conversation(conv: dict[str, Any], where: str, source: str) -> SessionIn:
    turns: list[TurnIn] = []
    tools: list[ToolCall] = []
    model = conv.get("default_model_slug")
    for msg in _branch(conv, where):
        author = as_dict(msg.get("author"))
        role = str(author.get("role") or "")
        meta = as_dict(msg.get("metadata"))
        if meta.get("is_visually_hidden_from_conversation") or role == "system":
            continue
        text = _text(msg)
        recipient = msg.get("recipient") or "all"
        if role == "tool":
            name = str(author.get("name") or "tool")
            if tools and tools[-1].result is None:
                tools[-1].result = tool_output(text)
            elif text.strip():
                tools.append(ToolCall(name, "", tool_output(text)))
            continue
        if role == "assistant" and recipient != "all":
            tools.append(ToolCall(str(recipient), clip(text, 120) if text else ""))
            continue
        if not text.strip() and not (role == "assistant" and tools):
            continue
        if role == "assistant":  # what the tools did came first, then the answer
            text, tools = (with_tools("", tools) + "\n\n" + text if tools else text), []
            model = meta.get("model_slug") or model
        turns.append(TurnIn(role="assistant" if role == "assistant" else "user", content=text,
                            timestamp=timestamp(msg.get("create_time")),
                            name="chatgpt" if role == "assistant" else None,
                            turn_id=str(msg["id"]) if msg.get("id") else None))
    if tools:
        turns.append(TurnIn(role="assistant", content=with_tools("", tools), name="chatgpt"))
    raw = json.dumps(conv, ensure_ascii=False, indent=1).encode("utf-8")
    meta_out: dict[str, Any] = {}
    if conv.get("title"):
        meta_out["topic"] = str(conv["title"])
    if model:
        meta_out["model"] = str(model)
    return SessionIn(id=prefixed_id(NAME, conv.get("conversation_id") or conv.get("id"), raw),
                     turns=tuple(turns), started=timestamp(conv.get("create_time"))
                     or first_time(turns), channel=NAME, metadata=meta_out, raw=raw,
                     raw_ext=".json", source=source)


def parse(data: bytes, source: str) -> list[SessionIn]:
    out = [_conversation(conv, where, source) for where, conv in
           export_items(data, source, is_conversation, "ChatGPT", "mapping")]
    return [s for s in out if s.turns]
