"""What kind of answer a question wants, read from its words (English and Chinese), so recall
can rank for it: a **list** ("what activities does Melanie do", "which cities has Jon visited",
"张伟都负责哪些系统", "都有什么") wants one memory per place the answer is spread over; a
**time** question ("when did …", "how long ago …", "什么时候", "哪天", "多久以前") wants the
memories that say when. Pure functions over the query text; nothing is loaded.

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


@record(frozen=True)
class Intent:
    """What kind of answer a question wants."""

    listing: bool = False  # the answer is a list, spread over several memories
    when: bool = False  # the question asks for a time, a date or how long ago


# words or characters one of the patterns needs; a query with none of them skips it
_GATES = {
    "_LIST_EN": ("what", "which", "kind", "type", "sort", "how many", "all ", "list", "every",
                 "ways"),
    "_LIST_ZH": tuple("哪都几多列所分"),
    "_TIME_EN": ("when", "date", "day", "year", "month", "time", "week", "how long", "since",
                 "ago"),
    "_TIME_ZH": tuple("时候何哪几多日"),
}
_SOURCES = {"_LIST_EN": _LIST_EN, "_LIST_ZH": _LIST_ZH, "_TIME_EN": _TIME_EN,
            "_TIME_ZH": _TIME_ZH}


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
                  when=_search("_TIME_ZH", text, folded) or _search("_TIME_EN", text, folded))
