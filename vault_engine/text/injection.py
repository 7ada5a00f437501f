"""Prompt injection: text that acts on the memory or the model, in English and Chinese.

Session content is data (docs/security.md §3). A turn this detector flags stays in the session
note — the record stays true, and the note lists it under `injection_turns` — but it is never
distilled (sessions/distill/gate.py), never indexed for recall, and so never served into
`context`, `recall --format prompt` or an MCP answer.

A text is judged as a model reads it (text/normal.py: NFKC, invisible characters removed,
look-alike letters folded to Latin, traditional characters to simplified, spaced letters and
split lines joined; what it smuggles in tag characters, what a right-to-left override shows
and what its leetspeak spells too) and by what it does, not by a list of phrasings:

- a fake role or turn marker (text/markers.py: `<|im_start|>`, `[INST]`, `SYSTEM:`,
  `### Instruction`, 【系统指令】 …);
- an act on the machine (text/acts.py, built from who is addressed, the act and its object
  in text/lexicon.py): discarding its guidance, a new role or task, addressing it and telling
  it what to do, planting a credential, sending a secret away, revealing its prompt — as an
  order, not negated, described, reported or mentioned in quotes;
- a salutation to the machine followed by an order (`_ADDRESSED`, `_ANYWHERE`), on a
  condition, as the reader, or by a heading over the section that orders;
- inside material the speaker pasted or a tool returned (text/quoted.py regions, code comment
  lines): someone else's orders — a standing order to the memory, a vocative to the AI and
  an order, a new role or task for the reader, approval manipulation (`order_in_pasted`).

A user who tells their own agent "from now on, always answer in Chinese" is not flagged: that
is a preference, and it names neither the machinery nor a credential. Nor is "ignore my last
message" (their own words), "don't ignore the previous steps", "the model ignores its system
prompt" (a description) or "payloads like \"ignore all previous instructions\"" (a mention).
`refuse_for_shared` is the gate an agent's writes into `shared` pass (docs/agents.md).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence

from vault_engine.errors import InjectionError
from vault_engine.text.acts import act_in
from vault_engine.text.lexicon import MODELS_ZH
from vault_engine.text.markers import marker_in
from vault_engine.text.normal import displayed, flat, hidden, reading, unleet

# The machine named as an addressee: an AI, an assistant, a model, a bot, an AI reviewer, the
# memory. A bare "reviewer" or "agent" is a person (a code reviewer, a support agent) unless
# qualified as a machine ("AI reviewer", "code review bot", "审查助手").
_WHO_EN = (r"(?:(?:(?:ai|a\.i\.|llm|gpt|automated|code|coding)[\s-]+){1,2}(?:reviewers?|"
           r"review(?:ing)?\s+(?:bots?|assistants?|tools?)|assistants?|agents?|bots?|models?)|"
           r"ai|a\.i\.|llms?|gpt|chatgpt|claude|copilot|language\s+models?|chat\s?bots?|"
           r"assistants?|memory(?:\s+(?:system|subsystem|module|store|layer))?)")
_MEMORY_ZH = r"记忆(?:系统|子系统|模块|库|层)"
_RULE_ZH = r"(?:规则|规范|规定|指令|准则|惯例|约定|铁律|原则|记忆|共识|政策)"
_WHO_ZH = (r"(?<![A-Za-z])(?:(?:(?:AI|LLM|GPT|智能|代码|审查|评审|审核|review|运维|编程|写作)\s*){0,3}"
           r"(?:助手|机器人|智能体)|(?:(?:AI|LLM|GPT|代码|审查|评审|review)\s*){1,3}(?:agent|bot)|"
           r"AI|人工智能|大模型|语言模型|LLM|GPT|Copilot|智能助理|AI\s*助理|虚拟助理|数字助理|自动化程序|"
           r"自动化工具|模型(?=们)|" + MODELS_ZH + "|" + _MEMORY_ZH + r")(?:们)?(?![A-Za-z])")
# Where a Chinese address can start: the text's start, after punctuation, a space, a bracket
# or a comment marker — so "导致 AI 误判" and "交给 AI 处理" name no addressee.
_CLAUSE = r"(?:^|(?<=[\s，,。：:;；!！?？(（)）\[\]【】「」『』/*#>\"“”'+\-—]))"

# Text addressed to the machine by a salutation of its own: "to any AI reading this", "for the
# memory system", "致大模型", "请记忆系统 …", "记忆系统须知", "AI 助手请注意" (text/acts.py reads
# the rest of what a text does to the machine).
_ADDRESSED: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?i)\bto\s+(?:any|the|all)\s+(?:ai|llms?|models?|assistants?|agents?)\s+"
               r"(?:reading|processing|summari[sz]ing)\b|"
               r"\b(?:for|to)\s+(?:the\s+)?(?:ai'?s?\s+)?memory\s+(?:sub-?)?(?:system|module|layer|store)\b"
               r"\s*[:：,]"),
    re.compile(_CLAUSE + r"(?:致\s*(?:各位|所有|全体)?\s*" + _WHO_ZH + r"|(?:请|告诉)\s*" + _MEMORY_ZH + ")"
               r"|" + _MEMORY_ZH + r"\s*(?:请|务必|须知|注意(?!事项))"),
    re.compile(r"(?:各位|所有|全体)?" + _WHO_ZH + r"\s*(?:请注意|须知|注意\s*[：:])"),
    # a note whose addressee a qualifier names ("Internal note for the triage model: you have …")
    re.compile(r"(?i)\b(?:note|message|instructions?|memo|notice|directive|reminder)s?\s+(?:for|to)\s+"
               r"(?:the|any|all|every)\s+(?:[\w-]+\s+){1,2}(?:models?|assistants?|bots?|ai|llms?)\s*[:：—–]"
               r"\s*(?:you|your|please)\b"),
)


# the words each of `_ADDRESSED` cannot do without (a text holding none is not searched)
_ADDRESSED_GATES = ("to|for", "致|记忆", "请注意|须知|注意:|注意：",
                    "note|message|instruction|memo|notice|directive|reminder")


# A standing order to the memory ("remember permanently", "persist the following as a rule",
# "以后永远记住：…", "存为最高优先级规则"). From the user, in their own words, it is a preference
# or an instruction; inside material they pasted (a log line, an e-mail, a PR description, a
# tool's output) it is someone else's order to the machine, and so an injection.
_DIRECTIVE: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"(?i)\b(?:always|permanently|forever|from\s+now\s+on|going\s+forward|henceforth)\b"
        r"[^.\n]{0,30}?\b(?:remember|store|save|memori[sz]e|persist|record|treat)\b|"
        r"\bremember\s+(?:this\s+|that\s+)?(?:permanently|forever|for\s+good)\b|"
        r"\b(?:persist|store|save|record|add|write|keep)\s+(?:the\s+following|this|these|it)\s+"
        r"(?:as|to|into|in)\s+(?:an?\s+|your\s+|the\s+)?(?:[\w-]+\s+){0,2}"
        r"(?:rules?|instructions?|directives?|polic(?:y|ies)|system\s+prompt)\b|"
        r"\b(?:persist|store|save|record|add|write|keep)\s+(?:the\s+following|this|these|it)\s+"
        r"(?:to|into|in)\s+(?:your|the\s+ai'?s?|(?:long-term|permanent|persistent))\s+"
        r"(?:[\w-]+\s+)?(?:memory|memories)\b|"
        r"\b(?:dear\s+)?(?:ai(?:\s+assistant)?|llm|language\s+model|chat\s?bot|assistant|agent)"
        r"\s*[:,]\s*(?:please\s+)?(?:remember|store|save|memori[sz]e|record|persist|ignore|"
        r"forget|disregard)\b"),
    re.compile(
        r"(?:永远|永久|以后|今后|往后|从现在(?:开始|起)|从今以后)[^。\n]{0,6}?(?:都要|都得)?"
        r"(?:记住|记下|牢记|记牢|保存|存为|记为|写入记忆)"
        r"|(?:存为|记为|作为|写成|设为)(?:一条)?(?:最高优先级|高优先级|永久|长期|全局)?的?"
        r"(?:规则|指令|记忆)"),
    # planting a standing rule: "把 … 记成团队长期规范", "存为永久规则", "写进长期记忆",
    # "record it as a permanent team rule", "save this to your memory"
    re.compile(
        r"(?:记成|记为|记作|记入|记进|记到|存为|存成|存入|存进|保存为|保存成)[^。\n，,；;：:]{0,12}?"
        r"(?:" + _RULE_ZH + r"|(?:以后|今后|往后|永远|永久)[^。\n，,；;]{0,8}?(?:一律|都要?|必须|默认))"
        r"|(?:写进|写入|写成|加入|加进|设为|设成|当成|当作|作为|列为|定为)[^。\n，,；;：:]{0,8}?"
        r"(?:长期|永久|永远|全局|最高优先级|高优先级)[^。\n，,；;：:]{0,4}?" + _RULE_ZH),
    re.compile(
        r"(?i)\b(?:remember|record|save|store|persist|memori[sz]e|note\s+down)\b[^.\n]{0,60}?"
        r"\b(?:as|to|into|in)\s+(?:an?\s+|your\s+|the\s+|our\s+)?(?:(?:permanent|standing|"
        r"long-term|persistent|team|global|top-priority|core|default|house|official)[\s-]+"
        r"(?:[\w-]+\s+)?(?:rules?|norms?|conventions?|polic(?:y|ies)|standards?|guidelines?|"
        r"instructions?|practices?|memory|memories)|rules?|standing\s+orders?|system\s+prompt|"
        r"(?<=your\s)(?:memory|memories|instructions|rules))\b"),
    # writing into the machine's memory: "make a permanent note in your memory", "commit this to
    # your memory", "永久写进你的记忆"
    re.compile(
        r"(?i)\bmake\s+(?:a\s+)?(?:permanent\s+|lasting\s+|standing\s+|mental\s+)?note\s+(?:in|to|"
        r"of)\s+(?:your|the\s+ai'?s?)\s+(?:long-term\s+|permanent\s+)?memory\b|\b(?:commit|add|write|"
        r"put|burn|etch|save|store)\s+(?:this|these|that|it|the\s+following)\s+(?:permanently\s+)?"
        r"(?:to|into|in)\s+(?:your|the\s+ai'?s?)\s+(?:long-term\s+|permanent\s+|persistent\s+)?"
        r"(?:memory|memories)\b|(?:永久|永远|长期)?(?:写进|写入|记入|存进|存入|加入|记到|存到|放进)(?:你的)?"
        r"(?:长期|永久)?(?:记忆|记忆库|记忆系统|memory)"),
)

# Text addressed to the machine and followed by an order to it. `_ANYWHERE`: a salutation no
# one uses for the agent they are talking to — "(给 AI 审查助手)", "致 AI：", "To the AI
# reviewer:", "AI assistant reading this" — so it counts in the speaker's own words too.
# `_IN_PASTED`: a vocative — "AI 助手，请…", "Dear assistant, please…" — which in the
# speaker's own words is how they talk to their agent, but inside pasted material is someone
# else talking to it. Each is (frame, how far after it the order may start).
_ORDER = re.compile(
    r"(?i)请(?!您|问|教)|务必|必须|一定要|直接|立即|立刻|马上|记住|记下|记成|记为|回复|批准|合并|"
    r"跳过|不要|不许|别(?![的人处])|一律|无需|不用|忽略|无视|把|你(?:要|应该?|必须|需要|只需)|"
    r"\b(?:please|kindly|must|you\s+(?:must|should|need\s+to|have\s+to|are\s+to|will)|approve|"
    r"reply|respond|answer|say|mark|merge|skip|ignore|disregard|forget|remember|store|save|"
    r"record|treat|output|print|do\s+not|don'?t|never|always|just|tell|state|claim|mention|write|send|"
    r"recommend|call|describe|include|add|delete|remove|run|execute|close|disable|enable|grant|upload|"
    r"forward|post|push|deploy|install|wipe|reset|transfer|refund|share|publish|drop|visit)\b")
_VOCATIVE_ORDER = re.compile(
    r"(?i)请(?!您|问|教)|务必|一定要|你(?:要|应该?|必须|需要|只需)|无视|忽略|不要理会|别管|直接(?:回复|回答|"
    r"说|告诉|输出|执行)|\b(?:please|kindly|ignore|disregard|you\s+(?:must|should|need\s+to|have\s+to|"
    r"are\s+to|will))\b")
_EN_START = r"(?:^|(?<=[\s(\[/*#>\"'-]))"
_ANYWHERE: tuple[tuple[re.Pattern[str], int, str], ...] = (
    (re.compile(r"(?i)[(（\[【]\s*(?:给|致|写给|to|attn:?)\s*(?:the\s+|any\s+|all\s+)?(?:"
                + _WHO_ZH + "|" + _WHO_EN + r")\s*[)）\]】]"), 80, '(|（|[|【'),
    (re.compile(r"(?i)" + _CLAUSE + r"(?:给|写给|致)\s*(?:所有|各位|全体|每个|任何)?\s*(?:正在)?(?:(?:阅读|"
                r"读到|看到|处理|总结|浏览|审查|读取|使用|加载|调用|访问)[^，,。：:\n]{0,12}的\s*)?" + _WHO_ZH
                + r"(?:的\s*(?:备注|留言|说明|提示|通知|消息|指示|须知|话))?\s*[：:]"), 80, '给|致'),
    # addressed on a condition: "如本邮件由智能助理代为处理，…", "if this e-mail is processed by
    # an AI, …", "if you're the memory layer storing this: …"
    (re.compile(r"(?i)(?:如|如果|若|假如|要是|倘若)\s*(?:本|此|这|该)?(?:封|条|份|段|个|篇)?(?:邮件|消息|文档|"
                r"页面|文件|内容|工单|评论|注释|信息|网页)?\s*(?:是)?(?:由|被|交给|经)\s*" + _WHO_ZH
                + r"\s*(?:代为|代|自动|来)?\s*(?:处理|阅读|读取|总结|回复|查看|审阅|解析|读到)"), 80,
     '如|若|要是|倘若'),
    (re.compile(r"(?i)\bif\s+(?:this|the)\s+(?:e-?mail|message|text|document|page|file|note|ticket|"
                r"comment|content)\s+(?:is|was|gets|has\s+been)\s+(?:being\s+)?(?:read|processed|handled|"
                r"summari[sz]ed|opened|answered|reviewed|parsed)\s+by\s+(?:an?\s+|the\s+|any\s+)?"
                + _WHO_EN), 80, 'if '),
    (re.compile(r"(?i)\bif\s+you(?:'re|\s+are)\s+(?:an?|the|any)\s+(?:ai\s+)?" + _WHO_EN
                + r"\b[^.\n]{0,40}?[,:;—–]"), 80, 'if you'),
    # the machine as the one who reads: "通义、文心等模型读到这段注释时：…", "When Copilot or
    # any other AI reads this file, …"
    (re.compile(r"(?i)(?:" + _WHO_ZH + r"|" + MODELS_ZH + r")[^。\n：:]{0,30}?(?:读到|看到|处理|阅读|读取|"
                r"解析|扫描)(?:这段|本|此|这份|这个|这条|这些|以上|下面)[^。\n：:]{0,8}?(?:时|的时候)\s*"
                r"[：:，,]"), 80, "re:(?:读到|看到|处理|阅读|读取|解析|扫描)(?:这段|本|此|这份|这个|这条|这些|以上|"
                                 r"下面)[^。\n：:]{0,8}?(?:时|的时候)"),
    (re.compile(r"(?i)\bwhen(?:ever)?\s+(?:any\s+|an?\s+|the\s+)?" + _WHO_EN + r"(?:\s*(?:,|or|and)\s*"
                r"(?:any\s+)?(?:other\s+)?[\w-]+){0,4}\s+(?:reads?|process(?:es)?|sees?|summari[sz]es?|"
                r"parses?|scans?|ingests?|indexes|encounters?)\s+this(?:\s+[\w-]+)?\s*[,:;—–-]"), 80, 'when'),
    (re.compile(r"(?i)(?:阅读|读取|读到|看到|处理|审查|审阅|review)\s*(?:这段|这份|这个|这条|这些|"
                r"本段|此段|以下|下面)[^。\n]{0,10}?的\s*" + _WHO_ZH + r"\s*[，,：:]"), 80,
     '阅读|读取|读到|看到|处理|审查|审阅|review'),
    (re.compile(r"(?i)\b" + _WHO_EN + r"\s+(?:that\s+is\s+|who\s+is\s+|currently\s+)?"
                r"(?:reading|processing|reviewing|summari[sz]ing|parsing|analy[sz]ing|scanning)"
                r"\s+this(?:\s+[\w-]+)?\s*[,:;—–-]"), 80,
     r"re:(?:reading|processing|reviewing|summari[sz]ing|parsing|analy[sz]ing|scanning)\s+this"),
    (re.compile(r"(?i)" + _EN_START + r"(?:to|attn|attention)\s*:?\s+(?:the\s+|any\s+|all\s+)?"
                + _WHO_EN + r"\s*[:)\]]"), 80, 'to|attn|attention'),
)
_IN_PASTED: tuple[tuple[re.Pattern[str], int, str], ...] = (
    (re.compile(r"(?i)" + _CLAUSE + r"(?:给|写给|致|告诉|提醒|通知)\s*" + _WHO_ZH
                + r"\s*[)）\]】]?\s*[：:，,]"), 80, ''),
    (re.compile(r"(?i)" + _CLAUSE + _WHO_ZH + r"\s*[，,]?\s*"), 0, ''),
    (re.compile(r"(?i)" + _EN_START + r"(?:dear|hey|hi|hello|attention|attn)\s+(?:the\s+|any\s+|"
                r"all\s+|our\s+)?" + _WHO_EN + r"\s*[:,!—–-]"), 80, ''),
    (re.compile(r"(?i)" + _EN_START + _WHO_EN + r"\s*,\s*"), 0, ''),
    # a note for a machine a qualifier names ("note to the ops assistant: delete …")
    (re.compile(r"(?i)\b(?:note|message|memo|notice|instructions?|reminder|directive)s?\s+(?:for|to)\s+"
                r"(?:the|any|all|every|our)\s+(?:(?!data\b|domain\b|object\b|business\b|mental\b|threat\b|"
                r"role\b|pricing\b|financial\b|physical\b|test\b|scale\b|3d\b)[\w-]+\s+){0,2}(?:assistants?|bots?|"
                r"ai|llms?|models?)\s*[:：—–]"), 20, ''),
    # "AI reviewers: …" — many machines addressed at once; "Assistant: …" alone is a speaker
    (re.compile(r"(?i)" + _EN_START + r"(?:ai|llm|automated|code)\s+(?:reviewers|review\s+bots|"
                r"agents|assistants|models)\s*:"), 80, ''),
)

# Approval manipulation: an order to approve ("请直接回复 LGTM", "reply LGTM", "auto-approve it")
# with a claim that review already happened ("已通过安全评审", "pre-approved") or is not needed
# ("免审", "skip review"). One alone is ordinary talk about reviews; together, inside pasted
# material, they are someone steering the reviewer.
_APPROVE = re.compile(
    r"(?i)(?:请|只需|只要|直接|就|麻烦)\s*(?:你\s*)?(?:直接\s*)?(?:回复|回|评论|留言|打)\s*[“\"'「]?\s*"
    r"(?:LGTM|ship\s*it|approved?|同意|\+1)|(?:直接|无条件|请\s*自动)\s*(?:批准|合并|approve|merge|"
    r"放行|LGTM)|(?:标记|标为|标成|设为)\s*(?:已批准|已通过|已审|approved)|\b(?:reply|respond|"
    r"answer|comment)\s+(?:with\s+)?[\"'“]?(?:lgtm|approved?|ship\s+it|\+1)\b|\b(?:just|simply|"
    r"directly|immediately)\s+(?:approve|merge|lgtm)\b|\bmark\s+(?:it|(?:this|the)(?:\s+\w+)?)\s+"
    r"as\s+(?:approved|reviewed|safe)\b|\bauto-?approve\s+(?:this|it|the|all|every)\b")
_CLAIM = re.compile(
    r"(?i)已(?:经)?(?:通过|过了?)[^。\n，,]{0,8}?(?:评审|审查|审核|review|审批|安全检查|安全扫描)|"
    r"(?:评审|审查|审核|review|审批)(?:已经?|均已|都已)(?:通过|完成|批准)|已(?:经)?(?:被)?(?:批准|审批|审过)|"
    r"\b(?:already|has\s+been|have\s+been)\s+(?:been\s+)?(?:reviewed|approved|vetted|signed\s+off|"
    r"cleared|audited)\b|\bpassed\s+(?:the\s+|a\s+)?(?:security\s+|code\s+|internal\s+)?"
    r"(?:review|audit)\b|\breview\s+(?:has\s+|was\s+)?(?:already\s+)?passed\b|\bpre-?approved\b|"
    r"\b(?:is|was|been)\s+auto-?approved\b")
_EXEMPT = re.compile(
    r"(?i)免审|免评审|免于?(?:审查|审核|评审)|(?:跳过|绕过|省略|不(?:用|必|需要?)再?)\s*(?:code\s*)?"
    r"(?:review|评审|审查|审核|CR)(?![A-Za-z])|\bskip(?:s|ping)?\s+(?:the\s+)?(?:code\s+|security\s+)?"
    r"reviews?\b|\b(?:no|without)\s+(?:further\s+)?(?:code\s+)?review\b|\breview\s+(?:is\s+)?"
    r"(?:not\s+needed|not\s+required|unnecessary)\b|\bexempt\s+from\s+(?:code\s+)?review|"
    r"\bbypass(?:es|ing)?\s+(?:the\s+)?(?:code\s+)?review")
_STANDING = re.compile(
    r"(?i)一律|以后|今后|往后|从现在(?:开始|起)|永远|永久|长期|\b(?:from\s+now\s+on|going\s+forward|"
    r"henceforth|always|permanently|all\s+future)\b")

# A line of code comment outside a fence ("// NOTE(给 AI)：…", "+# to the AI reviewer: …",
# "<!-- … -->") is pasted code, not the speaker's prose.
_COMMENT_LINE = re.compile(r"^\s*[+-]?\s*(?://|/\*|#(?!#)|--\s|<!--)", re.M)


# Every phrasing above needs spaces or Chinese; the few that need neither are markers. A run of
# this many printable ASCII characters without a space (a base64 image, a minified bundle,
# padding) is read only when it holds a marker, so a huge turn costs one pass over it.
_ASCII_BLOB = re.compile(r"[!-~]{4096,}")
_BLOB_MARKERS = ("jailbreak", "<|im_", "[inst]", "[/inst]", "<system>", "</system>",
                 "<assistant>", "</assistant>")


def _readable(text: str) -> str:
    if len(text) < 4096:
        return text
    return _ASCII_BLOB.sub(
        lambda m: m.group(0) if any(k in m.group(0).lower() for k in _BLOB_MARKERS) else " ",
        text)


def injection_reason(text: str) -> str | None:
    """Why `text` reads as an instruction to the memory or the model ("prompt injection:
    override — 'ignore all previous instructions'"), or None. `text` is read as a model reads it
    (text/normal.py): invisible characters gone, look-alikes folded, lines joined; and what it
    hides in Unicode tag characters is read too."""
    if not text:
        return None
    text = _readable(text)
    why = _judge(reading(text))
    if why:
        return why
    for how, view in (("hidden in tag characters", hidden), ("reversed on screen", displayed),
                      ("in leetspeak", unleet)):
        other = view(text)
        why = _judge(reading(other)) if other else None
        if why:
            return why.replace("prompt injection: ", f"prompt injection {how}: ", 1)
    return None


def _judge(seen: str) -> str | None:
    mark = marker_in(seen)
    if mark:
        return f"prompt injection: a fake role or turn marker — {mark!r}"
    act = act_in(flat(seen))
    if act:
        return f"prompt injection: {act[0]} — {act[1]!r}"
    low = seen.lower()
    for pattern, gate in zip(_ADDRESSED, _ADDRESSED_GATES, strict=True):
        m = pattern.search(seen) if _gate(gate).search(low) else None
        if m:
            return f"prompt injection: addressed to the machine — {_excerpt(m)!r}"
    said = _addressed(seen, _ANYWHERE) or _section_for_machines(seen)
    if said:
        return f"prompt injection: addressed to the machine — {said!r}"
    for kind, inner in _pasted(seen):
        what = _order_in_pasted(inner, _IN_PASTED)  # _ANYWHERE was read over all of it
        if what:
            return f"prompt injection: {what} inside pasted {kind}"
    return None


# A heading or a label line that addresses machines ("## For ChatGPT and other LLMs", "Note to AI
# assistants:", "## 给 AI 助手的说明"): what its section says is said to them, and an order in it
# is an order to the machine.
_MACHINE_HEADING = re.compile(
    r"(?im)^[ \t]*(?:#{1,6}[ \t]*|\*\*|__)?(?:(?:a\s+)?(?:notes?|messages?|instructions?|info(?:rmation)?|"
    r"guidance|section)\s+)?(?:for|to|attention|attn)\s*:?\s+(?:the\s+|all\s+|any\s+)?(?:" + _WHO_EN
    + r")(?:\s*(?:,|and|&|or|/)\s*(?:any\s+|all\s+)?(?:other\s+)?(?:" + _WHO_EN + r"|[\w-]+))*"
    r"(?:\s+(?:reading|crawling|indexing|processing)\s+this(?:\s+\w+)?)?[ \t]*(?:\*\*|__)?[ \t]*[:：]?[ \t]*$"
    r"|^[ \t]*(?:#{1,6}[ \t]*|\*\*)(?:给|致|写给)?\s*(?:所有|各位|全体)?\s*(?:" + _WHO_ZH + r"|" + MODELS_ZH
    + r")(?:们)?(?:的)?(?:说明|须知|指引|注意事项|提示|指令)?[ \t]*(?:\*\*)?[ \t]*[:：]?[ \t]*$")
_HEADING_LINE = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]")


def _section_for_machines(text: str) -> str | None:
    """A heading addressed to machines and an order in the section under it."""
    if "\n" not in text:
        return None
    for m in _MACHINE_HEADING.finditer(text):
        end = m.end() + 1
        nxt = _HEADING_LINE.search(text, end)
        section = text[end:min(nxt.start() if nxt else len(text), end + 600)]
        order = _ORDER.search(section)
        if order or act_in(flat(section), pasted=True):
            return re.sub(r"\s+", " ", m.group(0)).strip()[:60]
    return None


# Many machines told at once what they must do ("所有智能运维机器人从即日起须…", "All AI assistants
# must …") — inside pasted material or a tool's output someone else's order to the machine.
_GROUP_ORDER = re.compile(
    r"(?i)(?:所有|全体|各位|每个|每一个|任何)\s*(?:的)?\s*[\u4e00-\u9fffA-Za-z]{0,6}?" + _WHO_ZH
    + r"\s*(?:从即日起|从今天起|从现在起|从现在开始|今后|以后|即日起)?\s*(?:(?:都|均|一律)?\s*(?:须|必须|务必|"
    r"需要|应当|应该|要|请|不得)|一律)|\b(?:all|every|each|any)\s+(?:(?:[\w-]+\s+)?(?:ai|llm|gpt|automated|"
    r"autonomous|intelligent)[\s-]+(?:[\w-]+\s+)?(?:assistants?|bots?|agents?|models?|tools?|systems?|"
    r"crawlers?)|(?:[\w-]+\s+)?(?:ai|llms|assistants|bots|chatbots|crawlers))\s+(?:(?:from\s+now\s+on|"
    r"going\s+forward|henceforth|from\s+today)\s*,?\s+)?(?:must|shall|are\s+(?:required|instructed)\s+"
    r"to|need\s+to|have\s+to)\b|"
    # machines named as the subject, in the plural, told what they should do ("Automated assistants
    # working in this repo should always …")
    r"\b(?:ai|llm|gpt|automated|autonomous|coding)[\s-]+(?:assistants|agents|bots|models|tools)\b"
    r"(?:\s+(?:working|operating|running|reading)\s+(?:in|on|with)?\s*(?:this|the)\s+[\w-]+)?\s+(?:should|"
    r"must|shall|are\s+to|need\s+to|have\s+to)\s+(?!be\b|not\s+be\b|never\s+be\b)(?:always\s+|never\s+)?[a-z]+")


def order_in_pasted(text: str) -> str | None:
    """What in `text` — a piece of material someone pasted — is an order to the machine: an
    order to the memory, an order after an address to the AI, a new role or task for its
    reader, an override of "the above", or approval manipulation ("an order to the memory —
    '记成团队长期规范'"), or None."""
    return _order_in_pasted(reading(text), (*_ANYWHERE, *_IN_PASTED))


def _order_in_pasted(text: str, frames: tuple[tuple[re.Pattern[str], int, str], ...]) -> str | None:
    act = act_in(flat(text), pasted=True)
    if act:
        return f"{'an override' if act[0] == 'override' else act[0]} — {act[1]!r}"
    for pattern in _DIRECTIVE:
        m = pattern.search(text)
        if m:
            return f"an order to the memory — {_excerpt(m)!r}"
    said = _addressed(text, frames)
    if said:
        return f"an order addressed to the machine — {said!r}"
    m = _GROUP_ORDER.search(text)
    if m:
        return f"an order addressed to the machine — {_excerpt(m)!r}"
    if not _APPROVE.search(text) and not _EXEMPT.search(text):
        return None
    for line in text.split("\n"):
        m = _APPROVE.search(line)
        claim, exempt = _CLAIM.search(line), _EXEMPT.search(line)
        if m and (claim or exempt) or claim and exempt and _STANDING.search(line):
            return f"approval manipulation — {_excerpt(m or claim)!r}"  # type: ignore[arg-type]
    return None


def _addressed(text: str, frames: tuple[tuple[re.Pattern[str], int, str], ...]) -> str | None:
    """The address and the order after it, when a frame is followed on its line by an order
    within its reach (reach 0: the order must follow at once, "AI 助手，请…"). A frame whose
    gate words ("a|b") are all absent from the text is not searched."""
    low = text.lower()
    for frame, reach, gate in frames:
        if gate and not _gate(gate).search(low):
            continue
        for m in frame.finditer(text):
            stop = m.end() + reach + 16  # the longest order, "you need to", fits
            eol = text.find("\n", m.end(), stop)
            order = (_ORDER if reach else _VOCATIVE_ORDER).search(
                text, m.end(), stop if eol < 0 else eol)
            if order and order.start() - m.end() <= reach:
                return re.sub(r"\s+", " ", text[m.start():order.end()]).strip()[:60]
    return None


@functools.cache
def _gate(words: str) -> re.Pattern[str]:
    """A frame's gate: its words ("a|b"), or a pattern of its own ("re:…") where the words alone
    pass too many texts."""
    if words.startswith("re:"):
        return re.compile(words[3:])
    return re.compile("|".join(map(re.escape, words.split("|"))))


def _pasted(text: str) -> list[tuple[str, str]]:
    """The pieces of `text` the speaker pasted: its non-prose regions (text/quoted.py) and,
    in its prose, lines of code comment."""
    from vault_engine.text.quoted import regions

    out = []
    for region in regions(text):
        inner = text[region.start:region.end]
        if region.kind != "prose":
            out.append((region.quote_kind or region.kind, inner))
            continue
        for m in _COMMENT_LINE.finditer(inner):
            eol = inner.find("\n", m.start())
            out.append(("code comment", inner[m.start():len(inner) if eol < 0 else eol]))
    return out


def _excerpt(m: re.Match[str]) -> str:
    return re.sub(r"\s+", " ", m.group(0)).strip()[:60]


def is_injection(text: str) -> bool:
    return injection_reason(text) is not None


def refuse_for_shared(namespace: str, texts: Iterable[str | None], *, owner: bool,
                      what: str = "this text") -> None:
    """An agent's text bound for `shared` — read by every agent, served in their `context` —
    must not read as an injection: raise InjectionError naming the reason. The owner's text,
    and an agent's text kept in its own namespace (only it reads it), pass."""
    if owner or namespace != "shared":
        return
    for text in texts:
        reason = injection_reason(text or "")
        if reason:
            raise InjectionError(
                f"{what} reads as a {reason} — refused for `shared`, which every agent reads",
                fix="reword it as a statement of fact, or keep it in your own namespace "
                    "(--namespace AGENT-main), where only you read it")


def shared_screen(owner: bool) -> Callable[[str, Sequence[str | None]], None]:
    """`refuse_for_shared` for one caller, as the writers of store/cards.py take it."""
    def screen(namespace: str, texts: Sequence[str | None]) -> None:
        refuse_for_shared(namespace, texts, owner=owner, what="the text")
    return screen
