"""The objects of an act on the machine (text/acts.py): the machine's guidance — owned by it
("your guidelines", 你的设定), earlier ("the previous instructions", 之前的要求), told to it ("the
rules you were given", "the setup you got before this message", 你此前收到的指示) or plainly its
own ("the system prompt", 安全策略) — built from the word classes of text/lexicon.py, and the
characters a clause is made of in each language.
"""

from __future__ import annotations

import functools
import re

from . import lexicon as L

W = r"(?:[^.!?\n]|\.(?=\S))"  # a character inside one English sentence ("the .env file")
WZ = r"[^。！？!?；;\n]"  # … inside one Chinese sentence
WZC = r"[^。！？!?；;:：,，\n]"  # … inside one Chinese clause
CLAUSE_END = r"[。！？!?；;:：,，\n]"
ADV = r"(?:(?:completely|entirely|totally|fully|now|please|simply|just|immediately|quietly|" \
       r"altogether|for\s+now|all\s+of)\s+)*"


def _obj_en(pasted: bool) -> str:
    owner = L.alt(L.OWNER_EN, r"my", r"our") if pasted else L.OWNER_EN
    det = r"(?:(?:all|any|each|every)\s+(?:of\s+)?)?(?:(?:the|these|those)\s+)?"
    told = (r"(?:that\s+|which\s+)?you(?:'ve|\s+have|\s+were|\s+had|'d|'re|\s+are)?\s+(?:been\s+)?"
            r"(?:given|told|trained(?:\s+(?:on|with))?|configured(?:\s+with)?|programmed(?:\s+with)?|"
            r"instructed(?:\s+with)?|received|got(?:ten)?|set\s+up\s+with|provided(?:\s+with)?|"
            r"following|follow|under|(?:operate|work|run|act|live)\s+(?:under|by|with)|had|"
            r"loaded|(?:started|initiali[sz]ed|booted|launched|shipped|seeded|primed)\s+with|"
            r"came\s+with)")
    alts = [
        det + owner + r"\s+(?:" + L.ADJ_EN + r"\s+){0,3}" + L.GUIDE_EN + r"\b",
        det + r"(?<!\bmy\s)(?<!\bour\s)" + L.PRIOR_EN + r"\s+(?:" + L.ADJ_EN + r"\s+){0,2}"
        + L.GUIDE_EN + r"\b",
        det + r"(?<!\bmy\s)(?<!\bour\s)" + L.PRIOR_EN + r"\s+(?:[\w-]+\s+){0,2}" + L.STRONG_GUIDE_EN
        + r"\b",  # "any earlier review guidelines": a word of what they are about may stand between
        r"(?:all|any|every)\s+(?:" + L.ADJ_EN + r"\s+){0,2}" + L.STRONG_GUIDE_EN + r"\b",
        r"(?:the\s+|all\s+(?:the\s+)?|any\s+|every\s+|each\s+|whatever\s+|whichever\s+)?" + L.GUIDE_EN
        + r"\s+" + told,
        r"(?:the\s+)?" + L.GUIDE_EN + r"\s+(?:given|provided|assigned)\s+to\s+you",
        r"(?:everything|anything|all|whatever)\s+(?:that\s+)?you(?:'ve|\s+have|\s+were|\s+had)?\s+"
        r"(?:been\s+)?(?:told|given|taught|instructed|programmed)",
        r"(?:the\s+)?(?:system\s+(?:prompts?|messages?|instructions)|programming|guardrails|"
        r"safeguards|safety\s+(?:rules|guidelines|polic(?:y|ies)|settings|filters|measures|"
        r"protocols|restrictions)|content\s+(?:polic(?:y|ies)|filters?))\b",
    ]
    if pasted:
        alts.append(r"(?:the|all|everything|anything)\s+(?:(?:text|content|messages?)\s+)?"
                    r"(?:above|before(?:\s+this)?|so\s+far)\b")
        alts.append(r"the\s+user'?s\s+(?:original\s+|actual\s+|real\s+)?(?:question|request|"
                    r"query|instructions?)\b")
    return "(?:" + "|".join(alts) + ")"


def _obj_en_soft(earlier: bool) -> str:
    """The machine's guidance in softer words too: what it was set up with, told to it ("the
    setup you got before this message"), or earlier ("the earlier setup") — the object of a
    verdict that says it is gone ("none of … counts", "as if … never happened")."""
    told = (r"(?:that\s+|which\s+)?you(?:'ve|\s+have|\s+were|\s+had|'d)?\s+(?:been\s+)?(?:given|"
            r"told|got(?:ten)?|received|loaded|had|(?:started|initiali[sz]ed|booted|launched|set\s+up|"
            r"configured|primed)(?:\s+with)?)")
    det = r"(?:(?:all|any|each|every)\s+(?:of\s+)?)?(?:(?:the|these|those|this|that)\s+)?"
    alts = [_obj_en(False), det + r"(?:" + L.GUIDE_EN + "|" + L.SOFT_GUIDE_EN + r")\s+" + told,
            det + r"your\s+(?:" + L.ADJ_EN + r"\s+){0,2}" + L.SOFT_GUIDE_EN + r"\b"]
    if earlier:  # "the earlier setup": only where the verdict is plainly about the machine
        alts += [det + r"(?:earlier|previous|prior|original|initial)\s+(?:" + L.ADJ_EN + r"\s+){0,2}"
                 + L.SOFT_GUIDE_EN + r"\b", r"(?:everything|all)\s+(?:above|before\s+this|so\s+far)"]
    return "(?:" + "|".join(alts) + ")"


def _obj_zh(pasted: bool) -> str:
    alts = [
        L.OWNER_ZH + WZC + r"{0,8}?" + L.GUIDE_ZH,
        L.PRIOR_ZH + r"的?(?:所有|全部|一切|任何|这些|那些|各项|各种|各条)?的?[\u4e00-\u9fff ]{0,8}?"
        + L.GUIDE_ZH,
        r"你(?:之前|此前|先前|原来|原先|一开始)?的?(?:任何|所有|全部|一切)?(?:设置|配置)",
        L.STRONG_ZH,
    ]
    if pasted:
        alts.append(r"(?:上文|以上内容|上面的内容|前面的内容|之前的(?:内容|对话|上下文)|"
                    r"(?:上面|前面|之前)(?:说|讲|写)的(?:一切|所有|全部|内容|话)|"
                    r"用户(?:原本|原来|最初|本来|真正)?的(?:问题|请求|要求|提问))")
    return "(?:" + "|".join(alts) + ")"


EN_TAIL = (r"(?:\s+(?:at|on|during|since)\s+(?:startup|start-?up|boot|launch|the\s+start|"
            r"initiali[sz]ation))?(?:\s+(?:above|before|earlier|previously|so\s+far|until\s+now)(?:\s+this\s+(?:message|"
            r"point|line))?)?,?\s+(?:(?:are|is|were|was|have\s+been|has\s+been|now|hereby|officially|all|"
            r"henceforth)\s+)*$")


@functools.cache
def compiled(kind: str) -> re.Pattern[str]:
    """The compiled object of a clause, by `Rule.then` (and ":pasted" for pasted material)."""
    pasted = kind.endswith(":pasted")
    kind = kind.removesuffix(":pasted")
    if kind == "en":
        return re.compile(_obj_en(pasted), re.I)
    if kind == "en-weak":
        return re.compile(r"(?:(?:all|any)\s+(?:of\s+)?)?(?:your|its)\s+(?:" + L.ADJ_EN + r"\s+){0,3}"
                          + L.GUIDE_EN + r"\b|" + _obj_en(False), re.I)
    if kind == "en-before":
        return re.compile(r"\b(?:" + _obj_en(False) + ")" + EN_TAIL, re.I)
    if kind in ("en-soft", "en-told"):
        return re.compile(_obj_en_soft(kind == "en-soft"), re.I)
    if kind in ("zh", "zh-before"):
        return re.compile(_obj_zh(pasted))
    return re.compile(L.OWNER_ZH + WZC + r"{0,8}?" + L.GUIDE_ZH + "|" + L.STRONG_ZH  # zh-weak
                      + r"|你(?:之前|此前|先前|原来|原先|一开始)?的?(?:任何|所有|全部|一切)?(?:设置|配置)")


