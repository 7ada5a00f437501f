"""Typed values in a statement, Chinese and English alike, each in one written form — what a
later statement has to change for it to replace an earlier one ("the latest value wins",
sessions/distill/supersede.py) — and the words that say a value was changed.

Kinds (`Value.kind`) and their one form (`Value.value`):

- **clock** — a time of day, 24-hour: "02:00", "下午 2 点" and "2 pm" → 14:00, a daily cron
  schedule `30 3 * * *` → 03:30;
- **date** — a day said or resolved against when it was said ("9 月 2 日", "下周三",
  "May 23", "2026-09-02") → 2026-09-02; a time of day alone gives no date;
- **duration** — a number with a unit of time, in seconds: "90 天", "90 days", "INTERVAL 90
  DAY", "30 分钟", "4.8s"; in "from 90 to 180 days" / "从 7 天改成 3 天" / "90 → 180 days" the
  first number takes the unit of the second. "3 天前" and "2 days ago" are dates, not this;
- **size** (bytes), **share** (%), **money**, **cores**, **count** (a number of people,
  machines, replicas, pods) — a number with a unit of its kind;
- **person** — a person's name (the on-call, an owner);
- **address** — a street address ("张杨路 1500 弄", "12 Baker Street").

`change_cues(sentence)` finds the words that say a value was changed, in either language:
moved / raised / lowered / changed / switched / rescheduled / postponed / pushed / slipped to /
now … / taking over / instead / no longer / from X to Y / new address, new launch date; 改到 调到
改成 推迟 推到 延到 提前 挪到 改期 顺延 接替 从…改成 不再 不是…了 新地址.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

from .names import chinese_names, english_person_names
from .when import clock_of, cn_number, mentions

_NUM = r"\d+(?:\.\d+)?|[一二两三四五六七八九十百]+"
# unit → (kind, factor to the kind's base: seconds, bytes, 1)
_TIME_UNITS: dict[str, float] = {
    "天": 86400, "day": 86400, "days": 86400, "d": 86400,
    "小时": 3600, "个小时": 3600, "hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600, "h": 3600,
    "分钟": 60, "minute": 60, "minutes": 60, "min": 60, "mins": 60, "m": 60,
    "秒": 1, "秒钟": 1, "second": 1, "seconds": 1, "sec": 1, "secs": 1, "s": 1,
    "毫秒": 0.001, "ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "周": 604800, "个星期": 604800, "星期": 604800, "week": 604800, "weeks": 604800, "w": 604800,
    "个月": 2592000, "month": 2592000, "months": 2592000,
    "年": 31536000, "year": 31536000, "years": 31536000, "y": 31536000,
}
_OTHER_UNITS: dict[str, tuple[str, float]] = {
    "kb": ("size", 1e3), "mb": ("size", 1e6), "gb": ("size", 1e9), "tb": ("size", 1e12),
    "pb": ("size", 1e15), "ki": ("size", 1024), "mi": ("size", 1024 ** 2),
    "gi": ("size", 1024 ** 3), "ti": ("size", 1024 ** 4), "kib": ("size", 1024),
    "mib": ("size", 1024 ** 2), "gib": ("size", 1024 ** 3), "tib": ("size", 1024 ** 4),
    "g": ("size", 1e9), "t": ("size", 1e12),
    "%": ("share", 1), "percent": ("share", 1),
    "元": ("money", 1), "块": ("money", 1), "块钱": ("money", 1), "美元": ("money", 1),
    "usd": ("money", 1), "cny": ("money", 1), "rmb": ("money", 1),
    "核": ("cores", 1), "cores": ("cores", 1), "core": ("cores", 1), "vcpu": ("cores", 1),
    "vcpus": ("cores", 1),
    "人": ("count", 1), "个人": ("count", 1), "台": ("count", 1), "个副本": ("count", 1),
    "个节点": ("count", 1), "replicas": ("count", 1), "replica": ("count", 1),
    "pods": ("count", 1), "pod": ("count", 1), "个 pod": ("count", 1), "nodes": ("count", 1),
    "people": ("count", 1), "workers": ("count", 1), "个": ("count", 1),
}
# single Latin letters count only written onto the number ("90d", "4.8s", "16G")
_ATTACHED_ONLY = frozenset({"d", "h", "m", "s", "w", "y", "g", "t"})
_UNIT_RE = re.compile(
    rf"(?<![A-Za-z0-9_.:/-])({_NUM})\s*("
    + "|".join(re.escape(u) for u in sorted({*_TIME_UNITS, *_OTHER_UNITS}, key=len, reverse=True))
    + r")(?![A-Za-z])", re.I)
_NOT_DURATION_AFTER = re.compile(r"^\s*(?:前|以前|之前|后|以后|之后|ago\b|later\b|内\b)", re.I)
# "from 90 to 180 days", "从 7 天改成 3 天", "90 → 180 days", "90-180 天"
_CARRY_RE = re.compile(
    rf"(?i)(?:\bfrom\s+|从\s*)?(?<![A-Za-z0-9_.:])({_NUM})\s*(?:\bto\b|到|改成|改为|调到|调成|变成|增加到|提高到|降到|"
    rf"→|->|=>)\s*({_NUM})\s*([A-Za-z\u4e00-\u9fff%]+)")
_CRON_RE = re.compile(r"(?<![\d*/,-])(\d{1,2})\s+(\d{1,2})\s+\*\s+\*\s+\*(?!\s*\*)")
_ADDRESS_RE = re.compile(
    r"[\u4e00-\u9fff]{1,8}(?:路|街|大道|巷)\s*\d+\s*(?:弄|号)(?:\s*\d+\s*(?:号楼?|室|栋))*"
    r"|\b\d{1,5}\s+(?:[A-Z][a-z]+\s+){1,3}(?:Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Boulevard|"
    r"Blvd|Drive|Dr|Way)\b\.?")

CHANGE_RE = re.compile(
    r"改到|改成|改为|改期|调到|调成|调整到|调整为|换成|换到|换班|改值|推迟|推后|延后|延期|提前到|提前了|"
    r"挪到|推到|延到|拖到|改在|改定|顺延|不再|不是[^，。；]{1,14}了|作废|变成|变更为|更新为|升到|降到|扩到|扩容到|缩到|缩容到|"
    r"加到|减到|提高到|降低到|增加到|减少到|涨到|接替|新(?:的)?(?:地址|号码|电话|手机号|邮箱|地点|时间)|从[^，。；]{1,16}(?:改|调|降|提|涨|扩|换|挪|推迟|延)"
    r"(?:到|成|为)|现在(?:改|是|换|定|调)|"
    r"(?i:\bmov(?:ed|es|ing)\b|\bchang(?:ed|es|ing)\b|\bswitch(?:ed|es|ing)?\b|\braised?\b|"
    r"\braising\b|\blower(?:ed|ing)?\b|\bincreas(?:ed|es|ing)\b|\bdecreas(?:ed|es|ing)\b|"
    r"\breduc(?:ed|es|ing)\b|\bbump(?:ed|ing)?\b|\bresched\w*|\bpostpon\w*|\bdelay(?:ed|ing)\b|"
    r"\bpush(?:ed|ing)?\s+(?:it\s+|them\s+)?(?:back|out|to|from)\b|\bbrought\s+forward\b|"
    r"\bextend(?:ed|ing)\b|\bshorten(?:ed|ing)\b|\bupdated\s+to\b|\binstead\b|\bno\s+longer\b|"
    r"\breplac(?:ed|es|ing)\b|\bswapp?(?:ed|ing)\b|\btak(?:es|ing)\s+over\b|\btook\s+over\b|"
    r"\b(?:is|are)\s+now\b|\bnow\s+(?:runs?|starts?|is|are|at|on|uses?|points?|lives?|set)\b|"
    r"\bslip(?:s|ped|ping)?\s+(?:to|by|back)\b|\bnow\s+(?:planned|scheduled|set|due|expected)\b|"
    r"\bnew(?=\s+(?:[\w-]+\s+)?(?:address|number|phone|email|location|time|date|day|deadline)\b)|"
    r"\bfrom\s+\S{1,20}\s+to\b)")


@dataclass(frozen=True)
class Value:
    kind: str  # clock | date | duration | size | share | money | cores | count | person | address
    value: str  # the one form: "03:30", "2026-09-02", "7776000", "zhang wei"
    start: int
    end: int
    said: str  # as written


def _number(text: str) -> float | None:
    text = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if text.endswith("百"):
        return cn_number(text[:-1] or "一") * 100.0
    n = cn_number(text)
    return float(n) if n else None


def _form(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:.6g}"


def _unit(word: str) -> tuple[str, float] | None:
    low = word.lower()
    if low in _TIME_UNITS or word in _TIME_UNITS:
        return "duration", _TIME_UNITS.get(low, _TIME_UNITS.get(word, 1))
    return _OTHER_UNITS.get(low) or _OTHER_UNITS.get(word)


def _quantities(text: str) -> list[Value]:
    out: list[Value] = []
    for m in _UNIT_RE.finditer(text):
        number, unit = m.group(1), m.group(2)
        if unit.lower() in _ATTACHED_ONLY and m.group(0) != number + unit:
            continue  # "90 d", "3 m": a letter after a space is no unit
        if unit == "个" and not number.isdigit():
            continue  # 两个方案, 一个问题: a way of speaking, not a count
        kind = _unit(unit)
        n = _number(number)
        if kind is None or n is None:
            continue
        if kind[0] == "duration" and (_NOT_DURATION_AFTER.match(text[m.end():m.end() + 6]) or
                                      unit == "年" and n >= 1000 or
                                      text[max(0, m.start() - 1):m.start()] == "第"):
            continue  # "3 天前" is a date, "2026 年" a year, "第 3 天" an ordinal
        out.append(Value(kind[0], _form(n * kind[1]), m.start(), m.end(), m.group(0)))
    for m in _CARRY_RE.finditer(text):
        unit = _unit(m.group(3)) or _unit(m.group(3)[:2]) or _unit(m.group(3)[:1])
        n = _number(m.group(1))
        if unit is None or n is None or any(v.start <= m.start(1) < v.end for v in out):
            continue
        out.append(Value(unit[0], _form(n * unit[1]), m.start(1), m.end(1), m.group(1)))
    return out


def _times(text: str, said: dt.datetime | None) -> list[Value]:
    out: list[Value] = []
    anchor = said or dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    for m in mentions(text, anchor):
        clock = clock_of(m.text) if m.granularity == "minute" or m.recurring else None
        if clock is not None:
            out.append(Value("clock", f"{clock[0]:02d}:{clock[1]:02d}", m.start, m.end, m.text))
        if said is not None and m.when is not None and not m.inferred and not m.recurring \
                and m.granularity in ("day", "minute"):
            day = m.when.astimezone(said.tzinfo).date().isoformat()
            out.append(Value("date", day, m.start, m.end, m.text))
    for m in _CRON_RE.finditer(text):
        minute, hour = int(m.group(1)), int(m.group(2))
        if minute < 60 and hour < 24:
            out.append(Value("clock", f"{hour:02d}:{minute:02d}", m.start(), m.end(), m.group(0)))
    return out


@lru_cache(maxsize=4096)
def typed_values(text: str, said: dt.datetime | None = None) -> tuple[Value, ...]:
    """Every typed value in `text`, in order; dates are resolved against `said` (none
    without it)."""
    out = _times(text, said) + _quantities(text)
    for name in [*chinese_names(text), *english_person_names(text)]:
        start = text.find(name)
        out.append(Value("person", name.casefold(), start, start + len(name), name))
    for m in _ADDRESS_RE.finditer(text):
        out.append(Value("address", re.sub(r"\s+", "", m.group(0)).casefold().rstrip("."),
                         m.start(), m.end(), m.group(0)))
    return tuple(sorted(out, key=lambda v: (v.start, v.kind)))


def change_cues(text: str) -> list[re.Match[str]]:
    """The words in `text` that say a value was changed (see the module docstring)."""
    return list(CHANGE_RE.finditer(text))
