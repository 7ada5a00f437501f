"""A later statement that changes one value of an earlier one — the general rule behind "the
latest value wins" (supersede.py), the same in Chinese, English and across the two.

A new statement changes an old one when all of these hold:

1. **the same subject** — a system, identifier, component or proper name both name, in one
   form: `dwd_user_events_daily`; `dwd.user_events` = `dwd_user_events` = `DWD-User-Events`;
   k8s = Kubernetes; "staging cluster" (the entities and components of text/entities.py,
   folded by `subject_key`); a Chinese place or organisation (西安, 秦川物流, 星河科技: a word
   before 物流/科技/证券 … is a company's name). People are values, not subjects. A statement
   that names no subject of its own takes the subjects of the turn it was said in ("Following
   up on the `dwd.user_events` table … we're raising the TTL from 90 to 180 days"), and so
   does an old card;
2. **a change said** — a change cue in the new statement, in either language (moved, raised,
   rescheduled, from X to Y, now …; 改到 调到 推迟 提前 挪到 改期 从…改成 不再 …; text/values.py);
3. **a value of the same kind that differs** — next to that cue (within `NEAR` characters of
   it, in its sentence) the new statement has a value of a kind the old one also has
   (a clock time, a date, a duration, a size, a share, money, a count, a person, an
   address; text/values.py) and that the old one does not hold;
4. **the same slot** — either that sentence also names the old value ("02:00 Beijing time
   collides … so we moved it to 03:30", "from 90 to 180 days"), or, besides the subject, it
   shares with the old card a word for what the value is of (TTL, 交接, 窗口 ≈ window, 会议 ≈
   开会 ≈ meeting: the glossary's translations count, so a Chinese and an English statement
   can share one). Names of other systems, people, generic verbs (保留, 定, keep, set), time
   words, numbers and the change cue itself are no such word.

With no subject in common, who holds the value anchors it (`held_change`): a role the old
statement gives a person (primary on-call, 负责人) with a person next to the cue and what the
role is of said by both; or a person both name, with a date next to the cue and an event word
next to the date in both (搬家, 体检 ≈ checkup, 上架 ≈ launch). A version (4.8.0) is a subject.

So two different facts about one system stay apart: a different kind of value (the disk
grew to 2 TB; max_connections was 300), or the same kind with nothing in common but the
system (备份保留 7 天 … binlog 保留改成 3 天; a meeting moved … the contract signing moved).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from vault_engine.text.entities import find_components, find_entities, normalise_terms, subject_key
from vault_engine.text.glossary import translations
from vault_engine.text.names import chinese_names, english_person_names
from vault_engine.text.segment import sentences
from vault_engine.text.tokens import tokenize
from vault_engine.text.values import Value, change_cues, typed_values

NEAR = 30  # a changed value sits this close to its change cue (characters)
_PROPER_TAGS = ("ns", "nt", "nz")
# what follows a place or a name in a company's name: 秦川 + 物流 is one subject, 秦川物流
ORG_SUFFIXES = ("物流", "科技", "公司", "集团", "银行", "医院", "大学", "学院", "证券", "保险", "电子",
                "网络", "软件", "信息", "传媒", "地产", "航空", "汽车", "能源", "控股", "实业", "商贸")
# jieba tags of no slot: time, numbers, pronouns, prepositions, conjunctions, particles,
# adverbs, directions, classifiers, adjectives, idioms, interjections; verbs but the
# glossary's (开会, 部署, 回滚) and verbal nouns (vn)
_NOT_SLOT_TAGS = ("t", "m", "r", "p", "c", "u", "d", "f", "q", "a", "b", "l", "i", "e", "y", "o",
                  "z", "v")
GENERIC_EN = """set keep kept make made use used run runs running move moved raise raising lower
change changed switch update updated now start starting started stop say says said agree agreed
team also get put go goes went back today tonight tomorrow yesterday week weekend morning
evening night time day days hour hours minute minutes second seconds month months year years
new old current latest instead longer anymore still follow following up thing way need needs
want wants will would should could please let lets ok okay plan plans per each every daily
nightly weekly one two three first last next since until from to at on in by for of
monday tuesday wednesday thursday friday saturday sunday january february march april may june
july august september october november december shanghai beijing utc gmt zone""".split()
GENERIC_ZH = frozenset("""时候 时间 问题 事情 东西 方面 情况 地方 部分 内容 结果 原因 办法 方案 这个 那个
一下 一个 大家 我们 你们 他们 今天 明天 现在 以后 之前 之后 所有 还有 安排 确认 需要 可以 发现 觉得
知道 告诉 看看 处理 准备 开始 继续 已经 帮忙 提醒 一起 数据 东西 事 点 天 周 月 年 小时 分钟 秒 号
日 第一 第二 第三 最后 另外 顺便 那趟 这趟 临时 不变 地点 每天 每周""".split())


_VERSION_RE = re.compile(r"(?<![\w.])(v?(?!\d{4}\.)\d{1,3}\.\d{1,3}\.\d{1,4}|v\d{1,3}\.\d{1,3})(?![\w.]|\.\d)", re.I)
# roles a person holds — with a person as the value, the role is what changed hands
ROLES = {"on-call": r"on-?call|值班|轮值", "primary": r"\bprimary\b|主值班|一线",
         "secondary": r"\bsecondary\b|二线|副值班|备岗", "owner": r"\bown(?:ers?|s|ed\s+by)\b|\bDRI\b|负责人|牵头人",
         "lead": r"\b(?:tech\s+)?lead\b|组长", "contact": r"对接人|\bpoint\s+of\s+contact\b",
         "reviewer": r"\breviewers?\b|\bapprovers?\b|审批人|评审人"}
_ROLE_RE = {k: re.compile(v, re.I) for k, v in ROLES.items()}
_FROM_RE = re.compile(r"(?i)(?:\bfrom|从)\s*$")


@dataclass(frozen=True)
class Said:
    """A statement, when it was said (its session's start), and the turn(s) it was said in."""

    text: str
    when: dt.datetime | None
    context: str = ""


@lru_cache(maxsize=4096)
def subjects(text: str) -> frozenset[str]:
    """What `text` is about, each in one folded form: systems, identifiers, places and
    organisations — not people, time zones or generic words."""
    from vault_engine.text.words import _segmenter

    people = {n.casefold() for n in [*chinese_names(text), *english_person_names(text)]}
    out = {subject_key(e.name) for e in find_entities(normalise_terms(text))
           if e.kind != "timezone" and e.name.casefold() not in people}
    out.update(subject_key(c) for c in find_components(text))
    out.update(m.group(1).lower() for m in _VERSION_RE.finditer(text))  # a release: 4.8.0, v2.3
    if re.search(r"[\u4e00-\u9fff]", text):
        tagged = _segmenter().tag(re.sub(r"`[^`]*`", " ", text), True)
        for i, (word, tag) in enumerate(tagged):
            if len(word) < 2 or not re.fullmatch(r"[\u4e00-\u9fff]+", word) or word in people:
                continue
            after = tagged[i + 1][0] if i + 1 < len(tagged) else ""
            if after in ORG_SUFFIXES and tag[:1] in ("n", "v", "a") and word not in GENERIC_ZH:
                out.add(word + after)  # 秦川物流, 星河科技: a name and what the company does
            elif tag in _PROPER_TAGS:
                out.add(word)
    return frozenset(x for x in out if x)


def _subjects_of(said: Said) -> frozenset[str]:
    own = subjects(said.text)
    return own if own or not said.context else subjects(said.context)


@lru_cache(maxsize=1)
def _generic_tokens() -> frozenset[str]:
    return frozenset(tokenize(" ".join(GENERIC_EN))) | GENERIC_ZH


@lru_cache(maxsize=4096)
def slot_words(text: str, subject_words: frozenset[str] = frozenset()) -> frozenset[str]:
    """The words of `text` that can say what a value is of, with their glossary
    translations: nouns (and domain verbs the glossary knows, 开会 ≈ meeting), no generic
    verbs, time words, numbers, people, change cues or words of the subject."""
    from vault_engine.text.words import _segmenter

    plain = re.sub(r"`[^`]*`", " ", text)
    for cue in change_cues(plain):
        plain = plain.replace(cue.group(0), " ")
    generic = _generic_tokens()
    words: set[str] = set()
    latin = " ".join(re.findall(r"[A-Za-z][A-Za-z'-]*", plain))
    words.update(t for t in tokenize(latin) if not t.isdigit())
    if re.search(r"[\u4e00-\u9fff]", plain):
        for word, tag in _segmenter().tag(plain, True):
            if not re.fullmatch(r"[\u4e00-\u9fff]{2,}", word):
                continue
            if tag in ("vn", "an") or tag == "v" and translations(word) or \
                    not tag.startswith(_NOT_SLOT_TAGS):
                words.add(word)  # nouns, place words (窗口: s), our users' words (tag "")
    people = {t for n in [*chinese_names(plain), *english_person_names(plain)]
              for t in [n, *tokenize(n)]}
    out: set[str] = set()
    for w in words:
        if w in generic or w in people or w in subject_words or any(w in s for s in subject_words):
            continue
        out.add(w)
        out.update(t for t in translations(w) if t not in generic)
    return frozenset(out)


def _subject_words(keys: frozenset[str]) -> frozenset[str]:
    return frozenset(t for k in keys for t in tokenize(k.replace("_", " "))) | keys


def value_change(new: Said, old: Said) -> str | None:
    """Why `new` changes a value `old` holds ("clock 02:00 → 03:30 (dwd_user_events_daily)"),
    or None. See the module docstring for the four conditions."""
    shared = _subjects_of(new) & _subjects_of(old)
    theirs = typed_values(old.text, old.when)
    kinds_old: dict[str, set[str]] = {}
    for v in theirs:
        kinds_old.setdefault(v.kind, set()).add(v.value)
    if not kinds_old:
        return None
    if not shared:
        return held_change(new, old, theirs, kinds_old)
    old_slot = slot_words(old.text, _subject_words(shared | subjects(old.text)))
    for text, mine, v in _new_values(new, kinds_old):
        before = kinds_old[v.kind]
        named = [o for o in mine if o.kind == v.kind and o.value in before]
        if not named and not old_slot & slot_words(
                text, _subject_words(shared | subjects(text))):
            continue
        was = named[0].said if named else _said_of(theirs, v.kind)
        return f"{v.kind} {was} → {v.said} ({_most_specific(shared)})"
    return None


def _new_values(new: Said, kinds_old: dict[str, set[str]]) -> Iterator[tuple[str, tuple[Value, ...], Value]]:
    """Each sentence of `new` that says a change, with its values and each value that can be
    the new one for a statement holding `kinds_old` (`_changed`)."""
    for sentence in sentences(new.text):
        cues = change_cues(sentence.text)
        if not cues:
            continue
        mine = typed_values(sentence.text, new.when)
        for v in _changed(sentence.text, mine, kinds_old, cues):
            yield sentence.text, mine, v


def _most_specific(keys: frozenset[str]) -> str:
    """An identifier before a system name, a longer name before a shorter one."""
    return max(sorted(keys), key=lambda k: ("_" in k or any(c.isdigit() for c in k), len(k)))


def _near(value: Value, cues: list[re.Match[str]]) -> bool:
    return any(value.start - NEAR <= c.end() and c.start() <= value.end + NEAR for c in cues)


def _said_of(values: tuple[Value, ...], kind: str) -> str:
    return next(v.said for v in values if v.kind == kind)


def _changed(text: str, mine: tuple[Value, ...], kinds_old: dict[str, set[str]],
             cues: list[re.Match[str]]) -> list[Value]:
    """The values of one sentence that can be the new value for the old statement: of a kind
    it holds, not held by it, next to a change cue — and not the value it changed *from*
    ("from 2min to 5min": 2min). When the sentence names what the value was, the old
    statement must hold it: "from 2min to 5min" changes no card that never said 2min."""
    was = [v for v in mine if _FROM_RE.search(text[max(0, v.start - 6):v.start])]
    out = []
    for v in mine:
        before = kinds_old.get(v.kind)
        if not before or v.value in before or v in was or not _near(v, cues):
            continue
        if any(w.kind == v.kind for w in was) and not any(
                w.kind == v.kind and w.value in before for w in was):
            continue
        out.append(v)
    return out


def roles(text: str) -> frozenset[str]:
    """The roles `text` names (on-call, primary, owner …), one key each in both languages."""
    return frozenset(k for k, r in _ROLE_RE.items() if r.search(text))


def _around(text: str, v: Value) -> str:
    return text[max(0, v.start - NEAR):v.end + NEAR]


def _sentence_of(text: str, v: Value) -> str:
    return next((s.text for s in sentences(text) if s.start <= v.start < s.end), _around(text, v))


def held_change(new: Said, old: Said, theirs: tuple[Value, ...],
                kinds_old: dict[str, set[str]]) -> str | None:
    """A change with no system in common, anchored on who holds the value:

    - **a role** — a person next to a change cue and a role the old statement gives a person
      ("Wei Ting is taking over as primary on-call for the payments line" … "payment 线的
      primary on-call 是符文博"), and both say what the role is of (payment ≈ 支付);
    - **a person's event** — a date or time next to a change cue and an event word that the
      old statement says next to its own date (搬家 ≈ move, 体检, launch ≈ 上线), and one
      person both name ("搬家改到 5 月 23 号" … "黎佳怡家定了 5 月 16 号搬家")."""
    people = {v.said for v in typed_values(new.text + "\n" + old.text)
              if v.kind == "person" and len(v.said) >= 2}
    common = sorted(p for p in people if p.casefold() in new.text.casefold()
                    and p.casefold() in old.text.casefold())
    names = frozenset(t for p in common for t in [p.casefold(), *tokenize(p)])  # no event word
    role_words = slot_words(" ".join(m.group(0) for r in _ROLE_RE.values()
                                     for t in (new.text, old.text) for m in r.finditer(t)))
    of_what = (slot_words(new.text) & slot_words(old.text)) - role_words
    for text, _mine, v in _new_values(new, kinds_old):
        was = [o for o in theirs if o.kind == v.kind]
        if v.kind == "person" and of_what:
            role = next((r for o in was for r in sorted(
                roles(_around(text, v)) & roles(_sentence_of(old.text, o)))), None)
            if role is not None:
                return f"person {was[0].said} → {v.said} ({role})"
        if v.kind in ("date", "clock") and [p for p in common if p.casefold() != v.value]:
            near = slot_words(_around(text, v))
            for o in was:
                what = sorted(w for w in near & slot_words(_around(old.text, o)) - names
                              if len(w) >= (3 if w.isascii() else 2))  # not "w" of W20
                if what:
                    return f"{v.kind} {o.said} → {v.said} ({common[0]}: {what[0]})"
    return None
