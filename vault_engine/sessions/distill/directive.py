"""Preference or instruction? The user's standing wishes weighed by what they are about, not
by which cue word comes first.

Both say how things should go from now on; they differ in whom they serve (docs/distill.md):

- a **preference** is how the user likes to be served — the language, format, length and tone
  of answers (以后回答我的问题都用简体中文, 能用表格说清楚的就用表格, answer in Chinese), how and
  when they are reached or booked (提醒我的事用微信发, 周一上午别给我约会, window seat please),
  what they like and dislike (我们团队不喜欢这种命令的语气);
- an **instruction** is a duty laid on the agent or a rule of the work — a standing order
  (务必 一律 必须 每次 规矩 · must, always, every time, a standing rule for you), a reminder at
  a time (到期前 30 天提醒我, remind me a day before), a check before an action (上线前一定要…).

The weighing (`directive`): a liking word (喜欢 偏好 · I prefer) makes a preference unless a
standing order is given too; a standing order or a timed reminder makes an instruction unless
the order is about how the user's own answers look (每次回答我都用中文); a weaker standing
mark (以后都, 都要, 所有…都, from now on) is an instruction unless the clause is about the user
as the one served, the look of an answer or the user's own life, which make it a preference.
Consequences (所以…, so …) never count: "所以从库每删一行都要全表扫" describes, it does not order.
Words in quotation marks are mentioned, not said (`text.mood.mask_mentions`).
"""

from __future__ import annotations

import re

from vault_engine.text import cues, mood
from vault_engine.text.segment import clauses

_CONSEQUENCE_RE = re.compile(r"(?i)^\s*(?:所以|因此|于是|结果|导致|以至于|so\b|which\b|therefore\b|"
                             r"hence\b|thus\b)")


# an order after "so": "so page me only for production incidents", "所以别在周五发版"
_ORDER_AFTER_RE = re.compile(r"(?i)^\s*(?:所以|因此|于是|so|therefore|hence)\s*(?:[,，]\s*)?(?:请|别|不要|记得|"
                             r"一定|务必|以后|please\b|don't\b|do\s+not\b|never\b|always\b|"
                             r"(?:page|ping|call|tell|send|give|remind|wake|text|email)\s+(?:me|us)\b)")


def directive_text(text: str) -> str:
    """The clauses that may give an order or a wish: not the consequences after the first,
    unless the consequence is itself an order ("…, so page me only for incidents")."""
    parts = clauses(mood.mask_mentions(text))
    kept = [c for i, c in enumerate(parts)
            if i == 0 or not _CONSEQUENCE_RE.match(c) or _ORDER_AFTER_RE.match(c)]
    return "，".join(kept)


def directive(text: str) -> str | None:
    """"preference", "instruction" or None for the user's own words `text`."""
    body = directive_text(text)
    if not body:
        return None
    hits = cues.hits(body)
    if _describes_every_time(body, hits):
        return None  # "每次都全量往 OSS 传，…超过 timeout 了": what a failing system does each time
    liking = "liking" in hits
    duty = mood.duty(body)
    standing = duty + (1 if "instruction" in hits else 0)
    wish = (2 if liking else 0) + mood.serves_me(body) + mood.style_object(body) + \
        mood.personal(body) + (1 if "preference" in hits else 0)
    if not standing:
        return "preference" if ("preference" in hits or liking) else None
    if liking and duty < 2:
        return "preference"
    if duty >= 2:  # a must about the user's own life or how they are answered is their wish
        return "preference" if (mood.serves_me(body) and mood.style_object(body) or mood.personal(body)) \
            and not _reminder(body) else "instruction"
    return "preference" if wish >= 2 else "instruction"


_MODAL_RE = re.compile(r"(?i)你|以后|要(?![\s\d一二三四五六七八九十几两半])|得(?:先|要|把)|请|记得|必须|务必|别|不要|"
                       r"不能|"
                       r"\b(?:you|must|should|please|make\s+sure)\b")


def _describes_every_time(body: str, hits: dict[str, list[str]]) -> bool:
    """每次 / every time with a failure and no one told to do anything describes, not orders."""
    orders = hits.get("instruction", [])
    return bool(orders) and all(re.match(r"(?i)每次|every\s+time|each\s+time", w) for w in orders) \
        and "error" in hits and not _MODAL_RE.search(body)


def _reminder(text: str) -> bool:
    return bool(re.search(r"(?i)提醒|\bremind", text))
