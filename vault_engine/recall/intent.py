"""What kind of answer a question wants, read from its words (English and Chinese), so recall
can rank for it: a **list** ("what activities does Melanie do", "which cities has Jon visited",
"张伟都负责哪些系统", "都有什么") wants one memory per place the answer is spread over; a
**time** question ("when did …", "how long ago …", "什么时候", "哪天", "多久以前") wants the
memories that say when. Pure functions over the query text; nothing is loaded."""

from __future__ import annotations

import re
from dataclasses import dataclass

# English: "what/which <up to two words> <plural noun>" ("what LGBTQ+ events", "which
# cities"), "what are some / all the …", "kinds/types of", "in what ways", "how many", "list",
# "every"; Chinese: 哪些, 都有什么/都有哪些, 几次/多少次, 列出, 所有, 分别, 都…过.
_LIST_EN = re.compile(
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
_LIST_ZH = re.compile(
    r"哪些|都有什么|都有哪些|有哪几|哪几[个种项次样类家位条]|几次|多少次|列出|列一下|所有的|分别|"
    r"都(?:[^，。？?！!]{0,8})过")
_TIME_EN = re.compile(
    r"(?ix)^\W*(?:(?:and|so|but)\s+)?when\b|\bwhen\s+(?:did|does|do|is|was|were|will|has|have|"
    r"are|can|should)\b|\bwhat\s+(?:date|day|year|month|time|week)\b|\bwhich\s+(?:date|day|"
    r"year|month|week|weekend)\b|\bhow\s+long\s+(?:ago|has|have|had|did|since|before|after)\b"
    r"|\bsince\s+when\b|\bhow\s+(?:many\s+)?(?:days|weeks|months|years)\s+(?:ago|since|before|"
    r"after)\b|\bwhat\s+dates\b")
_TIME_ZH = re.compile(
    r"什么时候|啥时候|何时|哪天|哪一天|哪几天|几号|几月|哪个月|哪年|哪一年|几点|什么时间|多久以前|"
    r"多久前|多长时间|多久了|多少天|多少年|几天前|几年前|日期是")


@dataclass(frozen=True)
class Intent:
    listing: bool = False  # the answer is a list, spread over several memories
    when: bool = False  # the question asks for a time, a date or how long ago


def _is_list_en(text: str) -> bool:
    for m in _LIST_EN.finditer(text):
        noun = m.group("noun")
        if noun and noun.casefold() in _NOT_PLURAL:
            continue
        return True
    return False


def query_intent(text: str) -> Intent:
    """The intent of a free-text query (both languages, mixed text too)."""
    if not text:
        return Intent()
    return Intent(listing=bool(_LIST_ZH.search(text)) or _is_list_en(text),
                  when=bool(_TIME_ZH.search(text) or _TIME_EN.search(text)))
