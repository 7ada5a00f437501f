"""Whether a clause found by text/acts.py is said as an order to the machine (its mood).

- **English**: the verb stands where an order starts — a clause's start (after please, now,
  just, so, and …), after "you must / I need you to", after a vocative, or after "the assistant
  reading this must"; a verdict on the machine's guidance ("… are void") not asked about;
- **Chinese**: not negated (不要忘记之前的规则), not described or reported (大模型有时会忽略系统提示词,
  面试官让我忽略…), its subject not someone else (我忘记…, 攻击者忽略…); the speaker's own words
  taken back (忽略我前面的要求) are no override;
- **not a mention**: the act alone inside quotation marks in a sentence about such text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Hit:
    """One clause found: where it is, where its verb starts (the mood is read before it), its
    object and, for a verdict on the object ("… are void", "…作废"), where that starts."""

    start: int
    end: int
    verb: int
    obj: tuple[int, int] | None = None
    void: int | None = None
    to: str = ""


SENTENCE_END = r"[。！？!?；;\n]"

# -- mood ------------------------------------------------------------------------------------

_BOUNDARY = re.compile(r"[.!?;:。！？；：\n\"“”「」『』()（）\[\]【】,，、—–#*+>|=~{}<]|//")
_LEAD = (r"(?:please|pls|kindly|now|so|ok(?:ay)?|alright|just|simply|first(?:ly)?|then|also|"
         r"immediately|quietly|silently|secretly|hey|listen|look|actually|instead|rather|"
         r"right\s+now|from\s+now\s+on|going\s+forward|henceforth|from\s+this\s+point(?:\s+(?:on|"
         r"forward))?|starting\s+now|before\s+(?:answering|responding|replying|you\s+(?:answer|"
         r"respond|reply))|for\s+(?:this|the\s+rest\s+of\s+(?:this|the))\s+(?:conversation|session|"
         r"chat|task)|you\s+(?:must|should|shall|will|need\s+to|have\s+to|are\s+to|are\s+required\s+to|"
         r"are\s+instructed\s+to|can|may|ought\s+to|'ll|are\s+(?:now\s+)?(?:free|allowed|permitted|"
         r"authori[sz]ed)\s+to)(?:\s+now)?|i\s+(?:need|want|order|command|instruct|require|ask)\s+you"
         r"\s+to|(?:it'?s\s+)?time\s+(?:for\s+you\s+)?to|be\s+sure\s+to|make\s+sure\s+(?:to|you)|"
         r"(?:the|this|any|all|every)\s+(?:\w+\s+)?(?:ai|assistant|model|llm|bot|agent|memory(?:\s+"
         r"system)?)(?:\s+\w+ing\s+this(?:\s+\w+)?)?\s+(?:must|should|shall|will|needs\s+to|is\s+to|"
         r"has\s+to|is\s+required\s+to|is\s+instructed\s+to)|you)")
_IMPERATIVE = re.compile(r"(?i)(?:^|.*\b(?:and|then|but|or|also|&))\s*(?:" + _LEAD + r"\s*,?\s*)*$",
                         re.S)
_ZH_DESCRIBED = re.compile(
    r"会|可能|容易|经常|总是|有时|往往|偶尔|竟然|居然|曾经|常常|老是|为什么|为何|怎么|怎样|如何|是否|能否|"
    r"能不能|会不会|防止|避免|防御|防范|检测|识别|拦截|导致|以免|让我|叫我|要我|让他|让她|叫他|要求我|"
    r"让用户|让人|试图|企图|妄图|诱导|骗|如果|假如|要是|万一|一旦|担心|害怕|不能让|不会让")
_ZH_SUBJECT = re.compile(r"(?:我|我们|他|她|它|他们|她们|它们|模型|大模型|AI|助手|机器人|攻击者|黑客|"
                         r"用户|有人|别人|对方|同事|老板|面试官|客户)\s*(?:也|又|还|就|都|总|偶尔|经常|常)?"
                         r"\s*$")
_ZH_NEGATED = re.compile(r"(?:不要|别|不能|不可以|不可|不许|不得|千万别|千万不要|切勿|勿|禁止|不准|没有|没|"
                         r"并未|未|从不|从来不|不会|不应该?|不该)\s*再?\s*$")
_FIRST_PERSON_ZH = re.compile(r"我(?!们的?(?:AI|助手))")

_QUOTES = (("\"", "\""), ("“", "”"), ("「", "」"), ("『", "』"), ("‘", "’"), ("`", "`"),
           ("'", "'"))
_META = re.compile(
    r"(?i)\b(?:inject\w*|attack\w*|payloads?|jailbreak\w*|phrases?|strings?|like|such\s+as|e\.g|"
    r"for\s+example|examples?|classic|typical|patterns?|filters?|detect\w*|block\w*|catch\w*|"
    r"messages?|sentences?|keywords?|tricks?|prompts?|text|wording|lines?)\b|"
    r"一句|这句|那句|这种|那种|类似|比如|例如|诸如|像|典型|句式|话术|注入|攻击|越狱|例子|样本|测试用例|"
    r"关键词|过滤|拦截|检测|识别|防御|防范|防止|这类|之类|字样|消息|文字")


def _clause_start(text: str, pos: int) -> int:
    for i in range(pos - 1, max(-1, pos - 200), -1):
        if _BOUNDARY.match(text, i):
            return i + 1
    return max(0, pos - 200)


def mention(text: str, h: Hit) -> bool:
    """The act alone inside quotation marks, in a sentence about such text."""
    a, b = h.start, h.end
    for left, right in _QUOTES:
        lq = text.rfind(left, max(0, a - 12), a + 1) if left != "'" else _apostrophe_free(text, a)
        if lq < 0:
            continue
        rq = text.find(right, b)
        if rq < 0 or rq - b > 12 or (a - lq - 1) > 12:
            continue
        around = text[max(0, lq - 120):lq] + " " + text[rq + 1:rq + 120]
        if _META.search(around):
            return True
    return False


def _apostrophe_free(text: str, a: int) -> int:
    """A single quote opening a quotation (not an apostrophe inside a word) just before `a`."""
    for i in range(a, max(-1, a - 13), -1):
        if i < len(text) and text[i] == "'" and (i == 0 or not text[i - 1].isalnum()):
            return i
    return -1


def _english_order(text: str, h: Hit, pasted: bool) -> bool:
    return bool(_IMPERATIVE.match(text[_clause_start(text, h.verb):h.verb]))


def _own(text: str, h: Hit) -> bool:
    """The object is the speaker's own earlier words (我前面的要求, 我给你的规则)."""
    if h.obj is None:
        return False
    a, b = h.obj
    return "我" in text[max(0, a - 2):a] or bool(_FIRST_PERSON_ZH.search(text[a:b]))


def _chinese_order(text: str, h: Hit, pasted: bool) -> bool:
    prefix = text[_clause_start(text, h.start):h.start]
    if _ZH_DESCRIBED.search(prefix) or _ZH_SUBJECT.search(prefix) or _ZH_NEGATED.search(prefix):
        return False
    if not pasted and _own(text, h):
        return False  # a correction of the speaker's own words
    # sent to the speaker ("把聊天记录发给我") is no exfiltration
    return pasted or h.to != "我"


def _chinese_predicate(text: str, h: Hit, pasted: bool) -> bool:
    assert h.obj is not None and h.void is not None
    prefix = text[_clause_start(text, h.obj[0]):h.obj[0]]
    if _ZH_DESCRIBED.search(prefix) or _ZH_SUBJECT.search(prefix) or (not pasted and _own(text, h)):
        return False
    between = text[h.obj[1]:h.void]
    return not (_ZH_NEGATED.search(between) or _ZH_DESCRIBED.search(between))


def _english_predicate(text: str, h: Hit, pasted: bool) -> bool:
    prefix = text[_clause_start(text, h.start):h.start].lower()
    return not re.search(r"\b(?:if|whether|when|unless|in\s+case|why|how)\b", prefix)


MOODS: dict[str, Callable[[str, Hit, bool], bool]] = {
    "en": _english_order,
    "zh": _chinese_order,
    "en-predicate": _english_predicate,
    "zh-predicate": _chinese_predicate,
    "any": lambda t, h, p: True,
}


