"""Fake role and turn markers: text that dresses up as the machine's own conversation.

A chat-template token (`<|im_start|>system`, `[INST]`, `<<SYS>>`, `<system>`), a line that
opens as a system or developer message (`SYSTEM:`, `[system]`, `### Instruction`, 【系统指令】)
or a `System:` / 系统消息： line that then orders the machine, inside a turn, is someone trying
to forge the turns around it: an injection signal by itself (text/injection.py).
"""

from __future__ import annotations

import re

_CHAT_TOKEN = re.compile(
    r"<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|eom_id|start_header_id|"
    r"end_header_id|begin_of_text|end_of_text|channel|message|end|start|return|call|constrain|"
    r"tool_call|tool_response|python_tag|fim_\w+)\|>|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>|"
    r"</?(?:system|assistant|instructions?|sys|developer)(?:\s[^<>\n]{0,80})?>", re.I)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_ROLE_LINE = re.compile(
    r"^[ \t]*(?:>[ \t]*)*(?:\*\*|__)?[ \t]*(?:\[[ \t]*)?(?:SYSTEM|SYS|SYSTEM[ \t]+(?:MESSAGE|PROMPT|NOTE|"
    r"NOTICE|OVERRIDE|UPDATE|INSTRUCTIONS?|ALERT|ADMINISTRATOR)|ADMIN(?:ISTRATOR)?|DEVELOPER|OPERATOR|"
    r"ROOT|OPENAI|ANTHROPIC)(?:[ \t]*\])?(?:[ \t]+(?:for|to)[ \t]+[^:：\n]{1,40})?(?:\*\*|__)?[ \t]*[:：]",
    re.M)
_ROLE_TAG = re.compile(r"(?im)^[ \t]*(?:>[ \t]*)*\[(?:system|sys|system[ \t]+message|admin|developer|"
                       r"系统|系统指令|系统消息)\](?:\(#[\w-]+\))?")
_SOFT_ROLE_LINE = re.compile(
    r"(?im)^[ \t]*(?:>[ \t]*)*(?:\*\*)?(?:system|developer|admin)(?:[ \t]+(?:message|prompt|note|"
    r"notice|instruction|override|update))?(?:\*\*)?[ \t]*[:：](?P<rest>.*)$")
_ORDERS_MACHINE = re.compile(
    r"(?i)\b(?:you|your|you're|please|must|always|never|do\s+not|don'?t|from\s+now\s+on|reply|respond|"
    r"answer|ignore|disregard|forget|assistant|model)\b|"
    # a claim of authority, or a sentence that opens with an order ("Disable approval checks …")
    r"\b(?:has|have)\s+been\s+(?:verified|authenticated|authori[sz]ed|approved|granted|elevated|"
    r"promoted|cleared)\b|(?:^|[.!;]\s+)\s*(?:disable|enable|deploy|grant|approve|delete|send|run|execute|"
    r"give|allow|skip|bypass|turn\s+off|override|reveal|print|output|treat|stop|unlock|transfer|wire|"
    r"export|upload|merge|push)\b")
_TEMPLATE_HEAD = re.compile(r"(?im)^[ \t]*#{1,6}[ \t]*(?:Instruction|(?:System|Human|Assistant|User)"
                            r"(?:[ \t]+Prompt)?[ \t]*:|System[ \t]+Prompt)[ \t]*:?[ \t]*$|"
                            # the same template in Chinese: "### 指令：", "### 系统提示"
                            r"^[ \t]*#{1,6}[ \t]*(?:指令|系统|系统提示词?|系统指令)[ \t]*[:：]?[ \t]*$")
_ZH_MARKER = re.compile(r"(?m)^[ \t]*(?:>[ \t]*)*(?:【(?:系统|系统指令|系统消息|系统提示词|管理员指令|开发者指令|"
                        r"管理员|开发者|system)】|(?:系统指令|系统提示词|管理员指令|开发者指令)[ \t]*[:：])")
_ZH_SOFT = re.compile(r"(?m)^[ \t]*(?:>[ \t]*)*(?:系统消息|系统通知|系统提示|系统)[ \t]*[:：](?P<rest>.*)$")
_ZH_ORDERS = re.compile(r"你(?:要|必须|需要|应该|应|得|只能|不得|不能|将|现在是)|从(?:现在|这条|此刻)(?:开始|起)|"
                        r"以后|忽略|无视|长期(?:执行|有效|遵守)|请(?:始终|一直|永久|长期)|永久|今后|从今以后|一律")
# a dialogue forged inside one message: lines that open with the speakers' roles ("用户：…" /
# "助手：…" / "系统：…", "User: …" / "Assistant: …"), the machine's among them, where the
# machine's lines agree to or set up something standing
_DIALOGUE_LINE = re.compile(r"(?im)^[ \t]*(?:>[ \t]*)*(?P<who>用户|助手|系统|AI|User|Human|Assistant|System|"
                            r"Bot)[ \t]*[:：](?P<rest>.*)$")
_MACHINE_ROLES = {"助手", "系统", "ai", "assistant", "system", "bot"}
_STANDING = re.compile(r"(?i)以后|今后|长期|永久|一直|始终|已生效|生效了|从现在|每次|所有对话|\b(?:from\s+now\s+on|"
                       r"going\s+forward|always|every\s+(?:time|conversation|message)|permanently|in\s+effect|"
                       r"henceforth)\b")
# a chat-template token talked about in a sentence about templates ("the chat template puts
# <|im_start|>system before the user turn twice"), not used: mid-line, the only token, and what
# follows it on its line orders nothing
_TALK_ORDERS = re.compile(r"(?i)\b(?:you|your|you're|please|must|ignore|disregard|forget|from\s+now\s+on)\b|"
                          r"你|请|忽略|无视")
_TEMPLATE_TALK = re.compile(r"(?i)\b(?:template|tokeni[sz]er|tokens?|jinja|chat\s+format|special\s+tokens?|"
                            r"bos|eos|prompt\s+format|fine-?tun\w*)\b|模板|分词器|特殊\s*token")


# every marker line but a chat token holds one of these
_MARKER_WORDS = ("sys", "admin", "develop", "operator", "root", "openai", "anthropic", "instruction",
                 "human", "assistant", "user", "系统", "管理员", "开发者", "指令", "用户", "助手", "bot:",
                 "bot：", "ai:", "ai：")


def marker_in(text: str) -> str | None:
    """A fake role or turn marker in `text` (with its lines, as `normal.reading` gives it):
    a chat-template token (<|im_start|>, [INST], <<SYS>>, <system>), a `SYSTEM:` / `[system]`
    / `### Instruction` / 【系统指令】 line, or a `System:` / 系统消息： line that orders the
    machine, or claims authority; the Chinese instruction template (`### 指令：`); a dialogue
    forged inside one message whose machine lines set up something standing. A token inside
    inline code in a sentence (`<|endoftext|>` is GPT-2's end token), or a lone one mid-line in a
    sentence about templates that orders nothing after it, is talked about, not used."""
    tokens = list(_CHAT_TOKEN.finditer(text))
    for m in tokens:
        if not any(c.start() <= m.start() < c.end() for c in _INLINE_CODE.finditer(
                text, max(0, m.start() - 200), m.end() + 200)) and not (
                len(tokens) == 1 and _talked_about(text, m)):
            return m.group(0)
    low = text.lower()
    if not any(w in low for w in _MARKER_WORDS):
        return None
    for pattern in (_ROLE_LINE, _ROLE_TAG, _TEMPLATE_HEAD, _ZH_MARKER):
        line = pattern.search(text)
        if line:
            return line.group(0).strip()
    for pattern, orders in ((_SOFT_ROLE_LINE, _ORDERS_MACHINE), (_ZH_SOFT, _ZH_ORDERS)):
        for m in pattern.finditer(text):
            if orders.search(m.group("rest")):
                return m.group(0).strip()[:60]
    return _forged_dialogue(text)


def _talked_about(text: str, m: re.Match[str]) -> bool:
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    line = text[start:len(text) if end < 0 else end]
    before, after = text[start:m.start()], text[m.end():len(text) if end < 0 else end]
    return bool(before.strip()) and bool(_TEMPLATE_TALK.search(line)) \
        and not _TALK_ORDERS.search(after)


def _forged_dialogue(text: str) -> str | None:
    lines = list(_DIALOGUE_LINE.finditer(text))
    if len(lines) < 2 or len({m.group("who").lower() for m in lines}) < 2:
        return None
    for m in lines:
        if m.group("who").lower() in _MACHINE_ROLES and _STANDING.search(m.group("rest")):
            return m.group(0).strip()[:60]
    return None
