"""Builders for the transcript files real tools write (used only by build_cases.py to author
cases.json; run.py reads the finished files from cases.json and never imports this).

Shapes follow docs/distill.md and docs/agents.md (the formats `alaya ingest` reads)."""
from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone

BASE = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)


def _ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def session_json(sid: str, turns: list[tuple[str, str]], *, day: int = 0, channel: str = "cli",
                 agent: str = "main", names: dict | None = None) -> str:
    """seed session JSON: {"id", "timestamp", "channel", "agent", "turns": [...]}"""
    t0 = BASE + timedelta(days=day)
    out = []
    for i, (role, text) in enumerate(turns):
        turn = {"id": f"m{i + 1}", "role": role, "content": text,
                "timestamp": _ms(t0 + timedelta(seconds=40 * i))}
        if names and role in names:
            turn["name"] = names[role]
        out.append(turn)
    return json.dumps({"id": sid, "timestamp": _ms(t0), "channel": channel, "agent": agent,
                       "turns": out, "metadata": {}}, ensure_ascii=False, indent=2) + "\n"


def messages_jsonl(session_key: str, turns: list[tuple[str, str]], *, day: int = 0) -> str:
    t0 = BASE + timedelta(days=day)
    lines = []
    for i, (role, text) in enumerate(turns):
        lines.append(json.dumps({"id": f"{session_key[:6]}-{i + 1}", "role": role, "content": text,
                                 "timestamp": _ms(t0 + timedelta(seconds=30 * i)),
                                 "sessionKey": session_key}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def messages_list(turns: list[tuple[str, str]]) -> str:
    return json.dumps([{"role": r, "content": c} for r, c in turns], ensure_ascii=False,
                      indent=1) + "\n"


def capture_lines(turns: list[tuple[str, str]], *, day: int = 0, prefix: str = "c") -> str:
    t0 = BASE + timedelta(days=day)
    return "\n".join(json.dumps({"id": f"{prefix}{i + 1}", "role": r, "content": c,
                                 "timestamp": _ms(t0 + timedelta(seconds=20 * i))},
                                ensure_ascii=False) for i, (r, c) in enumerate(turns)) + "\n"


def claude_code(session_id: str, events: list, *, day: int = 0, cwd: str = "/home/dev/app",
                branch: str = "main") -> str:
    """events: ("user", text) | ("assistant", text) | ("tool", name, input_dict, result_text)"""
    t = BASE + timedelta(days=day)
    parent = None
    lines = []

    def rec(kind, message, extra=None):
        nonlocal parent, t
        t += timedelta(seconds=7)
        u = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session_id}/{len(lines)}"))
        r = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
             "sessionId": session_id, "version": "1.0.51", "gitBranch": branch, "type": kind,
             "message": message, "uuid": u, "timestamp": _iso(t)}
        if extra:
            r.update(extra)
        lines.append(json.dumps(r, ensure_ascii=False))
        parent = u

    n = 0
    for ev in events:
        n += 1
        if ev[0] == "user":
            rec("user", {"role": "user", "content": ev[1]})
        elif ev[0] == "assistant":
            rec("assistant", {"id": f"msg_01{session_id[:8]}{n:04d}", "type": "message",
                              "role": "assistant", "model": "claude-sonnet-4-20250514",
                              "content": [{"type": "text", "text": ev[1]}],
                              "stop_reason": None, "usage": {"input_tokens": 812,
                                                             "output_tokens": 96}},
                {"requestId": f"req_011C{n:06d}"})
        elif ev[0] == "tool":
            _, name, inp, result = ev
            tid = f"toolu_01{session_id[:6]}{n:06d}"
            rec("assistant", {"id": f"msg_01{session_id[:8]}{n:04d}", "type": "message",
                              "role": "assistant", "model": "claude-sonnet-4-20250514",
                              "content": [{"type": "tool_use", "id": tid, "name": name,
                                           "input": inp}],
                              "stop_reason": "tool_use", "usage": {"input_tokens": 900,
                                                                   "output_tokens": 40}})
            rec("user", {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result",
                                                      "content": result, "is_error": False}]},
                {"toolUseResult": {"stdout": result, "stderr": "", "interrupted": False,
                                   "isImage": False}})
    return "\n".join(lines) + "\n"


def chatgpt(conv_id: str, title: str, msgs: list[tuple[str, str]], *, day: int = 0) -> str:
    t0 = (BASE + timedelta(days=day)).timestamp()
    mapping = {}
    root = "client-created-root"
    mapping[root] = {"id": root, "message": None, "parent": None, "children": []}
    prev = root
    sys_id = str(uuid.uuid5(uuid.NAMESPACE_URL, conv_id + "/sys"))
    mapping[sys_id] = {"id": sys_id, "parent": prev, "children": [], "message": {
        "id": sys_id, "author": {"role": "system", "name": None, "metadata": {}},
        "create_time": None, "update_time": None,
        "content": {"content_type": "text", "parts": [""]}, "status": "finished_successfully",
        "end_turn": True, "weight": 0.0, "metadata": {"is_visually_hidden_from_conversation": True},
        "recipient": "all", "channel": None}}
    mapping[prev]["children"].append(sys_id)
    prev = sys_id
    for i, (role, text) in enumerate(msgs):
        mid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{conv_id}/{i}"))
        mapping[mid] = {"id": mid, "parent": prev, "children": [], "message": {
            "id": mid, "author": {"role": role, "name": None, "metadata": {}},
            "create_time": t0 + 25 * i, "update_time": None,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully", "end_turn": role == "assistant",
            "weight": 1.0, "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
            "recipient": "all", "channel": None}}
        mapping[prev]["children"].append(mid)
        prev = mid
    conv = {"title": title, "create_time": t0, "update_time": t0 + 25 * len(msgs),
            "mapping": mapping, "moderation_results": [], "current_node": prev,
            "plugin_ids": None, "conversation_id": conv_id, "conversation_template_id": None,
            "gizmo_id": None, "is_archived": False, "safe_urls": [], "default_model_slug": "gpt-4o",
            "id": conv_id}
    return json.dumps([conv], ensure_ascii=False, indent=1) + "\n"


def claude_ai(conv_uuid: str, name: str, msgs: list, *, day: int = 0) -> str:
    """msgs: (sender, text) or (sender, text, [content blocks])"""
    t0 = BASE + timedelta(days=day)
    out = []
    parent = "00000000-0000-4000-8000-000000000000"
    for i, m in enumerate(msgs):
        sender, text = m[0], m[1]
        mid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{conv_uuid}/{i}"))
        ts = _iso(t0 + timedelta(seconds=50 * i))
        blocks = m[2] if len(m) > 2 else [{"type": "text", "text": text, "start_timestamp": ts,
                                           "stop_timestamp": ts, "citations": []}]
        out.append({"uuid": mid, "text": text, "content": blocks, "sender": sender,
                    "created_at": ts, "updated_at": ts, "attachments": [], "files": [],
                    "parent_message_uuid": parent})
        parent = mid
    conv = {"uuid": conv_uuid, "name": name, "created_at": _iso(t0),
            "updated_at": _iso(t0 + timedelta(minutes=5)),
            "account": {"uuid": "4b1f0c2e-7a55-4c1d-9d0e-2f3a4b5c6d7e"}, "chat_messages": out}
    return json.dumps([conv], ensure_ascii=False, indent=1) + "\n"


def openclaw(sid: str, events: list, *, day: int = 0, cwd: str = "/home/ops/work") -> str:
    """events: ("user", text) | ("assistant", text) | ("tool", name, args_dict, result_text)"""
    t = BASE + timedelta(days=day)
    lines = [json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": _iso(t),
                         "cwd": cwd})]
    parent = None
    n = 0

    def entry(message):
        nonlocal parent, t, n
        n += 1
        t += timedelta(seconds=9)
        eid = f"{n:08x}"
        lines.append(json.dumps({"type": "message", "id": eid, "parentId": parent,
                                 "timestamp": _iso(t), "message": message}, ensure_ascii=False))
        parent = eid

    for ev in events:
        if ev[0] == "user":
            entry({"role": "user", "content": [{"type": "text", "text": ev[1]}],
                   "timestamp": int(t.timestamp() * 1000)})
        elif ev[0] == "assistant":
            entry({"role": "assistant", "content": [{"type": "text", "text": ev[1]}],
                   "api": "openai-completions", "provider": "openai", "model": "gpt-4.1",
                   "stopReason": "stop", "timestamp": int(t.timestamp() * 1000)})
        elif ev[0] == "tool":
            _, name, args, result = ev
            cid = f"call_{sid[:6]}{n:04d}"
            entry({"role": "assistant", "content": [{"type": "toolCall", "id": cid,
                                                     "name": name, "arguments": args}],
                   "api": "openai-completions", "provider": "openai", "model": "gpt-4.1",
                   "stopReason": "toolUse", "timestamp": int(t.timestamp() * 1000)})
            entry({"role": "toolResult", "toolCallId": cid, "toolName": name,
                   "content": [{"type": "text", "text": result}], "isError": False,
                   "timestamp": int(t.timestamp() * 1000)})
    return "\n".join(lines) + "\n"
