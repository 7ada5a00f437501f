"""Claude Code transcripts: `~/.claude/projects/<project>/<sessionId>.jsonl`, one record per
line (the hooks get its path as `transcript_path`).

- `user` and `assistant` records carry an Anthropic message (`message.content`: a string or
  blocks); one assistant reply may span several records with the same `message.id` (one per
  block), which are joined into one turn;
- `tool_use` blocks and the `tool_result` blocks that answer them (in the next `user`
  records) are folded into one short line each under the assistant turn that made the call —
  results are not turns of their own; `thinking` blocks are left out;
- meta records (`isMeta`), sub-agent chatter (`isSidechain`) and the bookkeeping record types
  (`summary`, `file-history-snapshot`, `queue-operation`, `progress`, `system`) are not turns;
  a compaction summary (`isCompactSummary`) is kept as a `system` turn; a slash command as
  its command line;
- the session id is `claude-code-<sessionId>`; every record's timestamp is its turn's; the
  working directory, git branch, Claude Code version and model go into the note's metadata.

`final=False` (a transcript still being written, `alaya capture --follow`): the last turn is
held back until another begins — it may still grow, and notes are append-only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .base import (
    IngestError,
    SessionIn,
    ToolCall,
    TurnDraft,
    as_dict,
    as_list,
    build_all,
    content_text,
    first_time,
    json_lines,
    prefixed_id,
    tool_input,
    tool_output,
)

NAME = "claude-code"
RECORD_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot",
                "queue-operation", "progress"}
_COMMAND_RE = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_ARGS_RE = re.compile(r"<command-args>(.*?)</command-args>", re.S)


def looks_like(records: list[Any]) -> bool:
    """Claude Code records: a `type` it writes and a `sessionId` or an Anthropic message."""
    hits = [r for r in records if isinstance(r, dict) and r.get("type") in RECORD_TYPES]
    return bool(hits) and any("sessionId" in r or "uuid" in r or "leafUuid" in r for r in hits)


def _user_text(content: Any) -> str:
    text = content_text(content) if not isinstance(content, list) else "\n".join(
        b.get("text", "") if isinstance(b, dict) and b.get("type") == "text" else
        "[image]" if isinstance(b, dict) and b.get("type") == "image" else ""
        for b in content)
    command = _COMMAND_RE.search(text)
    if command:  # a slash command: keep the command line, not the markup around it
        args = _ARGS_RE.search(text)
        return (command.group(1).strip() + " " + (args.group(1).strip() if args else "")).strip()
    if "<local-command-stdout>" in text or "<local-command-stderr>" in text:
        return ""
    return text


def parse(data: bytes, source: str, *, final: bool = True) -> SessionIn:
    records = json_lines(data, source, final=final)
    turns: list[TurnDraft] = []
    pending: dict[str, ToolCall] = {}
    session_ids: list[str] = []
    meta: dict[str, Any] = {}
    skipped = 0
    for n, rec, _line in records:
        if not isinstance(rec, dict):
            raise IngestError(f"{source}: line {n} is not a JSON object", path=source, line=n,
                              fix="a Claude Code transcript has one JSON record per line")
        sid = rec.get("sessionId")
        if isinstance(sid, str) and sid not in session_ids:
            session_ids.append(sid)
        for key, field in (("cwd", "cwd"), ("gitBranch", "git_branch"), ("version", "claude_code")):
            if rec.get(key) and field not in meta:
                meta[field] = rec[key]
        kind = rec.get("type")
        if kind not in ("user", "assistant") or rec.get("isSidechain") or rec.get("isMeta"):
            skipped += kind in ("user", "assistant")
            continue
        msg = as_dict(rec.get("message"))
        content = msg.get("content")
        if kind == "assistant":
            mid = str(msg.get("id") or rec.get("uuid") or f"line-{n}")
            if msg.get("model") and "model" not in meta:
                meta["model"] = msg["model"]
            if not turns or turns[-1].role != "assistant" or turns[-1].turn_id != mid:
                turns.append(TurnDraft("assistant", rec.get("timestamp"), mid, "claude"))
            t = turns[-1]
            for block in content if isinstance(content, list) else [content]:
                if isinstance(block, str):
                    t.texts.append(block)
                elif isinstance(block, dict) and block.get("type") == "text":
                    t.texts.append(str(block.get("text", "")))
                elif isinstance(block, dict) and block.get("type") == "tool_use":
                    call = ToolCall(str(block.get("name") or "tool"), tool_input(block.get("input")))
                    t.calls.append(call)
                    pending[str(block.get("id"))] = call
            continue
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        for block in results:
            answered = pending.pop(str(block.get("tool_use_id")), None)
            if answered is not None:
                answered.result = tool_output(block.get("content"))
                answered.error = bool(block.get("is_error"))
        if results and len(results) == len(as_list(content)):
            continue  # tool traffic, folded above
        if rec.get("isCompactSummary"):
            t = TurnDraft("system", rec.get("timestamp"), rec.get("uuid"), "compact summary")
        else:
            t = TurnDraft("user", rec.get("timestamp"), rec.get("uuid"), None)
        t.texts.append(_user_text(content))
        turns.append(t)
    if not final and turns:
        turns = turns[:-1]
    built = build_all(turns)
    if not session_ids and not built:
        raise IngestError(f"{source}: no Claude Code records with a sessionId",
                          fix="pass the transcript file itself (~/.claude/projects/…/<id>.jsonl)")
    stem = Path(source).stem
    sid = stem if stem in session_ids else (session_ids[0] if session_ids else None)
    if len(session_ids) > 1:
        meta["session_ids"] = session_ids
    if skipped:
        meta["records_skipped"] = skipped
    return SessionIn(id=prefixed_id(NAME, sid, data), turns=built,
                     started=first_time(built), channel=NAME, metadata=meta, raw=data,
                     raw_ext=".jsonl", source=source)
