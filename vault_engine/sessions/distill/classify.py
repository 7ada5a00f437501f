"""What kind of memory a sentence holds, in its context: who said it, whether it is the
speaker's own words or pasted material, the list it belongs to, the sentences around it.

The cue lexicons are language (`vault_engine.text.cues`); this module weighs them:

- **the user's own words** may give any type. A label in front wins ("踩过的坑：…",
  "Decision: …", "One preference: …"); then an explicit decision, a confirmed fix, a standing
  instruction, a preference, a cause or trap, a dated event, a fact with a concrete value — in
  that order. A list item with no cue of its own takes its header's ("改进项定下来了：" →
  decisions); items with no cue under a header with none ("时间线：") are one card.
- **one-off tasks** ("帮我把 !482 合一下", "帮我写一段欢迎的话", "can you check …") are not
  instructions or preferences: cues inside a one-off clause are ignored, the clauses around it
  still count ("发版通知走 Slack 的 #release 频道，…，你帮我看看…" is a fact).
- **reasons** ("…，因为…", "since workshops always overrun") do not set the type of the
  sentence they explain; a sentence that only gives a reason ("原因：…") joins the one before.
- **a preference about someone else** ("她喜欢红宝石的鲜奶小方", "he likes …") is a fact.
- **pasted material** (e-mails, tickets, texts, vendor docs, logs, tool output) gives events and
  facts only — never the user's preferences, instructions or decisions (principle 8) — and
  nothing addressed to the AI or the memory ("【给 AI 助手的说明】…", "Note for the memory system").
- **the assistant's words** give causes and traps, decisions it states as made ("We decided
  to …", "we'll go with …"), rules it states (typed `pattern`), fixes it reports as done ("I
  rotated the credentials …") and facts it reports — never suggestions ("建议…", "you could …",
  options), restatements of what the user said ("记下了：…", "Noted: …"), questions or plans.
- **credentials** handed over in a sentence ("数据库密码是 …", "the db password is …") are no
  memory at all.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from vault_engine.store.model import Turn
from vault_engine.text import cues, mood
from vault_engine.text.entities import is_identifier
from vault_engine.text.injection import is_injection
from vault_engine.text.secrets import find_secrets
from vault_engine.text.segment import Sentence, clause_spans, clauses, sentences
from vault_engine.text.titles import strip_filler, weight, word_count
from vault_engine.text.when import TimeMention, day_said, mentions

from .directive import directive

USER_ROLES = ("user", "human")
MIN_WORDS = 3  # a Chinese character counts as a word: "以后别在周五下午发版" is 10
_THIRD_PERSON_RE = re.compile(r"(?:^|[，,；;。\s])(?:她|他|他们|她们|孩子|老人|客户|对方)(?:也|都|很|最|比较)?"
                              r"(?:喜欢|爱|偏好|讨厌|不喜欢|习惯)|(?i:\b(?:she|he|they|my\s+\w+)\s+"
                              r"(?:likes|loves|prefers|hates|enjoys)\b)")
_STRONG_VALUE_RE = re.compile(
    r"\d|#[\w-]+|@[\w-]+|[路弄号室栋座楼](?![\u4e00-\u9fff]{2})|元\b|CNY|¥|\$\d|[\w.+-]+@[\w-]+\."
    r"|`[^`]+`|[一二两三四五六七八九十几半]+\s*(?:天|周|个|次|位|人|小时|分钟|年|月|倍|台|条|套|块)"
    r"|[A-Za-z]+[_.][A-Za-z0-9]"
    r"|(?i:\b(?:two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|fifty|hundred|"
    r"thousand)\s+[a-z]+s\b)")
_REASON_RE = re.compile(r"(?i)^\s*(?:因为|由于|原因(?:是|：|:)|以免|免得|since\b|because\b|as\s+\w+\s+"
                        r"(?:always|never)|so\s+that\b)")
_CONTEXT_OPENERS = re.compile(r"^(?:(?:好|嗯|可以)[。，,]\s*)?(?:就这么定了|就这样|那就|这样的话|then\b|that's\s+why)",
                              re.I)
_REASON_SENTENCE_RE = re.compile(r"(?i)^(?:原因[：:是]|理由[：:是]|因为|the\s+reason\b|because\b)")
_DEIXIS_RE = re.compile(r"(?i)^(?:[^,，。.]{0,20})(?:\bthere\b|那边|那里)")
_IMPERATIVE_EVENT_RE = re.compile(r"(?i)^(?:put|book|schedule|add|move|block|hold)\b|^(?:the\s+)?new\s+(?:[\w-]+\s+)?"
                                  r"(?:date|day|time|deadline|eta)\b|^新的?[\u4e00-\u9fff]{0,6}(?:日期|时间)")
_PLAN_RE = re.compile(r"(?i)^(?:我会|我来|我这边|i'll|i\s+will|let\s+me|we'll\s+(?!go\s+with))")
_DONE_RE = re.compile(r"(?i)\bi\s+(?:fixed|raised|set|rotated|restored|added|enabled|issued|renewed|"
                      r"restarted|moved|re-?ran|cleaned|deleted|increased|wrapped|acknowledg\w*|"
                      r"applied|rolled|changed|updated|replaced)\b|(?:我已经?|已经)(?:把|改|加|重启|回滚)")
_CREDENTIAL_RE = re.compile(
    r"(?i)(?:密码|口令|password|passwd|token|secret|密钥|私钥|api[ _-]?key|private\s+key)"
    r"(?:[^，。,;；\n]{0,12}?(?:是|为|:|=|：|\bis\b)\s*|\s+)`?(?=[^\s，。`]*[\d!@#$%^&*])"
    r"[A-Za-z0-9_@#$%^&*!+=/.:~-]{6,}"
    r"|://[^\s:/@]*:[^\s@/]+@")
_TO_THE_AI_RE = re.compile(
    r"(?i)给\s*AI|AI\s*助手的说明|记忆系统|(?:note|message)\s+(?:for|to)\s+(?:the\s+)?(?:memory|ai|"
    r"assistant|llm|model)|to\s+ai\s+reviewers|as\s+a\s+permanent\s+(?:team\s+)?rule|忽略.{0,6}"
    r"(?:指令|规范|规则)|disregard\s+(?:any|all)")
_CHANGE_FACT_RE = re.compile(r"换班|改值|新地址|作废|不是[^，。]{1,12}了|(?:时间|地址|号码|电话)(?:也)?改(?:了|成|为)")
_LEAD_IN_RE = re.compile(r"[：:]\s*$")
# about the conversation, not a memory: "先跟你约定几件事，以后跟我对话都按这个来"
_META_RE = re.compile(r"约定几件事|(?:对话|聊天|沟通|交流)[^，。]{0,6}按这个来|以下几点|几件事(?:记一下|跟你说)"
                      r"|(?i:\ba\s+few\s+things\b"
                      r"|\bquestions?\s+for\s+you\b)"
                      # a sentence that only announces what follows: "Quick note on how I like to
                      # work with you.", "先说一下我的习惯。", "跟你说几件事。"
                      r"|(?i:^(?:a\s+)?(?:quick|short|small)?\s*(?:note|word|heads[- ]up)s?\s+(?:on|about|"
                      r"regarding)\b[^.!?]{0,60}[.!:]?$)"
                      r"|^(?:先|再)?(?:跟你)?(?:说|讲|交代)(?:一下|几件事|几点|个事|两件事)[^，。]{0,8}[。：:]?$")


@dataclass
class Unit:
    """A sentence of a turn, ready to classify (its context joined where it needs it)."""

    turn: Turn
    sentence: Sentence
    text: str
    index: int  # position among the turn's sentences
    user: bool
    own: bool  # the speaker's own words, not pasted material
    times: list[TimeMention] = field(default_factory=list)
    kind: str | None = None
    label: str | None = None
    consumed: bool = False  # folded into another unit's claim
    before: str = ""  # context prepended to the claim (the sentence this one leans on)
    titled_with_before: bool = False  # "到时候提醒我" names its time only through `before`


def turn_units(turn: Turn, anchor: dt.datetime | None) -> list[Unit]:
    user = turn.role in USER_ROLES
    units: list[Unit] = []
    for s in sentences(turn.text):
        groups = split_groups(s, user, anchor)
        for g, text in enumerate(groups):
            text = without_credentials(text)
            if text:
                units.append(Unit(turn, s, text, len(units), user, s.quoted is None,
                                  mentions(text, anchor) if anchor else []))
                if g and _ANAPHORIC_TIME_RE.match(text):  # "…下个季度升 8.x，到时候提醒我"
                    units[-1].before = groups[g - 1]
                    units[-1].titled_with_before = True
                elif g and _BACK_TIME_RE.search(text):  # "…周二周四居家，线下的会别往这两天排"
                    units[-1].before = groups[g - 1]  # the claim says which days; the title is its own
    return units


_BACK_TIME_RE = re.compile(r"这两天|这几天|那两天|那几天|这段时间|那段时间|(?i:\bthose\s+days\b|\bthat\s+week\b)")
_ANAPHORIC_TIME_RE = re.compile(r"(?i)^\s*(?:到时候|到时|届时|那时候?|到那天|那天|当天|(?:and\s+)?then\b"
                                r"|at\s+that\s+point"
                                r"|when\s+it\s+(?:happens|comes)|on\s+the\s+day)")


def without_credentials(text: str) -> str:
    """The sentence without the clauses that hand over a password, key or token ("数据库密码是
    Xk9#mP2vQ", "the db password is …"): the rest may still be worth keeping."""
    if not (find_secrets(text) or _CREDENTIAL_RE.search(text)):
        return text
    spans = clause_spans(text)
    kept = [text[a:b] for a, b in spans if not (find_secrets(text[a:b]) or
                                                 _CREDENTIAL_RE.search(text[a:b]))]
    out = "".join(kept).strip().rstrip("，,；;：:")
    return out if word_count(out) >= MIN_WORDS else ""


# a sentence that names the one before as the cause or the trap ("根因找到了。", "这是最坑的地方。")
_ANAPHORIC_CAUSE_RE = re.compile(r"(?i)^(?:根因就是这个|原因就是这个|这就是根因|问题就出在这|就是这个原因|"
                                 r"(?:根因|原因|问题)(?:终于|总算)?找到了|找到(?:根因|原因)了|这(?:就)?是(?:最|个|一个)?"
                                 r"坑|这(?:是|就是)(?:最|真)?坑的地方|这(?:就|才)是关键|"
                                 r"that's\s+the\s+(?:root\s+)?cause|that\s+was\s+the\s+(?:root\s+)?cause|"
                                 r"that's\s+why|that's\s+the\s+culprit|that\s+explains\s+it|"
                                 r"that's\s+the\s+(?:gotcha|trap)|mystery\s+solved)")
_STRONG = ("decision", "instruction", "preference", "gotcha", "event", "fix")


def _clause_kind(text: str, sentence: Sentence, user: bool, anchor: dt.datetime | None) -> str | None:
    """The type one clause would have alone, when a cue sets it (else None): the points where
    a sentence changes from one memory to another."""
    probe = Unit(Turn(anchor="t0", index=0, role="user" if user else "assistant", name=None,
                      timestamp=None, text=text, line=0), sentence, text, 0, user, True,
                 mentions(text, anchor) if anchor else [])
    body = strip_filler(text, labels=False)
    if _REASON_RE.match(body):
        return None  # a reason belongs to what it explains
    if _CHANGE_FACT_RE.search(body):
        return "fact"  # a value replaced
    if mood.attribute(body) or mood.assignment(mood.mask_mentions(body)) and not _LIFE_EVENT_RE.search(body) \
            or _names_someone(body) and _NAMING_RE.search(body):
        return "fact"  # 我是讲师, 这几天 DB 的事找张伟
    kind = classify(probe)
    if kind in _STRONG:
        return kind
    if kind == "fact" and _THIRD_PERSON_RE.search(body):
        return "fact"
    return None


_NAMING_RE = re.compile(r"(?:叫|名叫)[\u4e00-\u9fff]{2,3}|(?i:\b(?:named|called)\s+[A-Z])")


def split_groups(sentence: Sentence, user: bool, anchor: dt.datetime | None) -> list[str]:
    """A sentence of the user's own words that says two kinds of thing — "我老公叫周杰，他对芒果
    过敏，订蛋糕的时候不要芒果的" (a fact, then a preference) — cut where the second begins."""
    text = sentence.text
    if not user or sentence.quoted is not None or sentence.item or sentence.table \
            or cues.label(strip_filler(text, labels=False)):
        return [text]
    parts = [text[a:b] for a, b in clause_spans(text)]
    merged: list[str] = []
    for p in parts:  # "新地址：上海市…" stays one clause
        if merged and re.search(r"[：:]\s*$", merged[-1]) and not re.search(r"[，,；;]", merged[-1][-2:]):
            merged[-1] += p
        else:
            merged.append(p)
    if len(merged) < 2:
        return [text]
    groups: list[list[str]] = []
    kinds: list[str | None] = []
    for p in merged:
        k = _clause_kind(p.strip(" ，,；;"), sentence, user, anchor)
        if groups and (mood.points_back(p) or mood.consequence(p.strip(" ，,；;")) and k == "decision"):
            # "…，你给示例的时候也按这个来" stays with "这个"; "…, so we're raising the TTL" with its reason
            groups[-1].append(p)
            kinds[-1] = k or kinds[-1]
            continue
        if groups and k is not None and kinds[-1] is not None and k != kinds[-1] \
                and word_count("".join(groups[-1])) >= 4 and word_count(p) >= 4:
            groups.append([p])
            kinds.append(k)
            continue
        if not groups:
            groups.append([p])
            kinds.append(k)
        else:
            groups[-1].append(p)
            if kinds[-1] is None:
                kinds[-1] = k
    if len(groups) == 1:
        return [text]
    return ["".join(g).strip().rstrip("，,；;") for g in groups]


def active_text(text: str) -> tuple[str, float]:
    """The clauses that set a sentence's type — not filler, not a one-off request, not a
    reason — and the share of the sentence the one-off requests take (none under a standing
    mark: "以后…", "whenever you …")."""
    keep: list[str] = []
    oneoff, total = 0.0, 0.0
    standing = mood.standing(text)
    for c in clauses(strip_filler(text, labels=False)):
        w = weight(c, words_only=True)
        total += w
        if not standing and cues.has(c, "oneoff") and not cues.has(c, "instruction"):
            oneoff += w
            continue
        if not weight(c, words_only=True) and keep == [] and oneoff:
            continue  # a URL or code right after a request belongs to it
        if keep and _REASON_RE.match(c):
            continue
        keep.append(c)
    joiner = "，" if re.search(r"[\u4e00-\u9fff]", text) else ", "
    return joiner.join(keep), (oneoff / total if total else 0.0)


def has_values(text: str) -> bool:
    if _STRONG_VALUE_RE.search(text):
        return True
    return any(is_identifier(m.group(0)) for m in re.finditer(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+", text))


def dated(unit: Unit, loose: bool = False) -> bool:
    """Said with a resolved date (a day, a time, a month). `loose` also takes a week or a
    quarter and a clock time whose day is the day it was said ("since the 16:05 deploy",
    "fired at 3am"): enough for a report of what happened."""
    grains = ("day", "minute", "month", "week", "quarter") if loose else ("day", "minute", "month")
    return any(m.when is not None and not m.recurring and (loose or not m.inferred)
               and m.granularity in grains for m in unit.times)


def recurring(unit: Unit) -> bool:
    return any(m.recurring for m in unit.times)


def _content_words(text: str, kind: str) -> int:
    """Words left once the cue words of `kind` are taken out: "踩过的坑又一个" has 4."""
    found = cues.hits(text).get(kind, [])
    for word in found:  # a cue that spans content ("只对之后新建的连接生效") keeps it
        if word_count(word) <= 4:
            text = text.replace(word, " ")
    return word_count(text)


def no_memory(unit: Unit) -> bool:
    """Credentials, text addressed to the AI or the memory, injections: never a card."""
    text = unit.text
    return bool(find_secrets(text) or _CREDENTIAL_RE.search(text) or is_injection(text)
                or _TO_THE_AI_RE.search(text))  # credentials are cut out before; this is the guard


def classify(unit: Unit, header: Unit | None = None) -> str | None:
    """The card type of one unit, or None when it is no memory of its own."""
    text = unit.text
    if word_count(text) < MIN_WORDS or unit.sentence.question or no_memory(unit) \
            or _META_RE.search(text):
        return None
    if unit.sentence.table:
        return "fact" if has_values(text) else None
    active, oneoff_share = active_text(text)
    hits = cues.hits(active) if active else {}
    if not unit.own:  # pasted material: events and facts only
        if dated(unit) and ("event" in hits or unit.sentence.quoted in ("email", "sms", "ticket")):
            return "event"
        if has_values(active) and not re.search(r"请|务必|please|must|always|never", active, re.I) \
                and word_count(active) >= 6 and unit.sentence.quoted in ("email", "sms", "ticket",
                                                                         "pasted", "doc"):
            return "fact"
        return None
    if not unit.user:
        return _assistant_type(unit, text, hits)
    return _user_type(unit, text, active, oneoff_share, hits, header)


# "we upgraded Redis to 7.2": a happening in the past tense is an event, dated or not
_HAPPENED_RE = re.compile(r"(?i)^(?:we|they|the\s+team|[A-Z][\w-]+)\s+(?:have\s+|had\s+)?(?:upgraded|"
                          r"migrated|deployed|released|launched|rebuilt|rolled\s+out|cut\s+over|"
                          r"switched|moved)\b")
# a value moved from one number to another: the new value is a fact
_VALUE_CHANGE_RE = re.compile(r"(?i)从\s*\S{1,12}?\s*(?:加|调|扩|降|提|涨|改|升|缩|减)(?:到|成|为|至)\s*\d"
                              r"|\bfrom\s+[\d.]+\s*\w{0,3}\s+to\s+[\d.]+")
_LIFE_EVENT_RE = re.compile(r"入职|离职|出差|生日|搬家|请假|年假|婚礼|团建|面试|体检|旅行|上线|发布|发版|"
                            r"(?i:\btrip\b|\bflight\b|\bbirthday\b|\bwedding\b|\binterview\b|\bjoin(?:s|ed)\b"
                            r"|\bleft\b|\bleaves\b|\bstart(?:s|ed)\s+(?:on|at)\b)")


def _specific_date(unit: Unit) -> bool:
    """Dated to a day said outright, once: not a bare weekday ("周二周四 10 点到 4 点" is a window
    that repeats), not a clock time alone, not a repeating schedule."""
    return not recurring(unit) and any(
        m.when is not None and not m.recurring and not m.inferred and m.granularity in ("day", "minute")
        and day_said(m.text) for m in unit.times)


_PROPOSED_RE = re.compile(r"(?i)^(?:有人|他们|对方|[\u4e00-\u9fff]{2,3})?(?:提议|提出|建议过|说要不)|"
                          r"^(?:someone|they|\w+)\s+(?:suggested|proposed)\b")


def _user_type(unit: Unit, text: str, active: str, oneoff_share: float,
               hits: dict[str, list[str]], header: Unit | None) -> str | None:
    """The user's own words, by precedence (docs/distill.md): a label; a one-off task; an
    attribute; a decision with its reason or its alternative; a confirmed fix; a wish or a
    duty (`directive`); a cause or trap; a value replaced; a dated happening; a light
    decision; the list's header; a concrete value."""
    label = cues.label(strip_filler(text, labels=False))
    if label:
        unit.label = label
        return label
    if not active or oneoff_share >= 0.5:  # a task for now
        return "event" if dated(unit) and cues.has(text, "event") else None
    if "emphasis" in hits and word_count(active) <= 12:
        return None  # "这条务必记住": it makes the sentence before a rule (see _promote_emphasis)
    if header is not None and header.label:
        # a labelled list ("决定：", "踩过的坑：") types its items; a dated one is an event
        return "event" if dated(unit) and "event" in hits else header.label
    masked = mood.mask_mentions(active)
    first = clauses(masked)[0] if clauses(masked) else masked
    if mood.attribute(first) and "decision" not in hits:
        return "fact"  # 我生日是 7 月 3 日, 我是讲师
    if mood.convention(masked) and mood.style_object(masked) and not (
            {"error", "instruction", "decision"} & hits.keys()):
        return "preference"  # a convention for how text looks: "SQL 关键字统一大写"
    if mood.points_back(masked) and directive(active) == "instruction":
        return "instruction"  # "…统一用 .env.local 读，你给示例的时候也按这个来": a rule for the agent
    if "decision" in hits and _content_words(active, "decision") >= 4:
        return "decision"
    if "fix" in hits and "status" not in hits and "self_recovery" not in hits and (
            "error" in hits or "fix" in cues.hits(text) and not cues.has(active, "instruction")):
        return "fix"
    if "cause" in hits and "gotcha" in hits and "liking" not in hits and _content_words(active, "gotcha") >= 5:
        return "gotcha"  # a cause said outright describes, whatever 每次/always it holds
    if _PROPOSED_RE.match(strip_filler(active, labels=False)):
        return None  # "有人提议直接上 Grafana OnCall": an option someone raised, not a choice made
    said = mood.mask_mentions(text)  # the reason clauses too: active_text leaves them out
    wish = directive(active)
    if "error" not in hits and wish != "preference" and (
            (mood.agentive_change(masked) or "decision_weak" in hits)
            and (mood.reason_marker(said) or mood.alternative(said))
            or mood.alternative(masked) and has_values(masked) and not mood.assignment(masked)):
        return "decision"  # a change made with its reason, a choice against an alternative
    if wish == "preference" and _THIRD_PERSON_RE.search(active):
        return "fact"
    if wish:
        return wish
    if "gotcha" in hits and (_content_words(active, "gotcha") < 5):
        return None  # "踩过的坑又一个": a remark about the sentence before
    if "gotcha" in hits and ("error" in hits or not re.fullmatch(
            r"(?i)(?:因为|because|due to|原因是)(?:\s+(?:因为|because|due to|原因是))*",
            " ".join(hits["gotcha"]).strip())):
        return "gotcha"
    if "fix" in hits and "status" not in hits and "self_recovery" not in hits:
        return "fix"
    if _CHANGE_FACT_RE.search(active) and not dated(unit) or re.search(r"换班|改值", active):
        return "fact"  # a value replaced: 交接时间也改了…, 我跟他换班了…
    if _VALUE_CHANGE_RE.search(active) and not _LIFE_EVENT_RE.search(active):
        return "fact"  # 内存从 32G 加到 64G
    if mood.assignment(masked) and not _LIFE_EVENT_RE.search(masked):
        return "fact"  # 6 月的 on-call 是我, 这几天 DB 的事找张伟
    if _event(unit, active, hits):
        return "event"
    if re.match(r"(?i)(?:there\s+(?:is|are|will\s+be)\s+(?:a|an|no)\s+)", strip_filler(active, labels=False)) \
            and word_count(active) >= 6:
        return "fact"  # "There is a deploy freeze during the sale weekend."
    if "decision_weak" in hits and _content_words(active, "decision_weak") >= 4:
        return "decision"
    if header is not None and header.kind in ("decision", "instruction", "preference", "gotcha"):
        return header.kind
    if _specific_date(unit) and "error" not in hits and "status" not in hits \
            and not mood.consequence(active):
        return "event"  # "下周一晚上 23:00 我单独跑", "I'll re-issue it on Monday, Aug 31"
    if has_values(active) and word_count(active) >= 4 and "error" not in hits \
            and "status" not in hits:
        return "fact"
    if _names_someone(active) and word_count(active) >= 5 and re.search(r"叫|是|负责|带|找|owns|is", active):
        return "fact"
    return None


def _event(unit: Unit, active: str, hits: dict[str, list[str]]) -> bool:
    """Something that happens at a time: a dated event word, a dated change, a dated person
    (not a recurring schedule), a report of what happened with a loose time, or a happening
    in the past tense."""
    if dated(unit) and ("event" in hits or "change" in hits):
        return True
    if dated(unit) and not recurring(unit) and _names_someone(active):
        return True
    if dated(unit, loose=True) and "event" in hits:
        return True
    return bool(_HAPPENED_RE.match(strip_filler(active, labels=False)))


def _names_someone(text: str) -> bool:
    from vault_engine.text.names import chinese_names, english_person_names

    return bool(chinese_names(text) or english_person_names(text))


def _assistant_type(unit: Unit, text: str, hits: dict[str, list[str]]) -> str | None:
    body = strip_filler(text, labels=False)
    if "restatement" in cues.hits(text) or _PLAN_RE.match(body):
        return None
    if "suggestion" in hits:
        # advice is no memory — unless it warns what goes wrong otherwise ("建议同时开 X，否则从库
        # 上事务提交顺序可能和主库不一致"): that trap is worth keeping
        return "gotcha" if "warning" in hits and word_count(body) >= 12 else None
    if re.search(r"(?i)\b(?:we(?:'ll|\s+will)\s+go\s+with|we\s+decided|decision\s+is|"
                 r"(?:we|i)\s+(?:chose|settled\s+on))\b|已?决定", body):
        return "decision"
    if _DONE_RE.search(body) and "fix" in hits:
        return "fix"
    if "gotcha" in hits and _content_words(body, "gotcha") >= 5:
        return "gotcha"
    if _DONE_RE.search(body):
        return "fix" if "fix" in hits else "fact"
    if re.match(r"(?i)^(?:always|never|next\s+time|make\s+sure|务必|一律)", body):
        return "pattern"
    if has_values(body) and word_count(body) >= 6 and not unit.sentence.item and \
            re.search(r"(?i)\b(?:is|are|was|were|took|move|moves|needs?|would\s+need|reads|owns|"
                      r"holds|runs|keeps?|expired|stopped|piled)\b", body):
        return "fact"
    return None


def assign(units: list[Unit]) -> None:
    """Classify every unit of one turn, then fold context into the units that need it."""
    if units and not units[0].user and cues.has(strip_filler(units[0].text, labels=False),
                                                "restatement"):
        return  # "记下了：…" / "Noted: …": the assistant repeating the user
    header: Unit | None = None
    for i, u in enumerate(units):
        if not u.sentence.item:
            header = None
        hdr = header if u.sentence.item and header and u.sentence.header else None
        u.kind = classify(u, hdr)
        nxt = units[i + 1] if i + 1 < len(units) else None
        if _LEAD_IN_RE.search(u.sentence.text) and not u.sentence.item:
            if (nxt is not None and nxt.sentence.quoted is not None and u.sentence.quoted is None
                    or _code_follows(u)) and not re.search(r"\d|[a-z]+-[a-z]+-?\d", u.text):
                if not _keep_before_lead_in(u):
                    u.kind, u.consumed = None, True  # "HR 发来的邮件你也看下：" introduces material
                continue
            header = u
            u.label = u.label or cues.bare_label(strip_filler(u.text, labels=False))
            if u.kind is None:
                header_hits = cues.hits(u.text)
                u.kind = next((k for k in ("decision", "instruction", "preference", "gotcha")
                               if k in header_hits or cues.label(u.text + " x") == k), None)
    _fold_lists(units)
    _promote_emphasis(units)
    _anaphoric_cause(units)
    _join_context(units)


def _anaphoric_cause(units: list[Unit]) -> None:
    """"根因就是这个，…" after a sentence: that sentence is the cause (a gotcha with both)."""
    for i, u in enumerate(units):
        if i == 0 or not _ANAPHORIC_CAUSE_RE.match(strip_filler(u.text, labels=False)):
            continue
        prev = units[i - 1]
        if prev.consumed or no_memory(prev) or prev.sentence.quoted is not None:
            continue
        prev.kind = "gotcha"
        prev.text = f"{prev.text}{'' if re.search(r'[。.]$', prev.text) else '。'}{u.text}"
        u.kind, u.consumed = None, True


def _keep_before_lead_in(unit: Unit) -> bool:
    """"改成 `secrets.MATCH_PASSWORD` 之后证书能解密了，结果签名又报：" before a log: the
    clauses before the lead-in still say something — keep them as the unit."""
    spans = clause_spans(unit.text)
    if len(spans) < 2:
        return False
    rest = unit.text[:spans[-1][0]].strip().rstrip("，,；;：:")
    if word_count(rest) < 6:
        return False
    unit.text = rest
    unit.kind = classify(unit)
    return unit.kind is not None


def _code_follows(unit: Unit) -> bool:
    rest = unit.turn.text[unit.sentence.end:unit.sentence.end + 8].lstrip()
    return rest.startswith(("```", "~~~", ">"))


def _fold_lists(units: list[Unit]) -> None:
    """A header and its items: items with no type of their own or the header's fold into the
    header's card (the details of one statement); items of another type stay cards of their
    own. A header with no type and two or more untyped items ("时间线：") is one card — in the
    user's own words only: an assistant's lists are options and suggestions."""
    i = 0
    while i < len(units):
        head = units[i]
        items = []
        j = i + 1
        while j < len(units) and units[j].sentence.item and not units[j].sentence.table \
                and units[j].sentence.header == head.sentence.text:
            items.append(units[j])
            j += 1
        if not items or head.sentence.item:
            i += 1
            continue
        if head.kind:
            loose = [u for u in items if u.kind in (None, head.kind)]
            if loose:
                head.text = head.text + " " + "；".join(u.text for u in loose)
                head.consumed = False
                for u in loose:
                    u.consumed = True
            else:
                head.consumed = True  # every item is a card of its own
        elif head.user and head.own:
            loose = [u for u in items if u.kind in (None, "fact", "event")]
            if len(loose) >= 2 and any(has_values(u.text) for u in loose):
                head.kind = "event" if any(u.times for u in loose) else "fact"
                head.text = head.text + " " + "；".join(u.text for u in loose)
                for u in loose:
                    u.consumed = True
        i = j


def _promote_emphasis(units: list[Unit]) -> None:
    """"这条务必记住。" / "Always." after a sentence makes that sentence a standing rule."""
    for i, u in enumerate(units):
        if not u.user or i == 0 or not cues.has(u.text, "emphasis"):
            continue
        prev = next((p for p in reversed(units[:i]) if p.kind is not None and not p.consumed), None)
        if prev is not None and prev.kind in ("preference", "fact", "event"):
            prev.kind = "instruction"
        if word_count(u.text) <= 12:
            u.kind = None


def _join_context(units: list[Unit]) -> None:
    """A unit that leans on the sentence before it ("就这么定了：…", "I'll be there …", "Put a
    slot on May 13") carries that sentence in its claim; a reason ("原因：…") or a consequence
    ("So pick …") joins the card before it."""
    for i, u in enumerate(units):
        if i == 0 or u.consumed:
            continue
        prev = units[i - 1]
        if prev.sentence.quoted != u.sentence.quoted or prev.sentence.item != u.sentence.item:
            continue
        body = strip_filler(u.text, labels=False)
        if prev.kind is not None and not prev.consumed and prev.user == u.user and (
                _REASON_SENTENCE_RE.match(body) and prev.kind in ("decision", "preference",
                                                                   "instruction")
                or re.match(r"(?i)^(?:so|所以|因此)\b", body) and u.kind in (None, "fact", prev.kind)):
            prev.text = f"{prev.text} {u.text}"
            u.consumed, u.kind = True, None
            continue
        if prev.kind == "gotcha" and not prev.consumed and u.kind in (None, "fact") and re.match(
                r"(?i)^(?:需要|要|得|必须|应该|所以|因此|否则|不然|you\s+need|need\s+to|so\b|otherwise)",
                body):
            prev.text = f"{prev.text}{u.text}" if re.search(r"[\u4e00-\u9fff；。]$", prev.text) \
                else f"{prev.text} {u.text}"
            u.consumed, u.kind = True, None
            continue
        if u.kind is None or prev.kind in ("fix", "gotcha") and u.kind != prev.kind:
            continue
        lean = bool(_CONTEXT_OPENERS.match(u.text)) and u.kind in ("decision", "preference",
                                                                   "instruction")
        lean = lean or (u.kind == "event" and bool(_DEIXIS_RE.search(body)
                                                    or _IMPERATIVE_EVENT_RE.match(body)))
        # "the Postgres 16 upgrade is moving." then "… push it from May 16 to May 23": the
        # event is named in the sentence before, its date in this one
        lean = lean or (u.kind in ("event", "decision") and prev.kind in (None, "fact") and not dated(prev)
                        and cues.has(prev.text, "event") and bool(
                            re.search(r"(?i)\b(?:it|this|that)\b|这个|它", body)))
        if lean and word_count(prev.text) >= MIN_WORDS and not prev.sentence.question \
                and not no_memory(prev):
            u.before = prev.text
            if prev.kind in (None, "preference", "fact", "event") or prev.kind == u.kind:
                prev.consumed = True
