"""Does a sentence say *when* — a date, a day relative to when it was said, or how long ago or
for how long? English and Chinese. Recall ranks such turns up for a time question ("when did
Caroline go to the support group?" is answered by "I went to a support group yesterday").
Compile time only; one regex pass per turn."""

from __future__ import annotations

import re

_NUM_EN = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|few|couple\s+of|several|many|\d+)"
_UNIT_EN = r"(?:days?|nights?|weeks?|weekends?|months?|years?|decades?|hours?)"
_DAY_EN = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MONTH_EN = (r"(?:january|february|march|april|june|july|august|september|october|november|"
             r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)")
_EN = re.compile(
    rf"(?ix)\b(?:yesterday|today|tonight|tomorrow|recently|lately|earlier\s+this\s+\w+"
    rf"|the\s+other\s+day|(?:last|next|this|past|coming|previous)\s+(?:{_UNIT_EN}|{_DAY_EN}|"
    rf"summer|winter|spring|fall|autumn|night|morning|evening|time)"
    rf"|{_NUM_EN}\s+{_UNIT_EN}\s+(?:ago|back|now|later|before|after|earlier)"
    rf"|(?:for|in|over|since|about|almost|nearly)\s+(?:the\s+)?(?:past\s+|last\s+)?{_NUM_EN}\s+{_UNIT_EN}"
    rf"|since\s+(?:\d{{4}}|{_MONTH_EN}|i\s+was|high\s+school|college|childhood)"
    rf"|(?:in|since|back\s+in|during)\s+(?:19|20)\d\d|(?:19|20)\d\d-\d\d-\d\d"
    rf"|on\s+{_DAY_EN}|{_DAY_EN}\s+(?:morning|afternoon|evening|night)"
    rf"|(?:in|on|by|until|early|late|mid)\s+{_MONTH_EN}|{_MONTH_EN}\s+\d{{1,2}}(?:st|nd|rd|th)?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH_EN}|may)|may\s+\d{{1,2}}(?:st|nd|rd|th)?"
    rf"|ago)\b")
_NUM_ZH = r"(?:[0-9０-９]+|[一二两三四五六七八九十半几]+)"
_ZH = re.compile(
    rf"(?:大前天|前天|昨天|昨晚|昨夜|今天|今晚|今早|明天|明早|明晚|后天|大后天|刚才|最近|上周|下周|本周|"
    rf"这周|上个?星期|下个?星期|上个?月|下个?月|这个月|本月|去年|今年|明年|前年|周末|"
    rf"(?:周|星期|礼拜)[一二三四五六日天]|{_NUM_ZH}\s*(?:天|周|个?星期|个?月|年|小时)(?:前|以前|之前|后|以后|了|多)|"
    rf"{_NUM_ZH}\s*月\s*{_NUM_ZH}\s*[日号]|{_NUM_ZH}\s*月份|[0-9]{{4}}\s*年|\d{{1,2}}/\d{{1,2}}|"
    rf"\d{{1,2}}\s*[点时]|[一二三四五六七八九十]{{1,3}}点)")


def says_when(text: str) -> bool:
    """True when the text names a date or a time, relative or absolute, or a duration."""
    return bool(text) and bool(_EN.search(text) or _ZH.search(text))
