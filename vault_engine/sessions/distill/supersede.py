"""The latest value wins: a card from a later session that gives a new value for what an older
card says supersedes it — the old claims get `status: superseded` and `valid_until` (the new
session's time), and the new card a SUPERSEDES link to the old one.

Two statements are about the same thing when they share an **anchor** and a **change** is
visible — never on word overlap alone, so two facts that merely sound alike both stay:

- **a config value**: the same key (`max_connections`, `maxmemory`) with another number after
  it — `max_connections` 200 → 300 … `max_connections = 500`;
- **a date moved**: an entity or noun in common, and the new date says where it moved from,
  which is the old card's date — "PG 16 升级 5 月 16 日" … "push it from May 16 to May 23";
- **an old value named as gone**: a noun in common, and the new text says the old value is
  gone ("不是上午 10 点了", "老的漕溪北路那个作废", "no longer X", "instead of X") while the old
  card holds it — 交接 周一上午 10 点 → 周一下午 2 点;
- **a slot with a new value**: the same date span or a common noun in common (not a name or
  part of one, not a verb: 地址, not 华信证券 or 保留), a change cue (新地址, 换班, 改成, moved,
  changed …) next to it and other values — 快递地址 … 新地址：张杨路 1500 弄.

Card types must be compatible for these: facts, events and decisions among themselves; a
preference or an instruction only with its own kind.

Past these, the general rule (changes.py): **the same subject** (an identifier, a system or a
proper name, folded so `dwd.user_events` = `dwd_user_events`, k8s = Kubernetes; from the turn
when the statement names none), **a change cue** in the new statement in either language,
**a value of the same kind that differs** next to it (a clock time, a date, a duration, a
size, a count, a person, an address …) and **the same slot** (the old value named again, or a
word both say it of). What changed is the value, whatever type each card got, so facts,
events, decisions, preferences and instructions may supersede each other under it.

Gotchas and patterns are never superseded. Only cards first seen in an earlier session are.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from vault_engine.store.model import Card
from vault_engine.text import cues
from vault_engine.text.entities import find_entities, normalise_terms
from vault_engine.text.names import chinese_names, english_person_names
from vault_engine.text.tokens import tokenize
from vault_engine.text.when import mentions

from .changes import Said, subjects, value_change
from .model import CardDraft

FAMILY = {"fact": "state", "event": "state", "decision": "state", "gotcha": "gotcha",
          "preference": "preference", "instruction": "instruction", "pattern": "pattern"}
_CHANGE_RE = re.compile(
    r"改成|改为|改到|调到|调成|换成|换班|改值|推迟|提前到|延期|挪到|不是[^，。]{1,14}了|作废|停用|新地址|"
    r"改了|变更为|"
    r"(?i:\bmov(?:ed|ing)\b|\bchanged?\b|\bswitched\b|\binstead\b|\bno\s+longer\b|\bis\s+now\b|"
    r"\bare\s+now\b|\bpush(?:ed)?\b[^.]{0,20}\bfrom\b|\breplac(?:ed|es)\b|\bupdated\s+to\b)")
_OLD_NAMED_RE = re.compile(
    r"不是([^，。；]{1,14})了|老的([^，。；]{1,14}?)(?:那个|那边)?(?:作废|不用了|停用)|原来的([^，。；]{1,14})|"
    r"(?i:\bno\s+longer\s+([\w:. -]{2,30})|\binstead\s+of\s+([\w:. -]{2,30})|\bfrom\s+([\w:. -]{2,20}?)\s+to\b)")
_NUMBER_RE = re.compile(r"\d+(?:[.:]\d+)?")
_KEY_VALUE_RE = re.compile(r"`?([a-z][a-z0-9]*(?:[_.][a-z0-9]+)+)`?([^，。；\n]{0,24})")
_SPAN_RE = re.compile(r"\d{1,2}/\d{1,2}\s*[–—~-]\s*\d{1,2}/\d{1,2}|\d{1,2}\s*月\s*\d{1,2}\s*[日号]")
GENERIC_NOUNS = frozenset("""时候 时间 问题 事情 东西 方面 情况 地方 部分 内容 结果 原因 办法 方案 这个
那个 一下 一个 大家 我们 你们 他们 今天 明天 现在 以后 之前 之后 所有 系统 服务 代码 文档 还有 记一下
安排 确认 需要 可以 发现 觉得 知道 告诉 看看 处理 准备 开始 继续 已经 帮忙 提醒 一起""".split())


@dataclass(frozen=True)
class Supersession:
    draft: CardDraft
    old: Card
    claim_ids: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class _Facts:
    text: str
    keys: dict[str, tuple[str, ...]]  # config key → the numbers after it
    entities: frozenset[str]
    nouns: frozenset[str]
    slots: frozenset[str]  # common nouns only (地址, 交接时间): what a value can be of
    spans: frozenset[str]
    values: frozenset[str]
    tokens: frozenset[str]


@lru_cache(maxsize=4096)
def _facts(text: str) -> _Facts:
    from vault_engine.text.words import _segmenter

    norm = normalise_terms(text)
    keys: dict[str, tuple[str, ...]] = {}
    for m in _KEY_VALUE_RE.finditer(text):
        numbers = tuple(_NUMBER_RE.findall(m.group(2)))
        if numbers:
            keys.setdefault(m.group(1), numbers)
    entities = frozenset(e.name.casefold() for e in find_entities(norm))
    nouns, slots = set(), set()
    for word, tag in _segmenter().tag(re.sub(r"`[^`]*`", " ", text), True):
        if len(word) >= 2 and tag[:1] in ("n", "v") and tag != "nr" and \
                re.fullmatch(r"[\u4e00-\u9fff]+", word) and word not in GENERIC_NOUNS \
                and not _CHANGE_RE.search(word) and not cues.hits(word):
            nouns.add(word)  # the things a statement is about (交接, 地址), not its cue words
            if tag in ("n", "vn", "ng"):
                slots.add(word)  # not a name (华信, 西安: the subject) nor a verb (保留)
    spans = frozenset(re.sub(r"\s+", "", m.group(0)).replace("—", "–").replace("-", "–")
                      for m in _SPAN_RE.finditer(text))
    people = set(chinese_names(text)) | set(english_person_names(text))
    values = set(_NUMBER_RE.findall(text)) | people | {
        m.group(0) for m in re.finditer(r"[\u4e00-\u9fff]{2,6}(?:路|街|弄|号)", text)}
    named = subjects(text)  # 证券 of 华信证券 names the subject; it is no slot
    slots = {w for w in slots if not any(w in n for n in named)}
    return _Facts(text, keys, entities, frozenset(nouns), frozenset(slots), spans, frozenset(values),
                  frozenset(tokenize(norm)))


def _card_text(card: Card) -> str:
    live = [c.text for c in card.claims if c.status not in ("superseded", "refuted")]
    return card.title + "\n" + "\n".join(live)


def _compatible(a: str, b: str) -> bool:
    """States (facts, events, decisions) among themselves, preferences and instructions with
    their own kind; causes, traps and patterns are not values and are never superseded."""
    family = FAMILY.get(a, a)
    return family == FAMILY.get(b, b) and family not in ("gotcha", "pattern")


def _same_day(a: dt.datetime | None, b: dt.datetime | None, tz: dt.tzinfo) -> bool:
    return a is not None and b is not None and a.astimezone(tz).date() == b.astimezone(tz).date()


def _holds_values(card_type: str) -> bool:
    return FAMILY.get(card_type, card_type) in ("state", "preference", "instruction")


def why_superseded(new_text: str, new_type: str, old: Card, when: dt.datetime | None,
                   tz: dt.tzinfo, *, old_when: dt.datetime | None = None, new_context: str = "",
                   old_context: str = "") -> str | None:
    """Why the card `old` is superseded by a new statement (None: it is not). `when`: when
    the new statement was said; `old_when`: when the old card's session was; the contexts:
    the turns each was said in (for a subject the statement itself does not name)."""
    if _compatible(new_type, old.type or ""):
        reason = _by_lexicon(new_text, old, when, tz)
        if reason is not None:
            return reason
    if not (_holds_values(new_type) and _holds_values(old.type or "")):
        return None
    return value_change(Said(new_text, when, new_context),
                        Said(_card_text(old), old_when, old_context))


def _by_lexicon(new_text: str, old: Card, when: dt.datetime | None,
                tz: dt.tzinfo) -> str | None:
    """The four phrasings of the module docstring: a config key, a date moved from the old
    one, an old value named as gone, a slot with a new value."""
    new, prev = _facts(new_text), _facts(_card_text(old))
    for key, numbers in new.keys.items():
        if key in prev.keys and set(numbers) != set(prev.keys[key]) and \
                numbers[-1] not in prev.keys[key]:
            return f"{key}: {prev.keys[key][-1]} → {numbers[-1]}"
    shared = (new.entities & prev.entities) | (new.nouns & prev.nouns)
    if when is not None:
        for m in mentions(new_text, when):
            if m.was is not None and shared and any(
                    _same_day(m.was, c.valid_from, tz) for c in old.claims) or (
                    m.was is not None and shared and any(
                        _same_day(m.was, x.when, tz) for c in old.claims
                        for x in mentions(c.text, when) if x.when)):
                return f"moved from {m.was.astimezone(tz).date().isoformat()}"
    if not _CHANGE_RE.search(new_text):
        return None
    differs = bool(new.values - prev.values)
    # naming the old value as gone is strict enough to let plain words be the anchor
    words = shared or (new.tokens & prev.tokens) - set(tokenize(" ".join(
        m.group(0) for m in _OLD_NAMED_RE.finditer(new_text))))
    for gone in _OLD_NAMED_RE.finditer(new_text):
        named = next(g for g in gone.groups() if g).strip()
        if len(named) >= 2 and re.sub(r"\s+", "", named) in re.sub(r"\s+", "", prev.text) and \
                words:
            return f"the old value {named!r} is gone"
    if differs and new.spans & prev.spans:
        return f"a new value for {sorted(new.spans & prev.spans)[0]}"
    for noun in sorted(new.slots & prev.slots):
        if _valued(noun, new_text, new.values - prev.values) and \
                _valued(noun, prev.text, prev.values - new.values) and _changed_near(noun, new_text):
            return f"a new value for {noun}"
    return None


def _clauses_with(word: str, text: str) -> list[str]:
    from vault_engine.text.segment import clauses, sentences

    out = []
    for s in sentences(text):
        parts = clauses(s.text)
        for i, c in enumerate(parts):
            if word in c:  # a label clause ("新地址：") reaches into the clause after it
                out.append(c + (" " + parts[i + 1] if i + 1 < len(parts) else ""))
    return out


def _valued(word: str, text: str, values: frozenset[str]) -> bool:
    """Does a clause naming `word` hold one of `values`?"""
    return any(v in c for c in _clauses_with(word, text) for v in values)


def _changed_near(word: str, text: str) -> bool:
    return any(_CHANGE_RE.search(c) for c in _clauses_with(word, text)) or bool(
        re.search(rf"新{re.escape(word)}|{re.escape(word)}(?:也)?改", text))


def find_supersessions(cards: Sequence[Card], drafts: Sequence[CardDraft],
                       session_start: dt.datetime | None, session_stem: str,
                       seen_at: dict[str, dt.datetime], tz: dt.tzinfo,
                       turns: Mapping[str, str] | None = None,
                       context_of: Callable[[Card], str] | None = None) -> list[Supersession]:
    """Which existing cards the drafts of one session supersede. `seen_at`: each session's
    start by note stem (a card is older when the sessions it came from started before this
    one); `turns`: this session's turn texts by anchor, `context_of`: the text of the turns
    an old card cites — where a statement that names no subject of its own finds it."""
    out: list[Supersession] = []
    done: set[str] = set()
    for draft in drafts:
        text = draft.title + "\n" + "\n".join(c.text for c in draft.claims)
        mine = _facts(text)
        context = "\n".join(dict.fromkeys(
            (turns or {}).get(a.lstrip("^"), "") for c in draft.claims for a in c.evidence))
        for old in cards:
            if old.path in done or any(session_stem == _stem(s) for s in old.source_sessions):
                continue
            starts = [seen_at[_stem(s)] for s in old.source_sessions if _stem(s) in seen_at]
            if session_start is None or not starts or min(starts) >= session_start:
                continue
            live = [c for c in old.claims if c.status not in ("superseded", "refuted")]
            if not live:
                continue
            theirs = _facts(_card_text(old))
            if not (mine.tokens & theirs.tokens) and not (mine.spans & theirs.spans) and \
                    not (subjects(text) or subjects(context)) & subjects(theirs.text):
                continue
            reason = why_superseded(
                text, draft.type, old, session_start, tz, old_when=min(starts),
                new_context=context,
                old_context=context_of(old) if context_of and not subjects(theirs.text) else "")
            if reason is not None:
                out.append(Supersession(draft, old, tuple(c.id for c in live), reason))
                done.add(old.path)
    return out


def _stem(link: str) -> str:
    return str(link).strip().removeprefix("[[").removesuffix("]]").split("|")[0].split("#")[0]
