"""Cue lexicons: the words that say what kind of memory a sentence holds, in Chinese and
English. docs/distill.md lists them with what they miss.

Each lexicon is a list of regular-expression fragments; `hits(text)` says which lexicons match
and with which words. The distiller (`sessions/distill/classify.py`) weighs them with who said
the sentence, where it sits (pasted material, a list under a header, a question) and what
comes before and after it.

Lexicons (a few words of each; the full lists are below and in docs/distill.md):

- preference — how the user likes things: 喜欢 偏好 习惯 倾向 请… 不要… 别… 以后别…
  …就行 我只… / prefer, like, I'd rather, please, no … though, … is fine;
- instruction — a standing rule for the agent: 记住 务必 一定要 以后都 每次 一律 必须 都要
  规矩 / always, never, must, make sure, from now on, every time;
- decision — a choice made, often with its reason: 决定 定了 选定 采用 改用 就这么定 就按
  / decided, decision, we'll go with, going with, settled on;
- gotcha — a cause, a trap, a surprise: 根因是 原因是 问题出在 坑 注意 踩过 导致 不会生效
  默认只 / root cause, the problem was, turns out, caused by, watch out, by default;
- fix — what solved a problem, confirmed: 解决 修复 …就好了 恢复了 没再出现 …之后能…了 /
  fixed, resolved, did it, works now, no longer, back to;
- error — a failure reported: 报错 失败 异常 超时 崩溃 连不上 发不出去 / error, failed,
  exception, timed out, panic, refused, denied, 4xx/5xx;
- event — something that happens on a date: 入职 上线 发布 发版 出差 生日 搬家 请假 年假
  事故 升级 / trip, flight, deploy, release, upgrade, incident, meeting;
- oneoff — a task for now, not a rule: 帮我… 你把… 麻烦… 看下 翻成 合一下 / can you,
  could you, please check/book/send, help me;
- emphasis — makes the sentence before a standing rule: 这条务必记住 这个以后都要执行 /
  Always. Every time. Remember that.;
- change — a value replaced: 改成 改到 调到 换班 推迟 不是…了 作废 新地址 / moved,
  changed, now, instead, no longer, push … from … to;
- status, self_recovery — a state or a recovery by itself, which are evidence, never a fix:
  全部 Running 都正常 自己恢复 / running, healthy, recovered on its own;
- suggestion, restatement — how an assistant proposes or repeats: 建议 要不要 如果 / 记下了
  已更新 / I'd suggest, you could, option / Noted, Got it.
"""

from __future__ import annotations

import re
from functools import cache

LEXICONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "preference": (
        (r"喜欢", r"偏好", r"习惯", r"倾向", r"更想", r"讨厌", r"受不了", r"不喜欢", r"宁可", r"尽量",
         r"请(?:用|按|以|给|别|不要|都|先|只)", r"(?<![不只])要求?[^，。]{0,6}(?:短|简洁|中文|英文)",
         r"不要(?!紧)", r"(?<![特区])别(?:用|给|再|写|在|把|推荐|发|排|打|叫|加|让|去|带|太)",
         r"以后[^，。；]{0,8}(?:别|不要|不用|请|少|多|尽量|记得)", r"就行", r"用(?:中文|英文|简体|繁体)",
         r"我只(?:坐|要|用|吃|喝|看|订|住|接受|选)",
         r"能[^，。]{1,4}就[^，。]{1,4}", r"不用(?:硬|再|特意)", r"给我[^，。]{0,8}(?:一个|先|加)",
         r"老规矩", r"最好(?:是|用|别|不要)"),
        (r"\bi\s+(?:really\s+|much\s+|generally\s+|also\s+|do\s+)?(?:prefer|like|love|enjoy|hate"
         r"|dislike|can't\s+stand)\b", r"\bi'd\s+(?:rather|prefer|like)\b", r"\bmy\s+favou?rite\b",
         r"\bi\s+(?:don't|do\s+not)\s+(?:like|want)\b", r"\bplease\b", r"\bpreference\b",
         r"\bno\s+[\w-]+(?:\s+[\w-]+)?\s+though\b", r"\bis\s+fine\b", r"\bworks\s+for\s+me\b",
         r"\bi'm\s+(?:vegetarian|vegan|allergic)\b", r"\bi\s+(?:always|never)\s+\w+",
         r"\b(?:not|never)\s+to\s+book\b", r"\bi\s+mean\b"),
    ),
    "instruction": (
        (r"记住", r"务必", r"一定要", r"以后都", r"以后[^，。；]{0,14}都(?!没|不)",
         r"每次(?!都?\s*(?:要|需要|得)?\s*[\d一二三四五六七八九十几两半]+\s*(?:分|秒|小时|天|次))(?:都)?",
         r"一律", r"必须", r"都要(?!\s*[\d一二三四五六七八九十几两半])", r"(?<!老)规矩", r"规定",
         r"永远", r"千万", r"不许", r"不准", r"不得", r"禁止",
         r"每年都", r"都适用", r"要执行", r"不能有", r"所有[^，。]{1,14}都"),
        (r"(?<!\bi )(?<!\bwe )(?<!\bthey )\balways\b", r"(?<!\bi )(?<!\bwe )\bnever\b", r"\bmust\b",
         r"\bmake\s+sure\b", r"\bremember\s+(?:to|that)\b",
         r"\bfrom\s+now\s+on\b", r"\bevery\s+time\b", r"\beach\s+time\b", r"\b(?:do\s+not|don't)\s+ever\b",
         r"\bunder\s+no\s+circumstances\b", r"\bis\s+required\b", r"\brequired\s+to\b",
         r"^no\s+[\w\s-]{3,40}\s+(?:from|until|before|after)\b"),
    ),
    "decision": (
        (r"决定", r"(?<![确])定了", r"定下来", r"就这么(?:定|排|办|来)", r"选定", r"采用", r"改用",
         r"统一(?:改用|用|改成)", r"拍板", r"改一下[：:]", r"敲定", r"最终(?:选|用|定)", r"确定(?:用|为|了)",
         r"就按", r"按[^，。]{1,12}算", r"就用", r"只改", r"不动全局", r"改到[^，。]{1,20}(?:上跑|上执行|去跑)",
         r"(?:告警|阈值)[^，。]{0,10}从[^，。]{1,12}(?:降|调|提|改)到"),
        (r"\bdecided\b", r"\bdecision\b", r"\bwe(?:'ll|\s+will)\s+go\s+with\b", r"\bgoing\s+with\b",
         r"\blet's\s+(?:go\s+with|use|stick\s+with|switch)\b", r"\b(?:we|i)\s+(?:chose|picked|settled\s+on)\b",
         r"\bwe\s+(?:keep|stick\s+with|switch\s+to|standardi[sz]e\s+on)\b", r"\bagreed\s+on\b"),
    ),
    "gotcha": (
        (r"根因(?:就)?(?:是|在于|[：:])", r"原因是", r"原因在于", r"问题出在", r"坑", r"踩过", r"注意",
         r"小心", r"提醒(?:一下|一点)",
         r"(?:不会|没有?|不)生效", r"才(?:会)?生效", r"只对[^，。]{1,14}生效", r"只改运行时", r"导致",
         r"是因为", r"由于", r"默认[^，。；]{0,30}?(?:只|是|不|会|值)", r"没用", r"不一样", r"误差", r"不会写回",
         r"所以(?:才|就|超过|没|被|一直)", r"所以[^，。]{0,10}才", r"就会", r"结果[^，。]{0,6}(?:都是|全是|变成|就)"),
        (r"\broot\s+cause\b", r"\bthe\s+(?:real\s+)?(?:problem|issue|cause|culprit|bug)\s+(?:was|is)\b",
         r"\bturn(?:s|ed)\s+out\b", r"\bcaused\s+by\b", r"\bbecause\b", r"\bdue\s+to\b", r"\bgotcha\b",
         r"\bpitfall\b", r"\bwatch\s+out\b", r"\bbe\s+careful\b", r"\bnote\s+that\b",
         r"\bonly\s+works\s+(?:if|when)\b", r"\b(?:doesn't|won't|does\s+not)\s+work\b", r"\bsilently\b",
         r"\bby\s+default\b", r"\bunless\b", r"\bavoids?\b", r"\bso\s+(?:it|they|the|keys|users)\b",
         r"\bthat's\s+the\s+(?:root\s+)?cause\b", r"\bwhich\s+caused\b", r"\bled\s+to\b",
         r"\bcaused\b", r"\bcauses\b", r"\bresult\s+of\b", r"\bis\s+the\s+result\b"),
    ),
    "fix": (
        (r"解决", r"修复", r"修好", r"搞定", r"就好了", r"恢复了", r"恢复到", r"恢复正常", r"没再(?:出现|涨|报)",
         r"不再(?:出现|报)", r"(?:报错|告警|问题)[^，。]{0,6}停了", r"没了", r"成功了", r"通过了?",
         r"(?:之后|以后)[^，。]{0,30}(?:能|可以)[^，。]{0,12}了", r"降到", r"(?:之后|以后).{0,40}(?:稳定|正常)",
         r"(?:就|弄|修|搞)好了"),
        (r"\bfixed\b", r"\bfix\s+(?:is|was)\b", r"\bresolved\b", r"\bsolved\b", r"\bdid\s+(?:it|the\s+trick)\b",
         r"\bworks?\s+(?:now|again)\b", r"\bworking\s+again\b", r"\bstopped\b",
         r"\bno\s+longer\s+(?:fails?|crash\w*|errors?|times?\s+out|happens|panics?|drops?)\b",
         r"\bback\s+(?:to|under|up)\b", r"\bdrained\b", r"\bsucceeded\b", r"\bpasses\s+again\b",
         r"\brecovered\b", r"\bruns\s+once\s+now\b", r"\bis\s+at\s+\d+%\s+now\b", r"\bstays\s+flat\b",
         r"\bno\s+(?:more\s+)?[\w ]{0,20}(?:panics|errors|failures)\b"),
    ),
    "error": (
        (r"报错", r"错误", r"失败", r"异常", r"超时", r"崩溃", r"挂了?", r"拉不下来", r"发不出去?",
         r"连不上", r"打满", r"不停重启", r"卡住", r"泄漏", r"拒绝", r"写不进去", r"用满了?",
         r"过多", r"掉到", r"出事", r"延迟告警", r"涨得很奇怪"),
        (r"\berror\b", r"\bexception\b", r"\bfail(?:ed|ing|s|ure)?\b", r"\bfatal\b", r"\bpanic\b",
         r"\bcrash(?:ed|es|ing|loop\w*)?\b", r"\btimed?\s*out\b", r"\btimeout\b", r"\brefused\b",
         r"\bdenied\b", r"\bforbidden\b", r"\bnot\s+found\b", r"\boom\b", r"\bout\s+of\s+memory\b",
         r"\bbroken?\b", r"\brejected?\b", r"\bexpired\b", r"\bevicted\b", r"\bstale\b",
         r"\bcan(?:not|'t)\s+log\s+in\b", r"\bslow\b", r"\blag(?:ging)?\b", r"\bdoubled\b",
         r"\b[45]\d\d\b(?=\s+[A-Z]|\s*$|\s*[,.(：:，。])", r"\btoo\s+many\b", r"\btoo\s+large\b"),
    ),
    "event": (
        (r"入职", r"离职", r"上线", r"发布", r"发版", r"出差", r"生日", r"搬家", r"请(?:一天|半天|\w?)假",
         r"休(?:年)?假", r"年假", r"看牙", r"开会", r"会议", r"事故", r"升级", r"维护", r"团建", r"面试",
         r"体检", r"旅行", r"出发", r"回(?:上海|北京|来|国)", r"去(?:[\u4e00-\u9fff]{2})", r"预约",
         r"上门", r"排班", r"值班", r"开始(?:去|上|进|接)", r"过[^，。]{0,4}(?:生日|OKR)", r"转学",
         r"幼儿园", r"停写", r"shadow", r"婚礼", r"约了"),
        (r"\btrip\b", r"\bflight\b", r"\bflying\b", r"\bdeploy(?:ed|ment)?\b", r"\brelease[sd]?\b",
         r"\blaunch(?:ed|es)?\b", r"\bupgrade[sd]?\b", r"\bincident\b", r"\boutage\b", r"\bmeeting\b",
         r"\bworkshop\b", r"\bsession\b", r"\bbirthday\b", r"\bwedding\b", r"\binterview\b",
         r"\bmov(?:ed|ing|es)\b", r"\bjoin(?:ed|s)?\b", r"\bstarts?\b", r"\bleave\b", r"\bvacation\b",
         r"\bvisit(?:ed|ing)?\b", r"\bappointment\b", r"\bbooked\b", r"\barriv(?:e|es|ed)\b",
         r"\bfreeze\b", r"\bslot\b", r"\bfired\b", r"\bhit\b", r"\brebuilt\b", r"\bwent\b"),
    ),
    "oneoff": (
        (r"帮我", r"帮忙", r"你(?:再|先|直接|顺便)?把", r"你按", r"麻烦你?", r"请你帮", r"你(?:帮我)?看(?:下|看|一下)",
         r"看下", r"看看", r"查一下", r"写一段", r"翻成", r"生成一下", r"列一下", r"整理一下", r"安排一下",
         r"合一下", r"贴到", r"发到群里", r"你直接", r"^(?:帮我)?(?:排|看|查|列|算|整理|梳理)一下"),
        (r"\b(?:can|could|would)\s+you\b", r"\bhelp\s+me\b", r"\blet\s+me\s+know\b",
         r"\bplease\s+(?:check|look|review|write|send|book|put|add|fix|help|take|find|draft|merge)\b",
         r"^(?:book|put|send|check|add|write|draft|merge|find|review)\b"),
    ),
    "emphasis": (
        (r"^(?:这|那)(?:条|个|点|些)[^，。]{0,10}(?:务必|一定|要|都)?(?:记住|记一下|记下|适用|执行|要做|照做)",
         r"^(?:务必|一定)记住", r"^记住(?:了|啊)?[。！]?$", r"^这个以后", r"^以后都这样"),
        (r"^always\.?$", r"^every\s+time\.?$", r"^remember\s+(?:that|this)\.?$", r"^never\s+forget",
         r"^(?:this|that)\s+(?:is\s+a\s+)?(?:standing\s+)?rule"),
    ),
    "change": (
        (r"改成", r"改为", r"改到", r"调到", r"换成", r"换班", r"推迟", r"提前到", r"延期", r"挪到",
         r"不是[^，。]{1,12}了", r"作废", r"停用", r"新地址", r"新的", r"更新(?:一下)?", r"变更", r"改了",
         r"从[^，。]{1,16}(?:改|调|降|提|涨|扩|换)(?:到|成|为)", r"现在是", r"改值"),
        (r"\bmov(?:ed|ing)\b", r"\bchanged?\b", r"\bnow\b", r"\binstead\b", r"\bno\s+longer\b",
         r"\bswitched\b", r"\bpush(?:ed)?\b[^.]{0,20}\bfrom\b", r"\bupdated?\b", r"\bnew\b",
         r"\breplac(?:ed|es)\b", r"\bcurrently\b"),
    ),
    "status": (
        (r"全部\s*Running", r"都\s*Running", r"都起来了", r"都正常", r"(?:都|全部|已经)在线", r"状态正常",
         r"绿了"),
        (r"\brunning\b", r"\bhealthy\b", r"\bgreen\b", r"\ball\s+up\b", r"\bready\b"),
    ),
    "self_recovery": (
        (r"自己恢复", r"自动恢复", r"自行恢复", r"自愈"),
        (r"\brecovered\s+(?:on\s+its\s+own|by\s+itself)\b", r"\bself[- ]heal", r"\bwent\s+away\b"),
    ),
    "suggestion": (
        (r"^建议", r"建议(?:用|改|先|把|在|直接)", r"可以(?:先|考虑|用|加)", r"要不要", r"如果", r"推荐",
         r"(?<!不)需要吗", r"两种(?:改法|方案)", r"方向", r"是否", r"能不能"),
        (r"\bi'd\s+(?:do|suggest|recommend|go)\b", r"\b(?:you|we)\s+(?:could|might|should)\b",
         r"\brecommend\b", r"\bsuggest\b", r"\boption\b", r"\bconsider\b", r"\bif\s+you\b", r"\bshould\s+we\b",
         r"\bwant\s+me\s+to\b"),
    ),
    "restatement": (
        (r"^(?:记下了|已记下|好的|收到|明白|已更新|已改|已办|已加入|已设置|已贴|已合并|已把)",),
        (r"^(?:noted|got\s+it|sure|ok(?:ay)?|great|done|updated|added|booked)\b",),
    ),
}
LABELS: dict[str, re.Pattern[str]] = {
    "gotcha": re.compile(r"(?i)坑|教训|gotcha|pitfall|lesson"),
    "decision": re.compile(r"(?i)决定|定了|定下来|decision|decided"),
    "preference": re.compile(r"(?i)习惯|偏好|preference"),
    "instruction": re.compile(r"(?i)规矩|规定|记住|务必|rule\b"),
}
_LABEL_RE = re.compile(r"^\s*([^：:。.!！?？]{1,16})[：:]\s*\S")


@cache
def _compiled(kind: str) -> re.Pattern[str]:
    zh, en = LEXICONS[kind]
    return re.compile("|".join(f"(?:{p})" for p in zh + en), re.IGNORECASE)


def hits(text: str) -> dict[str, list[str]]:
    """Which lexicons match `text`, with the words that matched."""
    out: dict[str, list[str]] = {}
    for kind in LEXICONS:
        found = [m.group(0) for m in _compiled(kind).finditer(text)]
        if found:
            out[kind] = found
    return out


def has(text: str, kind: str) -> bool:
    return _compiled(kind).search(text) is not None


def label(text: str) -> str | None:
    """The type a leading label names: "踩过的坑：…" → gotcha, "Decision: …" → decision."""
    m = _LABEL_RE.match(text)
    if not m:
        return None
    for kind, pattern in LABELS.items():
        if pattern.search(m.group(1)):
            return kind
    return None
