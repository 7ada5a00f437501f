"""Quoted material inside a turn: what the speaker pasted, not what the speaker says.

Logs, tickets, e-mails, text messages, vendor docs and tool output pasted into a turn are
recorded as facts, never as the user's preferences or instructions (DESIGN principle 8):
"请务必提前 15 分钟到前台登记" in a pasted e-mail is the sender's request to the user, not the
user's instruction to the agent.

`regions(text)` cuts a turn into regions, in order, covering all of it:

| kind | what | examples |
|---|---|---|
| `code` | a fenced block; an unfenced diff | ```` ```diff ```` … ```` ``` ````; `@@ -1,3 +1,4 @@` and its lines |
| `quote` | consecutive block-quote lines | `> 【工单 #CS-20513】…` |
| `pasted` | lines between two `---` (or `===`, `———`) lines | an HR e-mail |
| `log` | log lines outside a fence | `2026/04/23 13:52:07 [error] …`, `{"level":"warn",…}` |
| `tool` | a tool call and its result, folded into a turn by ingest (`output`) | `- tool Read: 'a.md' → …` |
| `prose` | everything else: the speaker's own words | |

Each non-prose region gets a `quote_kind` — email, ticket, sms, doc, log, diff, output, chat
— from the line that introduces it (`HR 发来的邮件你也看下：`, `Here's what I see:`) or from its
own first lines (`【工单 …】`, `Dear …`, `您好`), else the region's kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE_RE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
_QUOTE_RE = re.compile(r"^\s*>")
_DIFF_HEAD_RE = re.compile(r"^(?:diff --git |--- (?:a/|/dev/null)|\+\+\+ b/|@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@)")
_DIFF_LINE_RE = re.compile(r"^(?:[+\- \\]|@@ |diff --git |index [0-9a-f])")
# a tool call folded into an agent's turn (sessions/formats/base.py ToolCall.line): what came
# back — a fetched page, a file, a command's output — is material someone else wrote
_TOOL_RE = re.compile(r"^\s*- tool [^:\n`]{1,80}: ")
_RULE_RE = re.compile(r"^\s*(?:-{3,}|={3,}|—{2,}|_{3,})\s*$")
_LOG_RE = re.compile(
    r"^\s*(?:\d{4}[/-]\d{2}[/-]\d{2}[ T]\d{2}:\d{2}|\[\d{4}-\d{2}-\d{2}|\d{2}:\d{2}:\d{2}[.,]\d+\s"
    r"|(?:ERROR|WARN(?:ING)?|INFO|DEBUG|FATAL|TRACE)\b[:\s]|\{\s*\"(?:level|msg|ts|time|error)\""
    r"|\$ \S|panic: |Traceback \(most recent call last\)|\s+at [\w.$]+\(|goroutine \d+ \[)")
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("email", re.compile(r"(?i)邮件|e-?mail|\bmail\b|来信")),
    ("ticket", re.compile(r"(?i)工单|\bticket\b|\bissue\s*#|\bjira\b")),
    ("sms", re.compile(r"(?i)短信|\bsms\b|text message")),
    ("doc", re.compile(r"(?i)文档|手册|规范|说明书|\bdocs?\b|documentation|\bwiki\b|\brunbook\b"
                       r"|best practice")),
    ("log", re.compile(r"(?i)日志|\blogs?\b|报错如下|堆栈|stack ?trace|traceback")),
    ("diff", re.compile(r"(?i)\bdiff\b|补丁|\bpatch\b|\bmr\b.*改动")),
    ("output", re.compile(r"(?i)输出|\boutput\b|结果如下|what i see|返回|\bresponse\b")),
    ("chat", re.compile(r"(?i)群里|消息|聊天记录|\bmessage\b|\bslack\b")),
)
_OPENING_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ticket", re.compile(r"【\s*工单|工单\s*#|ticket\s*#", re.I)),
    ("sms", re.compile(r"^【[^】]{1,12}】")),
    ("email", re.compile(r"(?i)^(?:dear\b|hi\b.*,$|hello\b.*,$|各位.{0,6}好|.{0,8}您好|尊敬的)")),
    ("doc", re.compile(r"(?i)^(?:best practice|note:|warning:|注意事项)")),
)


@dataclass(frozen=True)
class Region:
    kind: str  # prose | code | quote | pasted | log | tool
    start: int
    end: int
    quote_kind: str | None = None


def _kind_named_in(line: str) -> str | None:
    for kind, pattern in KINDS:
        if pattern.search(line):
            return kind
    return None


def _kind_of_opening(lines: list[str]) -> str | None:
    for line in lines[:2]:
        body = re.sub(r"^\s*(?:>\s?)+", "", line).strip()
        for kind, pattern in _OPENING_KINDS:
            if pattern.search(body):
                return kind
    return None


def regions(text: str) -> list[Region]:
    """The turn cut into prose, code, quote, pasted and log regions (offsets into `text`)."""
    lines = text.split("\n")
    starts = []
    pos = 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    kinds: list[str] = ["prose"] * len(lines)
    lang: dict[int, str] = {}
    i = 0
    while i < len(lines):
        fence = _FENCE_RE.match(lines[i])
        if fence:
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence.group(1)):
                j += 1
            for k in range(i, min(j + 1, len(lines))):
                kinds[k] = "code"
            lang[i] = fence.group(2).lower()
            i = j + 1
            continue
        if _DIFF_HEAD_RE.match(lines[i]):
            j = i + 1
            while j < len(lines) and lines[j] and _DIFF_LINE_RE.match(lines[j]):
                j += 1
            for k in range(i, j):
                kinds[k] = "code"
            lang[i] = "diff"
            i = j
            continue
        if _TOOL_RE.match(lines[i]):
            kinds[i] = "tool"
        elif _QUOTE_RE.match(lines[i]):
            kinds[i] = "quote"
        elif _RULE_RE.match(lines[i]):
            j = i + 1
            while j < len(lines) and not _RULE_RE.match(lines[j]) and not _FENCE_RE.match(lines[j]):
                j += 1
            if j < len(lines) and _RULE_RE.match(lines[j]) and j > i + 1:
                for k in range(i, j + 1):
                    kinds[k] = "pasted"
                i = j + 1
                continue
        elif _LOG_RE.match(lines[i]):
            kinds[i] = "log"
        i += 1
    out: list[Region] = []
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and kinds[j + 1] == kinds[i] and not (
                kinds[i] == "code" and j + 1 in lang):
            j += 1
        end = starts[j] + len(lines[j])
        qk = None
        if kinds[i] != "prose":
            lead = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            lead_kind = _kind_named_in(lead) if lead.rstrip().endswith(("：", ":", "。", ".")) \
                or kinds[i] == "code" else None
            qk = _kind_of_opening(lines[i:j + 1]) or lead_kind
            if kinds[i] == "code":
                qk = qk or {"diff": "diff", "log": "log"}.get(lang.get(i, ""), "output")
            qk = "output" if kinds[i] == "tool" else qk or ("log" if kinds[i] == "log" else kinds[i])
        out.append(Region(kinds[i], starts[i], end, qk))
        i = j + 1
    return out


def is_quoted(text: str, pos: int) -> bool:
    """Is offset `pos` of `text` inside pasted material or code?"""
    return any(r.kind != "prose" and r.start <= pos <= r.end for r in regions(text))
