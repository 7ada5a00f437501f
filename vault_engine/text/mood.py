"""Who a clause is about and how it is said — the grammar the card types lean on, Chinese and
English alike. The cue lexicons (`cues.py`) say *what* a clause talks about; these say *how*:

- **mentioned words** — words inside quotation marks are talked about, not used: in
  "通知里别写“务必准时”" the 务必 is the thing to avoid, not an order (`mask_mentions`);
- **the user as the one served** (`serves_me`) — 给我 / 回答我 / 跟我 / 找我 / 提醒我的事 /
  with me / for me / give me / send me: a rule about how the user is answered, reached or
  scheduled is a preference;
- **how an answer looks** (`style_object`) — the language, format, length, tone and order of
  what the agent writes (中文 表格 TL;DR 结论 语气 emoji · Chinese, table, bullet, tone);
- **a duty for the agent** (`duty`) — a reminder at a time (到期前 30 天提醒我, remind me a day
  before), a check before an action (上线前一定要…, before you merge …), a standing order
  (务必 一律 必须 千万 · must, always, every time, a standing rule for you);
- **an agentive change** (`agentive_change`) — the speaker changing something (先把 X 改成 Y,
  X 设 80%, set X to 500, switch to …, push it from … to …), against a reported one ("交接时间也
  改了", "X was changed");
- **an alternative set aside** (`alternative`) — 而不是, 不单独, X 不动, 先不, 暂时不, 等…再,
  instead of, rather than, not yet, for now, keep …: the mark of a choice;
- **a reason given** (`reason_marker`) — 因为 由于 原因是 所以 以免 · because, since, so that;
- **an attribute stated** (`attribute`) — a copula whose predicate is a date or a role: 我生日是
  7 月 3 日, 我是讲师, my birthday is …, I'm the speaker: a fact about someone, not a happening;
- **an assignment** (`assignment`) — who holds a duty: on-call 是我, 换成马骁, X 负责 …, 找张伟,
  Alice owns …: a fact.

What they miss: sarcasm and irony, double negation ("不是不行"), a duty or a preference said
about a third party ("他喜欢被提醒"), quotation marks used for emphasis rather than mention.
"""

from __future__ import annotations

import re

# quotation marks whose content is mentioned, not used
_MENTION_RE = re.compile(r"“[^”\n]{1,40}”|「[^」\n]{1,40}」|『[^』\n]{1,40}』|\"[^\"\n]{1,40}\"")

SERVES_ME_RE = re.compile(
    r"给我|回答我|回复我|答我|跟我(?:说|讲|对话|聊|沟通|汇报)|找我|叫我|通知我|联系我|发我|告诉我|"
    r"提醒我的|对我|帮我的时候|我的问题|(?<!提)醒我|我的会|给我(?:排|约|订)|"
    r"(?i:\bwith\s+me\b|\bfor\s+me\b|\bto\s+me\b|\b(?:give|send|show|tell|ping|page|call|text|"
    r"email|message|answer|reply\s+to)\s+me\b|\bmy\s+(?:calendar|inbox|phone|questions?)\b)")
STYLE_RE = re.compile(
    r"中文|英文|简体|繁体|表格|列表|TL;DR|结论|语气|口吻|客套|emoji|表情|篇幅|长度|简短|简洁|啰嗦|"
    r"格式|markdown|代码示例|示例|注释|标题|要点|先说|一屏|字数|措辞|称呼|大写|小写|驼峰|下划线|缩进|空格|命名|"
    r"短一点|长一点|[一二两三四五\d]+\s*(?:行|句|字)以内|"
    r"(?i:\b(?:in\s+)?(?:chinese|english|mandarin)\b|(?-i:\b[Tt]ables?\b)|\bbullets?\b|\bbullet\s+points?\b"
    r"|\btone\b|\bconcise\b|\bshort\b|\bbrief\b|\bverbose\b|\bemoji\b|\bformat\b|\bsummary\b"
    r"|\bcomments?\b|\b(?:commands?|explanation)\s+(?:first|after|last)\b|\bgroup\b)")
# the user's own life: seats, food, travel, how and when they are reached or booked
PERSONAL_RE = re.compile(
    r"座|航班|红眼|高铁|飞机|酒店|早餐|含早|吃|喝|咖啡|茶|排会|约会|开会|会议|电话|微信|钉钉|短信|邮件|"
    r"飞书|通勤|睡|晕|过敏|素食|(?i:\bseat\b|\bflights?\b|\bred-?eye\b|\bhotel\b|\bmeal\b|\bvegetarian\b"
    r"|\bcoffee\b|\btea\b|\bmeetings?\b|\bcall\b|\bslack\b|\bemail\b|\bphone\b)")
_REMINDER_DUTY_RE = re.compile(
    r"(?:前|之前|提前|到期|到时候|每天|每周|每月|点|号)[^，。；]{0,12}提醒|提醒[^，。；]{0,8}(?:一下|一声)?"
    r"[^，。；]{0,6}(?:前|之前|提前)|"
    r"(?i:\bremind\s+(?:me|us|them|the\s+\w+)\b[^.;]{0,40}\b(?:before|ahead|prior|days?|weeks?|"
    r"when|at|every|each)\b)")
_STANDING_ORDER_RE = re.compile(
    r"务必|一定要|必须|一律|(?<![\d一二三四五六七八九十几两]\s)(?<![\d一二三四五六七八九十几两])千万(?![行条元级次个人块])|不许|不准|(?<![怪由舍记晓])不得(?![不了])|禁止|严禁|记住|(?<!老)规矩|规定|每次(?!都?\s*(?:要|需要|得)?\s*[\d一二三四五六七八九十几两半]+\s*(?:分|秒|小时|天|次))|"
    r"(?i:\bmust\b|\bmake\s+sure\b|\bremember\s+to\b|\bevery\s+time\b|\beach\s+time\b"
    r"|\bstanding\s+(?:rule|order|instruction)\b|\bunder\s+no\s+circumstances\b|\bnever\s+ever\b)")
_CHECK_BEFORE_RE = re.compile(
    r"(?:上线|合并?|合入|发版|发布|部署|执行|apply|merge|deploy)[^，。；]{0,4}(?:前|之前)[^，。；]{0,16}"
    r"(?:要|得|必须|一定|先)|"
    r"(?i:\bbefore\s+(?:you\s+)?(?:merg|deploy|releas|apply|run|ship)\w*\b[^.;]{0,40}\b(?:run|check|"
    r"get|pass|attach|add)\b)")
# a procedure: this first, then that — a duty when it holds from now on
_PROCEDURE_RE = re.compile(r"先[^。；]{1,60}再(?:给|做|执行|删|跑|发|动|改|上|合)|(?i:\bfirst\b[^.;]{1,60}\bthen\b)")
# from now on, whenever, every time: what is asked under such a mark holds for every case
_STANDING_MARK_RE = re.compile(r"(?<![\u4e00-\u9fff])以后|(?:麻烦|请|你|也|都|另外|还有)以后|今后|往后|每当|凡是|"
                               r"每次|每(?:条|个|篇|份|封)(?=[\u4e00-\u9fff])|(?i:\bfrom\s+now\s+on\b|"
                               r"\bgoing\s+forward\b|\bwhenever\b|\bevery\s+time\b|\bin\s+(?:the\s+)?future\b)")
# a clause that points back to the rule before it: "也按这个来", "照这样", "the same way"
_POINTS_BACK_RE = re.compile(r"(?:也|都|就)(?:按|照)(?:这个|这套|这样|此)|(?i:\b(?:the\s+same\s+way|like\s+this)\b)")
# a convention: one way for everything of a kind
_CONVENTION_RE = re.compile(r"统一|(?i:\bconsistently\b|\bstandardi[sz]e\b)")
_CONSEQUENCE_RE = re.compile(r"(?i)^\s*(?:所以|因此|于是|so\b|therefore\b)")
_AGENTIVE_CHANGE_RE = re.compile(
    r"(?:先|就|再)?把[^，。；]{1,40}?(?:改成|改为|改到|调到|调成|调整为|换成|设成|设为|设到|降到|提到|加到|"
    r"置成|置为|扩到|缩到|切到|迁到)|"
    r"(?:阈值|上限|下限|超时|timeout|ttl|retention|副本数|并发)[^，。；]{0,8}(?:设|定|调)(?:成|为|到|在)?\s*"
    r"[\d一二三四五六七八九十]|"
    r"(?:^|[，,；;]\s*)(?:先|就|那就)?(?:改成|改为|改用|换成|换用|切到|迁到|调到)|"
    r"(?i:\b(?:set|raise|lower|bump|change|switch|move|push|drop|cap|pin|limit)\s+(?:it|\S+(?:\s+\S+)?)"
    r"\s+(?:to|from)\b|\b(?:we're|we\s+are|we'll|let's)\s+(?:switch|mov|migrat|drop|replac|"
    r"adopt|standardi[sz])\w*\b|\bgo(?:ing)?\s+forward\b[^.]{0,30}\b(?:use|using)\b)")
_REPORTED_CHANGE_RE = re.compile(
    r"(?:时间|地址|号码|电话|班|值班|交接|安排|计划)[^，。]{0,4}(?:也|都|已经)?(?:改了|变了|调整了)|"
    r"不是[^，。]{1,12}了|(?i:\bwas\s+(?:changed|moved|switched|renamed)\b|\bhas\s+been\s+"
    r"(?:changed|moved)\b)")
_ALTERNATIVE_RE = re.compile(
    r"而不是|而非|不单独|单独[^，。]{0,4}不|不动|先不|暂(?:时)?不|暂缓|"
    r"宁可|与其|不用[^，。]{0,6}了|保持不变|维持|(?<!不)继续用|不再用|弃用|不想再|"
    r"(?i:\binstead\s+of\b|\brather\s+than\b|\bnot\s+yet\b|\bfor\s+now\b|\bhold\s+off\b"
    r"|\brevisit\b|\bstick\s+with\b|\bkeep\s+(?:using\s+)?\S+(?:\s+\S+)?\s+(?:for\s+now|as\s+is)\b"
    r"|\bno\s+longer\s+use\b|\bover\b(?=\s+\w+\s+(?:because|since))|\bdropping\b)")
REASON_RE = re.compile(
    r"因为|由于|原因是|原因在于|理由是|是为了|为了避免|以免|免得|所以|因此|否则|"
    r"(?i:\bbecause\b|\bsince\b(?!\s+(?:the\s+)?\d|\s+(?:this|last|yesterday|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|morning))|\bso\s+that\b|\bdue\s+to\b"
    r"|\bas\s+it\b|\botherwise\b)")
_ATTRIBUTE_DATE_RE = re.compile(
    r"(?:生日|纪念日|结婚纪念日|生辰)(?:是|在|为)|(?i:\b(?:birthday|anniversary)\s+is\b)")
_IDENTITY_RE = re.compile(
    r"(?:^|[，,；;]\s*)(?:我|他|她)(?:是|当)(?!不是)[^，。；]{0,12}(?:讲师|嘉宾|负责人|主持|owner|组长|"
    r"经理|工程师|架构师|队长|面试官|评委|联系人|二线|主值班|值班)|"
    r"(?i:\bi'?m\s+(?:the|a|an)\s+(?:speaker|host|owner|lead|manager|engineer|organi[sz]er|"
    r"on-?call|contact|reviewer)\b|\bi\s+am\s+(?:the|a|an)\s+\w+\s*(?:speaker|host|owner|lead)\b)")
# where someone is based or sits: a fact about them
_PLACE_RE = re.compile(r"(?:base|常驻|坐标|住|家)\s*在|(?:工位|座位|办公室|办公地点)(?:在|是)|"
                       r"(?i:\bi(?:'m|\s+am)\s+based\s+in\b|\bi\s+live\s+in\b|\bmy\s+desk\s+is\b)")
_ASSIGNMENT_RE = re.compile(
    r"(?:on-?call|值班|二线|一线|主值班|负责人|owner|对接人)[^，。；]{0,6}(?:是|为|换成|改成|轮到)|"
    r"(?:换成|轮到|交给|由)[\u4e00-\u9fff]{2,3}(?=[，。；、]|$|负责|值|接)|负责|事(?:都|就|先|请)?找|开始接|接手|"
    r"(?:导师|师傅|mentor|buddy|对接人|联系人)(?:是|为)|"
    r"(?i:\bowns\b|\bis\s+on-?call\b|\bon-?call\s+is\b|\btakes\s+over\b|\bin\s+charge\s+of\b)")


def mask_mentions(text: str) -> str:
    """`text` with the words inside quotation marks blanked out (same length): they are
    talked about, not said ("别写“务必准时”" gives no 务必)."""
    return _MENTION_RE.sub(lambda m: m.group(0)[0] + "□" * (len(m.group(0)) - 2) + m.group(0)[-1],
                           text)


def serves_me(text: str) -> bool:
    return SERVES_ME_RE.search(text) is not None


def style_object(text: str) -> bool:
    return STYLE_RE.search(text) is not None


def personal(text: str) -> bool:
    return PERSONAL_RE.search(text) is not None


def duty(text: str) -> int:
    """How strongly a clause lays a duty on the agent: 2 for a standing order or a timed
    reminder, 1 for a check before an action, else 0."""
    if _STANDING_ORDER_RE.search(text) or _REMINDER_DUTY_RE.search(text):
        return 2
    if _PROCEDURE_RE.search(text) and _STANDING_MARK_RE.search(text):
        return 1  # 以后删数据先给我 count 再给删除语句: a procedure for every such case
    return 1 if _CHECK_BEFORE_RE.search(text) else 0


def standing(text: str) -> bool:
    """Said to hold from now on (以后…, 每次, whenever, from now on): a request under it is no
    task for now ("麻烦以后涉及删数据的 SQL 先给我…", "Whenever you suggest a DNS change, …")."""
    return _STANDING_MARK_RE.search(text) is not None


def points_back(text: str) -> bool:
    return _POINTS_BACK_RE.search(text) is not None


def convention(text: str) -> bool:
    return _CONVENTION_RE.search(text) is not None


def consequence(text: str) -> bool:
    return _CONSEQUENCE_RE.match(text) is not None


def agentive_change(text: str) -> bool:
    return _AGENTIVE_CHANGE_RE.search(text) is not None and not reported_change(text)


def reported_change(text: str) -> bool:
    return _REPORTED_CHANGE_RE.search(text) is not None


def alternative(text: str) -> bool:
    return _ALTERNATIVE_RE.search(text) is not None


def reason_marker(text: str) -> bool:
    return REASON_RE.search(text) is not None


def attribute(text: str) -> bool:
    """A date, a role or a place stated as what someone *is* ("我生日是 7 月 3 日", "我是讲师",
    "我 base 在杭州", "工位在 6F-117")."""
    return bool(_ATTRIBUTE_DATE_RE.search(text) or _IDENTITY_RE.search(text)
                or _PLACE_RE.search(text))


def identity(text: str) -> bool:
    return _IDENTITY_RE.search(text) is not None


def assignment(text: str) -> bool:
    return _ASSIGNMENT_RE.search(text) is not None
