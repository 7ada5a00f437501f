"""What kind of answer a question wants, read from its words (English and Chinese), so recall
can rank for it: a **list** ("what activities does Melanie do", "which cities has Jon visited",
"张伟都负责哪些系统", "都有什么") wants one memory per place the answer is spread over; a
**time** question ("when did …", "how long ago …", "什么时候", "哪天", "多久以前") wants the
memories that say when; a **relation** question asks along a relation — "why …", "what caused
…", "为什么", "什么导致" for a cause (CAUSED_BY), "what did … lead to", "导致了什么" for an effect
(CAUSES), "what happened next", "之后呢" for what came after (TEMPORAL_NEXT) — and graph
expansion weights the nodes it reaches along that relation (expansion.py). Pure functions
over the query text; nothing is loaded.

The patterns are compiled on first use, and only when a cheap word check says they could
match: compiling them all costs a one-shot `alaya recall` process several milliseconds."""

from __future__ import annotations

import re
from functools import cache

from vault_engine.primitives import record

# English: "what/which <up to two words> <plural noun>" ("what LGBTQ+ events", "which
# cities"), "what are some / all the …", "kinds/types of", "in what ways", "how many", "list",
# "every"; Chinese: 哪些, 都有什么/都有哪些, 几次/多少次, 列出, 所有, 分别, 都…过.
_LIST_EN = (
    r"(?ix)\b(?:what|which)\s+(?:[\w+'’/-]+\s+){0,2}?(?P<noun>[a-z][a-z+/-]*[a-z]s)\b"
    r"|\bwhat\s+(?:are|were)\s+(?:some|all)\b"
    r"|\b(?:kinds|types|sorts)\s+of\b"
    r"|\b(?:in\s+)?what\s+ways\b"
    r"|\bhow\s+many\b"
    r"|\ball\s+(?:the\s+)?[a-z]+s\b|\blist\b|\bevery\b|\bwhich\s+\w+\s+(?:has|have)\b")
# plural-looking words that are not a plural noun after "what/which"
_NOT_PLURAL = frozenset({
    "is", "was", "has", "does", "this", "its", "his", "hers", "ours", "yours", "theirs", "us",
    "yes", "less", "plus", "news", "always", "perhaps", "sometimes", "as", "thus", "unless",
    "whereas", "across", "process", "address", "business", "status", "focus", "success",
    "class", "access", "stress", "progress", "bus", "gas", "chaos", "campus", "lens", "series",
    "means", "physics", "mathematics", "politics", "economics", "kudos"})
_LIST_ZH = (
    r"哪些|都有什么|都有哪些|有哪几|哪几[个种项次样类家位条]|几次|多少次|列出|列一下|所有的|分别|"
    r"都(?:[^，。？?！!]{0,8})过")
_TIME_EN = (
    r"(?ix)^\W*(?:(?:and|so|but)\s+)?when\b|\bwhen\s+(?:did|does|do|is|was|were|will|has|have|"
    r"are|can|should)\b|\bwhat\s+(?:date|day|year|month|time|week)\b|\bwhich\s+(?:date|day|"
    r"year|month|week|weekend)\b|\bhow\s+long\s+(?:ago|has|have|had|did|since|before|after)\b"
    r"|\bsince\s+when\b|\bhow\s+(?:many\s+)?(?:days|weeks|months|years)\s+(?:ago|since|before|"
    r"after)\b|\bwhat\s+dates\b")
_TIME_ZH = (
    r"什么时候|啥时候|何时|哪天|哪一天|哪几天|几号|几月|哪个月|哪年|哪一年|几点|什么时间|多久以前|"
    r"多久前|多长时间|多久了|多少天|多少年|几天前|几年前|日期是")


# Relation questions. A cause: "why", "how come", "root cause", "the reason for", "what
# caused / led to / triggered …", "what <verb>ed the …" ("what exhausted the pool", "what
# broke the build"; not "what happened"), "what blocks …"; 为什么, 为何, 为啥, 怎么会, 原因,
# 根因, 起因, 什么导致/造成/引起, 是什么让, 怎么回事. An effect: "what did … lead to / cause /
# break", "what happened because of", "consequences/effect/impact of"; 导致了什么, 造成了什么,
# 引起了什么, 后果, 有什么影响. What came next: "what happened next/after/then", "and then";
# 之后呢, 后来, 接下来, 然后呢.
_CAUSE_EN = (
    r"(?ix)\bwhy\b|\bhow\s+come\b|\broot[\s-]+cause|\bcause[sd]?\s+(?:of|for)\b"
    r"|\breasons?\s+(?:for|why|behind)\b|\bwhat\s+(?:was|is|were)\s+behind\b"
    r"|\bwhat\s+(?:caused|causes|led\s+to|leads\s+to|triggered|triggers|made|makes|broke|"
    r"breaks|blocked|blocks|killed|kills|filled|fills|started|starts)\b"
    r"|\bwhat\s+(?!happened\b|happens\b|changed\b|used\b|needed\b)[a-z]+ed\s+"
    r"(?:the|a|an|our|my|this|that|these|those|its|their)\b")
_CAUSE_ZH = r"为什么|为何|为啥|怎么会|原因|根因|起因|(?:什么|啥|谁)(?:导致|造成|引起|引发|搞)|是什么让|怎么回事"
_EFFECT_EN = (
    r"(?ix)\bwhat\s+(?:did|does|do|will|would)\s+.{1,60}?\s+(?:lead\s+to|cause|result\s+in|"
    r"break|trigger|affect)\b|\bwhat\s+happened\s+because\b"
    r"|\b(?:consequences?|effects?|impact|fallout)\s+of\b")
_EFFECT_ZH = r"导致了?什么|造成了?什么|引起了?什么|引发了?什么|后果|有什么影响|影响了?什么|带来了?什么"
_NEXT_EN = (r"(?ix)\bwhat\s+(?:happened|came|comes|happens)\s+(?:next|after|then)\b"
            r"|\band\s+then\s+what\b|\bwhat\s+next\b")
_NEXT_ZH = r"之后呢|后来呢?|接下来|然后呢|之后(?:发生|又|怎么)"


@record(frozen=True)
class Intent:
    """What kind of answer a question wants."""

    listing: bool = False  # the answer is a list, spread over several memories
    when: bool = False  # the question asks for a time, a date or how long ago
    relation: str | None = None  # the relation it asks along: CAUSED_BY, CAUSES, TEMPORAL_NEXT


# words or characters one of the patterns needs; a query with none of them skips it
_GATES = {
    "_LIST_EN": ("what", "which", "kind", "type", "sort", "how many", "all ", "list", "every",
                 "ways"),
    "_LIST_ZH": tuple("哪都几多列所分"),
    "_TIME_EN": ("when", "date", "day", "year", "month", "time", "week", "how long", "since",
                 "ago"),
    "_TIME_ZH": tuple("时候何哪几多日"),
    "_CAUSE_EN": ("why", "how come", "cause", "reason", "behind", "what"),
    "_CAUSE_ZH": tuple("为怎原根起导造引让搞"),
    "_EFFECT_EN": ("what", "consequence", "effect", "impact", "fallout"),
    "_EFFECT_ZH": tuple("导造引后影带"),
    "_NEXT_EN": ("next", "after", "then"),
    "_NEXT_ZH": tuple("后接然"),
}
_SOURCES = {"_LIST_EN": _LIST_EN, "_LIST_ZH": _LIST_ZH, "_TIME_EN": _TIME_EN,
            "_TIME_ZH": _TIME_ZH, "_CAUSE_EN": _CAUSE_EN, "_CAUSE_ZH": _CAUSE_ZH,
            "_EFFECT_EN": _EFFECT_EN, "_EFFECT_ZH": _EFFECT_ZH, "_NEXT_EN": _NEXT_EN,
            "_NEXT_ZH": _NEXT_ZH}


@cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(_SOURCES[name])


def _may(name: str, folded: str) -> bool:
    return any(g in folded for g in _GATES[name])


def _search(name: str, text: str, folded: str) -> bool:
    return _may(name, folded) and _pattern(name).search(text) is not None


def _is_list_en(text: str, folded: str) -> bool:
    if not _may("_LIST_EN", folded):
        return False
    for m in _pattern("_LIST_EN").finditer(text):
        noun = m.group("noun")
        if noun and noun.casefold() in _NOT_PLURAL:
            continue
        return True
    return False


def query_intent(text: str) -> Intent:
    """The intent of a free-text query (both languages, mixed text too)."""
    if not text:
        return Intent()
    folded = text.casefold()
    return Intent(listing=_search("_LIST_ZH", text, folded) or _is_list_en(text, folded),
                  when=_search("_TIME_ZH", text, folded) or _search("_TIME_EN", text, folded),
                  relation=query_relation(text, folded))


def query_relation(text: str, folded: str | None = None) -> str | None:
    """The relation a question asks along, if it names one: an effect ("what did the
    outage lead to", "导致了什么") before a cause (both say "lead to"/"导致"), then a cause
    ("why", "what caused", "为什么"), then what came next ("what happened next", "之后呢")."""
    folded = text.casefold() if folded is None else folded
    for names, rel in ((("_EFFECT_ZH", "_EFFECT_EN"), "CAUSES"),
                       (("_CAUSE_ZH", "_CAUSE_EN"), "CAUSED_BY"),
                       (("_NEXT_ZH", "_NEXT_EN"), "TEMPORAL_NEXT")):
        if any(_search(n, text, folded) for n in names):
            return rel
    return None
