"""Dates and times in a sentence, Chinese and English, resolved against the time it was said.

`mentions(text, anchor)` finds every date or time and resolves it in `anchor`'s time zone (the
vault's `[vault] timezone`): "4 月 20 日", "5/25–5/27", "2026-04-20", "下周三上午 10 点",
"明天下午 3 点", "昨晚 20:10", "下周四到周五", "五月份", "May 12 to May 15", "Thursday May 21",
"last Friday", "tomorrow 2 pm", "02:00 Shanghai time". Recurring times ("每周三下午 3 点",
"every Monday") are found and marked recurring; they have no single date.

Weeks start on Monday (下周三 said on a Thursday is the Wednesday six days later; in
"安排一下下周三" the first 下 belongs to 一下, so it is 下周三, not 下下周三); a month and
day without a year take the year of the anchor. A clock time said with a place or zone
("Shanghai time", "北京时间", "UTC") is read in that zone.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from zoneinfo import ZoneInfo

_CN = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
       "八": 8, "九": 9, "十": 10}
WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
WEEKDAYS_EN = {d: i for i, d in enumerate(
    "monday tuesday wednesday thursday friday saturday sunday".split())}
MONTHS_EN = {m: i for i, m in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
ZONES = {"shanghai": "Asia/Shanghai", "beijing": "Asia/Shanghai", "北京": "Asia/Shanghai",
         "singapore": "Asia/Singapore", "tokyo": "Asia/Tokyo", "utc": "UTC", "gmt": "UTC",
         "london": "Europe/London", "berlin": "Europe/Berlin", "new york": "America/New_York",
         "pacific": "America/Los_Angeles", "eastern": "America/New_York"}
NUM = r"(?:\d{1,2}|[一二两三四五六七八九十]{1,3})"
_DAYPART = r"(?:凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|半夜|今晚|昨晚|明晚|今早|明早|晚)"
_ZH_TIME = (rf"(?:{_DAYPART}\s*)?(?:{NUM}\s*[点时](?:\s*(?:半|一刻|{NUM}\s*分?))?|\d{{1,2}}:\d{{2}})"
            r"(?:\s*(?:左右|前|之前|以前|以后|之后))?")
_EN_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_EN_TIME = (r"(?:\d{1,2}(?::\d{2})?\s*[–—-]\s*\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)"
            r"|\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}(?::\d{2})?)")

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}))?")),
    ("zh_date", re.compile(rf"(?:(\d{{4}})\s*年\s*)?({NUM})\s*月\s*({NUM})\s*[日号]"
                           rf"(?:\s*[（(]?\s*(?:周|星期|礼拜)[一二三四五六日天][)）]?)?"
                           rf"(?:\s*(?:到|至|—|–|-|~)\s*(?:({NUM})\s*月\s*)?({NUM})\s*[日号])?"
                           rf"(?:\s*{_ZH_TIME})?")),
    ("slash", re.compile(r"(?<![\w/.:])(\d{1,2})/(\d{1,2})(?:\s*[–—~-]\s*(?:(\d{1,2})/)?(\d{1,2}))?"
                         r"(?![\w/.])")),
    ("zh_rel_week", re.compile(
        rf"(?:((?<!一)下下|下|上|这|本)(?:个)?)?(?:周|星期|礼拜)([一二三四五六日天末])"
        rf"(?:\s*(?:到|至|—|–|-|~)\s*(?:(?:下|上|这|本)?(?:周|星期|礼拜))?([一二三四五六日天]))?"
        rf"(?:\s*{_ZH_TIME})?")),
    ("zh_rel_day", re.compile(rf"(大前天|前天|昨天|昨晚|昨夜|今天|今晚|今早|今夜|明天|明早|明晚|后天|大后天)"
                              rf"(?:\s*{_ZH_TIME})?")),
    ("zh_ago", re.compile(rf"({NUM}|半)\s*(天|日|周|个?星期|个?礼拜|个?月|年)\s*(?:前|以前|之前)")),
    ("en_ago", re.compile(
        r"(?i)\b(a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2}|"
        r"(?:a\s+)?couple\s+(?:of\s+)?)\s*(day|night|week|weekend|month|year)s?\s+ago\b")),
    ("zh_month", re.compile(rf"(?:(下|上|这|本)个月|({NUM})\s*月份?(?!\s*{NUM}\s*[日号]))")),
    ("zh_week", re.compile(r"((?<!一)下下|下|上|这|本)(?:个)?(?:周|星期|礼拜)(?![一二三四五六日天末])")),
    ("quarter", re.compile(r"(?i)(下|上|这|本)(?:个)?季度|\b(last|next|this|coming)\s+quarter\b")),
    ("en_date", re.compile(
        rf"(?i)\b(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+)?"
        rf"(?:({_EN_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?|(\d{{1,2}})(?:st|nd|rd|th)?\s+({_EN_MONTH}))"
        rf"(?:,?\s+(\d{{4}}))?"
        rf"(?:\s*(?:to|until|through|–|—|-)\s*(?:({_EN_MONTH})\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\b)?"
        rf"(?:,?\s+(?:at\s+)?({_EN_TIME})(?:\s*[–—-]\s*{_EN_TIME})?)?")),
    ("en_rel", re.compile(
        r"(?i)\b(yesterday|today|tonight|tomorrow|this\s+(?:morning|afternoon|evening)|earlier\s+today"
        r"|last\s+night|(?:last|next|this|coming)\s+"
        r"(?:week(?:end)?|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b"
        rf"(?:\s+(?:at\s+)?({_EN_TIME}))?")),
    ("en_weekday", re.compile(
        r"(?i)\b(?:on\s+)?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b"
        rf"(?:,?\s+(?:at\s+)?({_EN_TIME}))?")),
    # a bare clock time after the English dates, so "May 16 at 02:00" keeps its day
    ("zh_time", re.compile(_ZH_TIME)),
    ("en_time", re.compile(rf"(?i)\b{_EN_TIME}\b|\b\d{{1,2}}\s*(?:am|pm)\b")),
)
_RECURRING_RE = re.compile(r"(?i)每(?:周|星期|礼拜|天|日|月|年|晚|早)|\bevery\b|\beach\b|\bdaily\b"
                           r"|\bweekly\b|\bmondays\b|\bfridays\b|以后(?:每|都)|双周|隔周|每隔|\bbiweekly\b"
                           r"|\bfortnightly\b")
# a day said outright: 4 月 20 日, 明天, 下周一, Sept 12, tomorrow, next Tuesday — not a bare
# weekday (周四 10 点, on Thursday) nor a clock time alone, whose day is a guess
_DAY_SAID_RE = re.compile(
    r"(?i)\d\s*[月日号]|[今明后昨前]天|(?:下|上|这|本)个?(?:周|星期|礼拜)|\b(?:today|tomorrow|yesterday|tonight)\b"
    r"|\b(?:next|last|this)\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d|\b\d{1,2}(?:st|nd|rd|th)?\s+"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\d{4}-\d{2}-\d{2}")


def day_said(text: str) -> bool:
    """Does this time phrase name its day outright (not a bare weekday or a clock time)?"""
    return _DAY_SAID_RE.search(text) is not None
_ZONE_RE = re.compile(r"(?i)\b(shanghai|beijing|singapore|tokyo|london|berlin|new york|pacific|"
                      r"eastern)\s+time\b|\((?:[A-Z][a-z]+/[A-Za-z_]+)\)|\b([A-Z][a-z]+/[A-Za-z_]+)\b"
                      r"|北京时间|\b(UTC|GMT)\b")


@dataclass(frozen=True)
class TimeMention:
    text: str
    start: int
    end: int
    when: dt.datetime | None  # resolved start, aware (None: recurring or unresolvable)
    until: dt.datetime | None = None  # end of a range
    granularity: str = "day"  # minute | day | week | month | quarter | year
    recurring: bool = False
    was: dt.datetime | None = None  # "moved from X to Y": X (`when` is Y)
    inferred: bool = False  # the day was not said (a clock time alone, a bare weekday)

    def iso(self) -> str | None:
        return self.when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if self.when else None


def cn_number(text: str) -> int:
    text = text.strip()
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if text.startswith("十"):
        return 10 + _CN.get(text[1:], 0)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return _CN.get(tens, 0) * 10 + (_CN.get(ones, 0) if ones else 0)
    return _CN.get(text, 0)


def clock_of(text: str) -> tuple[int, int] | None:
    """Hour and minute of a clock expression, 24-hour ("下午 3 点半" → (15, 30))."""
    return _clock(text)


def _clock(text: str) -> tuple[int, int] | None:
    """Hour and minute of a clock expression ("下午 3 点半", "20:10", "2 pm", "凌晨 2 点")."""
    m = re.search(r"(?i)(\d{1,2})(?::(\d{2}))?\s*[–—-]\s*\d{1,2}(?::\d{2})?\s*(am|pm|a\.m\.|p\.m\.)",
                  text)
    if m:  # "2–4 pm": from 2 pm
        text = f"{m.group(1)}:{m.group(2) or '00'} {m.group(3)}"
    m = re.search(r"(\d{1,2}):(\d{2})", text)
    if m:
        hour, minute = int(m.group(1)), int(m.group(2))
    else:
        m = re.search(rf"({NUM})\s*[点时](?:\s*(半|一刻|{NUM})\s*分?)?", text)
        if m:
            hour = cn_number(m.group(1))
            tail = m.group(2) or ""
            minute = 30 if tail == "半" else 15 if tail == "一刻" else cn_number(tail) if tail else 0
        else:
            m = re.search(r"(?i)(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)", text)
            if not m:
                return None
            hour, minute = int(m.group(1)), int(m.group(2) or 0)
    low = text.lower()
    pm = re.search(r"下午|傍晚|晚上|今晚|昨晚|明晚|夜里|(?<![今明昨])晚|pm|p\.m\.", low)
    if pm and hour < 12:
        hour += 12
    if re.search(r"am|a\.m\.|凌晨|半夜", low) and hour == 12:
        hour = 0
    if re.search(r"中午", low) and hour < 6:
        hour += 12
    if hour > 23 or minute > 59:
        return None
    return hour, minute


def _at(day: dt.date, tz: dt.tzinfo, clock: tuple[int, int] | None) -> dt.datetime:
    h, m = clock or (0, 0)
    return dt.datetime(day.year, day.month, day.day, h, m, tzinfo=tz)


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _week_start(day: dt.date, offset_weeks: int) -> dt.date:
    return day - dt.timedelta(days=day.weekday()) + dt.timedelta(weeks=offset_weeks)


def _zone_in(text: str, tz: dt.tzinfo) -> dt.tzinfo:
    m = _ZONE_RE.search(text)
    if not m:
        return tz
    word = m.group(0)
    name = None
    if m.group(1):
        name = ZONES.get(m.group(1).lower())
    elif "北京时间" in word:
        name = "Asia/Shanghai"
    elif m.group(3):
        name = "UTC"
    else:
        name = word.strip("()")
    try:
        return ZoneInfo(name) if name else tz
    except (KeyError, ValueError):
        return tz


def mentions(text: str, anchor: dt.datetime) -> list[TimeMention]:
    """Every date or time in `text`, resolved against `anchor` (aware; its zone is the
    vault's). Longest match first; overlapping shorter matches are dropped."""
    tz = anchor.tzinfo or dt.UTC
    local = anchor.astimezone(tz)
    found: list[TimeMention] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in PATTERNS:
        for m in pattern.finditer(text):
            a, b = m.span()
            if b - a < 2 or any(x < b and a < y for x, y in taken):
                continue
            zone = _zone_in(text[b:b + 24] + " " + text[max(0, a - 2):b], tz)
            mention = _resolve(kind, m, local.astimezone(zone) if zone is not tz else local,
                               text, zone)
            if mention is None:
                continue
            taken.append((a, b))
            found.append(mention)
    return _in_context(sorted(found, key=lambda x: x.start), text)


_MOVED_RE = re.compile(r"(?i)(?:push|move|postpone|reschedul|delay|bring|pull)\w*\b.{0,24}\bfrom\s*$"
                       r"|(?:推迟|延后|延期|改|挪|调整|提前).{0,6}从\s*$|从\s*$")
_JOIN_RE = re.compile(r"^\s*(?:到|至|—|–|-|~|to|until|till)\s*$", re.I)


def _in_context(found: list[TimeMention], text: str) -> list[TimeMention]:
    """Mentions read together: a weekday right after a date is that date's weekday; a bare
    clock time after a dated mention ("昨晚 20:10 到 20:52") is on that day; a bare weekday
    after "下周…" is in that week; "moved from X to Y" says Y, and was X."""
    out: list[TimeMention] = []
    for m in found:
        prev = out[-1] if out else None
        gap = text[prev.end:m.start] if prev else ""
        if prev and prev.when and m.when and re.fullmatch(
                r"[（(]?(?:周|星期|礼拜)[一二三四五六日天][)）]?", m.text.strip()) and \
                not re.search(r"[。.!?！？]", gap) and any(
                    p.when and p.granularity in ("day", "minute") and
                    p.when.weekday() == WEEKDAYS_ZH[m.text.strip().strip("（()）")[-1]]
                    for p in out):
            continue  # "4 月 12 日生日，周日": the date's own weekday
        if prev and prev.when and m.when and m.granularity == "minute" and \
                re.fullmatch(r"[\d:\s点时半分上下午晚凌晨早中午am.p]+", m.text.strip(), re.I) and \
                _JOIN_RE.match(gap):
            local = prev.when
            day_time = m.when.astimezone(local.tzinfo)
            end = local.replace(hour=day_time.hour, minute=day_time.minute)
            out[-1] = TimeMention(prev.text + gap + m.text, prev.start, m.end, prev.when, end,
                                  prev.granularity, prev.recurring, prev.was)
            continue
        if m.until is not None and m.when is not None and _MOVED_RE.search(text[:m.start]):
            m = TimeMention(m.text, m.start, m.end, m.until, None, m.granularity, m.recurring,
                            m.when)
        if prev and prev.when and m.when and m.granularity == "minute" and \
                re.fullmatch(r"[\d:\s]+", m.text.strip()) and len(gap) <= 30 and \
                prev.granularity == "day" and not re.search(r"[。.!?！？]", gap):
            local = (prev.when if prev.was is None else prev.when).astimezone(m.when.tzinfo)
            m = TimeMention(m.text, m.start, m.end, m.when.replace(
                year=local.year, month=local.month, day=local.day), None, "minute",
                inferred=prev.inferred)
        out.append(m)
    return out


def _resolve(kind: str, m: re.Match[str], local: dt.datetime, text: str,
             tz: dt.tzinfo) -> TimeMention | None:
    a, b = m.span()
    phrase = m.group(0)
    before = text[max(0, a - 4):a]
    recurring = bool(_RECURRING_RE.search(before + phrase))
    today = local.date()
    clock = _clock(phrase) if kind not in ("slash", "zh_month", "zh_week") else None
    gran = "minute" if clock else "day"

    def out(day: dt.date | None, until: dt.date | None = None, granularity: str | None = None,
            ) -> TimeMention | None:
        if recurring:
            return TimeMention(phrase, a, b, None, None, granularity or gran, True)
        if day is None:
            return None
        return TimeMention(phrase, a, b, _at(day, tz, clock),
                           _at(until, tz, None) if until else None, granularity or gran)

    if kind == "iso":
        day = _date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if m.group(4):
            clock = (int(m.group(4)), int(m.group(5)))
        return out(day, granularity="minute" if m.group(4) else "day")
    if kind == "zh_date":
        year = int(m.group(1)) if m.group(1) else today.year
        month, day_n = cn_number(m.group(2)), cn_number(m.group(3))
        day = _date(year, month, day_n)
        until = None
        if m.group(5):
            until = _date(year, cn_number(m.group(4)) if m.group(4) else month, cn_number(m.group(5)))
        return out(day, until)
    if kind == "slash":
        month, day_n = int(m.group(1)), int(m.group(2))
        if not (1 <= month <= 12 and 1 <= day_n <= 31):
            return None
        if re.search(r"[\d.]\s*$", text[max(0, a - 2):a]) or re.match(r"\s*(?:秒|s\b|ms)", text[b:]):
            return None  # a ratio or a rate, not a date
        if not m.group(4) and re.search(r"(?i)(?:比例|占比|约|大约|概率|ratio|about|of|比)\s*$",
                                        text[max(0, a - 6):a]):
            return None
        day = _date(today.year, month, day_n)
        until = None
        if m.group(4):
            until = _date(today.year, int(m.group(3) or month), int(m.group(4)))
            if until is None:
                return None
        return out(day, until)
    if kind == "zh_rel_week":
        rel = {"下下": 2, "下": 1, "上": -1, "这": 0, "本": 0, None: 0}[m.group(1)]
        bare = m.group(1) is None
        if bare:  # a bare weekday: in the week an earlier "下周…" named
            earlier = re.findall(r"((?<!一)下下|下|上)(?:个)?(?:周|星期|礼拜)", text[:a])
            if earlier:
                rel, bare = {"下下": 2, "下": 1, "上": -1}[earlier[-1]], False
        start = _week_start(today, rel)
        day = start + dt.timedelta(days=WEEKDAYS_ZH[m.group(2)])
        until = start + dt.timedelta(days=WEEKDAYS_ZH[m.group(3)]) if m.group(3) else None
        found = out(day, until)
        return replace(found, inferred=True) if found and bare else found
    if kind == "zh_rel_day":
        offsets = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "昨夜": -1, "今天": 0,
                   "今晚": 0, "今早": 0, "今夜": 0, "明天": 1, "明早": 1, "明晚": 1, "后天": 2,
                   "大后天": 3}
        return out(today + dt.timedelta(days=offsets[m.group(1)]))
    if kind in ("zh_ago", "en_ago"):
        return _ago(phrase, a, b, m.group(1), m.group(2), today, tz)
    if kind == "zh_month":
        if m.group(1):
            rel = {"下": 1, "上": -1, "这": 0, "本": 0}[m.group(1)]
            month_index = today.month - 1 + rel
            day = dt.date(today.year + month_index // 12, month_index % 12 + 1, 1)
        else:
            month = cn_number(m.group(2))
            if not 1 <= month <= 12 or not re.search(r"月份|月(?:起|开始|底|初|中|正式)",
                                                     phrase + text[b:b + 3]):
                return None  # "3 月" alone is too often a duration ("三个月")
            day = dt.date(today.year, month, 1)
        return out(day, granularity="month")
    if kind == "zh_week":
        rel = {"下下": 2, "下": 1, "上": -1, "这": 0, "本": 0}[m.group(1)]
        start = _week_start(today, rel)
        return out(start, start + dt.timedelta(days=6), granularity="week")
    if kind == "quarter":
        word = (m.group(1) or m.group(2)).lower()
        step = {"下": 1, "next": 1, "coming": 1, "上": -1, "last": -1}.get(word, 0)
        q = (today.month - 1) // 3 + step
        start = dt.date(today.year + q // 4, q % 4 * 3 + 1, 1)
        end_q = q + 1
        until = dt.date(today.year + end_q // 4, end_q % 4 * 3 + 1, 1) - dt.timedelta(days=1)
        return out(start, until, granularity="quarter")
    if kind == "zh_time":
        if not clock or not re.search(r"[点时:]", phrase):
            return None
        if re.match(r"\s*(?:分钟|小时|秒)", text[b:]) or re.search(r"\d\s*$", text[max(0, a - 1):a]):
            return None
        found = out(today)
        said_day = re.match(r"(?:今晚|昨晚|明晚|今早|明早)", phrase)
        return replace(found, inferred=not said_day) if found else None
    if kind == "en_date":
        month_word = (m.group(1) or m.group(4) or "")[:3].lower()
        month_n = MONTHS_EN.get(month_word)
        day_n = int(m.group(2) or m.group(3))
        if month_n is None or (month_word == "may" and not (m.group(2) or m.group(3))):
            return None
        year = int(m.group(5)) if m.group(5) else today.year
        day = _date(year, month_n, day_n)
        until = None
        if m.group(7):
            end_month = MONTHS_EN.get((m.group(6) or "")[:3].lower(), month_n)
            until = _date(year, end_month, int(m.group(7)))
        clock = _clock(m.group(8)) if m.group(8) else None
        return TimeMention(phrase, a, b, _at(day, tz, clock) if day else None,
                           _at(until, tz, None) if until else None,
                           "minute" if clock else "day", recurring) if day or recurring else None
    if kind == "en_rel":
        word = m.group(1).lower()
        clock = _clock(m.group(2)) if m.group(2) else None
        word = re.sub(r"\s+", " ", word)
        if word in ("yesterday", "today", "tonight", "tomorrow", "this morning", "this afternoon",
                    "this evening", "earlier today", "last night"):
            off = {"yesterday": -1, "tomorrow": 1, "last night": -1}.get(word, 0)
            return TimeMention(phrase, a, b, _at(today + dt.timedelta(days=off), tz, clock),
                               granularity="minute" if clock else "day")
        rel_word, unit = word.split()
        step = {"last": -1, "next": 1, "this": 0, "coming": 1}[rel_word]
        if unit in WEEKDAYS_EN:
            target = WEEKDAYS_EN[unit]
            if rel_word == "last":
                delta = (today.weekday() - target) % 7 or 7
                day = today - dt.timedelta(days=delta)
            elif rel_word == "this":
                day = _week_start(today, 0) + dt.timedelta(days=target)
            else:
                day = _week_start(today, 1) + dt.timedelta(days=target)
            return TimeMention(phrase, a, b, _at(day, tz, clock),
                               granularity="minute" if clock else "day")
        if unit.startswith("week"):
            start = _week_start(today, step)
            return TimeMention(phrase, a, b, _at(start, tz, None),
                               _at(start + dt.timedelta(days=6), tz, None), "week")
        if unit == "month":
            idx = today.month - 1 + step
            return TimeMention(phrase, a, b, _at(dt.date(today.year + idx // 12, idx % 12 + 1, 1),
                                                 tz, None), granularity="month")
        return TimeMention(phrase, a, b, _at(dt.date(today.year + step, 1, 1), tz, None),
                           granularity="year")
    if kind == "en_weekday":
        target = WEEKDAYS_EN[m.group(1).lower()]
        clock = _clock(m.group(2)) if m.group(2) else None
        recurring = recurring or phrase.lower().rstrip().endswith("s") and " " not in phrase.strip()
        if recurring:
            return TimeMention(phrase, a, b, None, None, "day", True)
        day = _week_start(today, 0) + dt.timedelta(days=target)
        if day < today - dt.timedelta(days=3):
            day += dt.timedelta(days=7)  # "on Monday" said on a Friday: the coming Monday
        return TimeMention(phrase, a, b, _at(day, tz, clock), granularity="minute" if clock else "day",
                           inferred=True)
    if kind == "en_time":
        if not clock:
            return None
        found = out(today)
        return replace(found, inferred=True) if found else None
    return None


_EN_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
              "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def _ago(phrase: str, a: int, b: int, count: str, unit: str, today: dt.date,
         tz: dt.tzinfo) -> TimeMention | None:
    """"three days ago", "two weekends ago", "a couple of months ago", "两周前", "半年前": the
    day, week, month or year that far back from when it was said."""
    word = count.strip().lower()
    half = word == "半"
    n = 2 if word.startswith(("couple", "a couple")) else _EN_COUNTS.get(word) or (
        0 if half else cn_number(word))
    if not n and not half:
        return None
    unit = unit.lower().lstrip("个")
    if unit in ("day", "night", "天", "日"):
        return TimeMention(phrase, a, b, _at(today - dt.timedelta(days=n), tz, None))
    if unit in ("week", "weekend", "周", "星期", "礼拜"):
        start = _week_start(today, -n)
        return TimeMention(phrase, a, b, _at(start, tz, None),
                           _at(start + dt.timedelta(days=6), tz, None), "week")
    if unit in ("month", "月"):
        if half:
            return TimeMention(phrase, a, b, _at(today - dt.timedelta(days=15), tz, None))
        idx = today.month - 1 - n
        return TimeMention(phrase, a, b, _at(dt.date(today.year + idx // 12, idx % 12 + 1, 1),
                                             tz, None), granularity="month")
    if half:
        idx = today.month - 1 - 6
        return TimeMention(phrase, a, b, _at(dt.date(today.year + idx // 12, idx % 12 + 1, 1),
                                             tz, None), granularity="month")
    return TimeMention(phrase, a, b, _at(dt.date(today.year - n, 1, 1), tz, None),
                       granularity="year")


def as_said(mention: TimeMention, tz: dt.tzinfo) -> str | None:
    """A resolved mention as a day people read: `2023-05-07`, `week of 2023-05-01`,
    `2023-04`, `2022` — in the vault's zone; None for a recurring one."""
    if mention.when is None or mention.recurring:
        return None
    start = mention.when.astimezone(tz)
    if mention.granularity == "week":
        return f"week of {start.date().isoformat()}"
    if mention.granularity == "month":
        return start.strftime("%Y-%m")
    if mention.granularity == "year":
        return str(start.year)
    if mention.until is not None and mention.until.date() != mention.when.date():
        return f"{start.date().isoformat()} – {mention.until.astimezone(tz).date().isoformat()}"
    return start.date().isoformat()


_ABSOLUTE_RE = re.compile(r"\d{4}\s*[-年/.]\s*\d{1,2}|\b\d{4}\b")


def relative_dates(text: str, said: dt.datetime, tz: dt.tzinfo | None = None,
                   limit: int = 4) -> list[tuple[str, str]]:
    """The dates a turn names that a later reader could not work out alone, resolved against
    when it was said: (as written, the day) — `("yesterday", "2023-05-07")`,
    `("上周六", "2026-04-11")`, `("two weekends ago", "week of 2023-04-24")`. A date already
    written with its year, a recurring time, a bare clock time or weekday (the day is a guess)
    and "today" (the turn's own day) are left out."""
    zone = tz or said.tzinfo or dt.UTC
    local = said.astimezone(zone)
    out: list[tuple[str, str]] = []
    for m in mentions(text, local):
        if m.when is None or m.recurring or m.inferred or _ABSOLUTE_RE.search(m.text):
            continue
        if m.granularity in ("day", "minute") and m.until is None \
                and m.when.astimezone(zone).date() == local.date():
            continue
        value = as_said(m, zone)
        surface = re.sub(r"[\s·;=]+", " ", m.text).strip()
        if value and surface and (surface, value) not in out:
            out.append((surface, value))
    return out[:limit]


def first_date(text: str, anchor: dt.datetime) -> TimeMention | None:
    """The first mention with a resolved date (day or finer), else None."""
    for m in mentions(text, anchor):
        if m.when is not None and m.granularity in ("day", "minute"):
            return m
    return None


def describe(mention: TimeMention, tz: dt.tzinfo) -> str:
    """A mention for people: `2026-04-20 (Mon)`, `2026-04-17 15:00`, `2026-05-12 – 05-15`,
    in the vault's zone, with the zone's name."""
    if mention.when is None:
        return mention.text
    start = mention.when.astimezone(tz)
    if mention.granularity == "quarter":
        return f"{start.year} Q{(start.month - 1) // 3 + 1} {getattr(tz, 'key', None) or start.strftime('%Z')}"
    text = start.strftime("%Y-%m-%d %H:%M" if mention.granularity == "minute" else
                          "%Y-%m" if mention.granularity == "month" else "%Y-%m-%d")
    if mention.granularity in ("day", "minute"):
        text += f" ({start.strftime('%a')})"
    if mention.until is not None:
        text += " – " + mention.until.astimezone(tz).strftime("%Y-%m-%d")
    return f"{text} {getattr(tz, 'key', None) or start.strftime('%Z')}"
