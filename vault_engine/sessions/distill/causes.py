"""Problems, their causes and their fixes across the turns of a session.

A **problem** opens where the user reports a failure — an error in their words ("客服反馈工单系统
上传附件失败", "order-svc is in CrashLoopBackOff"), or an error line in pasted logs or output
(`ERROR: Job failed`, `413 Request Entity Too Large`, `{"error":"token expired"}`). A later
report that shares most of its words is the same problem.

A **cause** is a sentence with a cause cue (根因 / 问题出在 / 导致 / the root cause / turns out /
because …) at or after the problem; it belongs to the open problem it shares most words with,
else the latest one.

A **fix** is a sentence that confirms a problem is gone ("…之后 too many clients 的报错停了",
"413 和 504 都没再出现", "Restoring the old keys did it", "I rotated the credentials … it works
now"). It closes the open problem it names (its error codes and identifiers weigh most), else
the only open one. A pure recovery line ("20:52 p99 恢复到 200ms 以下") carries the action said
just before it. A **status report** ("三个 Pod 全部 Running") and a **self-recovery** ("持续 10
分钟左右自己恢复") are evidence, never a fix.

Each fixed problem becomes one gotcha card: the problem as its first claim, the fix as a claim
beginning "Fix:" (修复：in a Chinese session), linked CAUSED_BY to the card of its cause. A cause
whose problem was never fixed keeps the problem as a second claim of its own card.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from vault_engine.text import cues
from vault_engine.text.segment import clauses, sentences
from vault_engine.text.titles import strip_filler, word_count
from vault_engine.text.tokens import tokenize

from .classify import Unit

_ERROR_LINE_RE = re.compile(
    r"(?i)\b(?:error|exception|fatal|panic|failed|failure|refused|denied|forbidden|timed\s*out|"
    r"oom|out\s+of\s+memory|too\s+many|too\s+large|crashloopbackoff|not_in_channel|expired)\b"
    r"|\"error\"\s*:|\b[45]\d\d\s+[A-Z][a-z]")
_ACTION_RE = re.compile(
    r"(?i)执行|改(?:成|为|到|了)?|加(?:了|上)?|重启|回滚|扩容|调(?:到|成)|删|清理|补|取消|换|勾|apply|"
    r"terminate|\b(?:ran|run|applied|restarted|rolled|added|set|raised|restored|rotated|moved|"
    r"enabled|changed|created|dropped|deleted|fixed|issued|renewed|increased|re-?ran|cleaned|"
    r"replaced|updated|upgraded|patched|reverted|scaled|wrapp\w*|acknowledg\w*)\b")
_CODE_TOKEN_RE = re.compile(r"\b[45]\d\d\b|[A-Za-z]+[_.-][A-Za-z0-9_.-]+|[A-Z]{2,}\w*")


@dataclass
class Problem:
    turn_anchor: str
    description: str
    tokens: set[str]
    strong: set[str]  # error codes, identifiers: they name the problem
    cause: Unit | None = None
    fixes: list[tuple[Unit, str]] = field(default_factory=list)  # (unit, fix text)
    units: list[Unit] = field(default_factory=list)  # the sentences that report it


def _strong_tokens(text: str) -> set[str]:
    return {m.group(0).lower() for m in _CODE_TOKEN_RE.finditer(text)}


def _overlap(problem: Problem, text: str) -> float:
    toks = set(tokenize(text))
    strong = _strong_tokens(text)
    return len(problem.tokens & toks) + 3 * len(problem.strong & strong)


def _error_lines(units: list[Unit]) -> list[str]:
    turn = units[0].turn if units else None
    if turn is None:
        return []
    out = []
    for s in sentences(turn.text, include_code=True):
        if s.quoted in ("code", "log", "output") or s.quoted is not None:
            line = s.text.strip()
            if _ERROR_LINE_RE.search(line) and len(line) >= 8:
                out.append(line[:200])
    return out


def _open_problem(units: list[Unit], problems: list[Problem]) -> None:
    """A problem reported in this turn (or more words for one already open)."""
    turn = units[0].turn
    from .classify import no_memory

    # a report, not an explanation or a rule: sentences another type claims are not problems
    own = [u for u in units if u.own and _reports_error(u.text) and not _REQUEST_RE.match(u.text)
           and u.kind in (None, "event", "fact") and not no_problem(u) and not no_memory(u)]
    if not units[0].user:  # the assistant reports an error only in so many words
        own = [u for u in own if re.search(r"(?i)\berror:|failed\s+with|报错[：:]", u.text)]
    lines = _error_lines(units) if units[0].user else []
    if not own and not lines:
        return
    description = " ".join(u.text for u in own[:2]) if own else lines[0]
    text = description + " " + " ".join(lines[:3])
    toks, strong = set(tokenize(text)), _strong_tokens(text)
    for p in problems:
        if not p.fixes and len(p.tokens & toks) >= max(3, 0.5 * len(toks)):
            p.tokens |= toks
            p.strong |= strong
            return
    problems.append(Problem(turn.anchor, description, toks, strong, units=own[:2]))


def _reports_error(text: str) -> bool:
    """An error said, and not taken back after it: "the restart worked, but the notification
    failed" reports one, "改完之后报错没再出现" does not."""
    errors = [m.end() for m in cues.finditer(text, "error")]
    if not errors:
        return False
    fixes = [m.end() for m in cues.finditer(text, "fix")]
    return not fixes or max(errors) > max(fixes)


def no_problem(unit: Unit) -> bool:
    return cues.has(unit.text, "status") or cues.has(unit.text, "self_recovery")


def _fix_text(unit: Unit, turn_units: list[Unit]) -> str:
    """The fix said by `unit`, with the action said just before it when the unit only reports
    the recovery ("20:45 … CREATE INDEX …" then "20:52 p99 恢复到 200ms 以下")."""
    text = unit.text
    if not _ACTION_RE.search(strip_filler(text, labels=False)):
        before = [u for u in turn_units if u.sentence.start < unit.sentence.start]
        after = [u for u in turn_units if u.sentence.start > unit.sentence.start]
        if before and _ACTION_RE.search(before[-1].sentence.text):
            text = f"{before[-1].sentence.text}；{text}"
        elif after and _ACTION_RE.search(after[0].sentence.text) and after[0].kind in (None, "fact"):
            text = f"{text}{'' if re.search(r'[。.]$', text) else '；'}{after[0].sentence.text}"
            after[0].consumed, after[0].kind = True, None
    return text


_FIX_CLOSURE_RE = re.compile(r"(?i)^(?:so\s+)?(?:that's|that\s+is|it's)\s+(?:fixed|sorted|solved|resolved)\b"
                             r"|^(?:so\s+)?(?:all\s+)?(?:fixed|sorted)\s+now\b|^(?:这样|这下)?(?:问题)?(?:就)?(?:解决了|搞定了|好了)[。！!]?$")


def _findings(units: list[Unit], before: list[Unit], problems: list[Problem]) -> None:
    """While a problem is open, the user's finding is its cause: what they looked up ("查了下，
    …", "it turns out …", "I found …") or their yes to the assistant's guess ("确实，证书 6 月
    6 日过期了" after "是不是证书过期了？"; "对，order_logs 没有主键" after "有主键吗？")."""
    if not any(not p.fixes for p in problems) or not units or not units[0].user:
        return
    asked = bool(before) and not before[0].user and any(
        cues.has(u.text, "hypothesis") or u.sentence.question for u in before)
    for i, u in enumerate(units):
        if u.consumed or not u.own or u.kind not in (None, "fact", "event") or word_count(u.text) < 6:
            continue
        body = strip_filler(u.text, labels=False) if i else u.text
        if cues.has(body, "investigation") or (i == 0 and asked and cues.has(u.text, "confirmation")):
            u.kind = "gotcha"


def _remedy(u: Unit, open_: Sequence[Problem | None]) -> bool:
    """The assistant's own completed action while a problem is open ("I raised maxmemory to
    6gb …", "I restored the PutObject permission …"): the fix it applied."""
    from .classify import _DONE_RE

    return bool(open_) and not u.user and u.kind in ("fact", "gotcha") and any(
        _DONE_RE.match(c) for c in clauses(strip_filler(u.text, labels=False)))


def _closure(u: Unit, units: list[Unit]) -> str | None:
    """"So that's fixed." / "问题解决了。" closing a turn: the sentences before it are the fix."""
    if not u.user or not _FIX_CLOSURE_RE.search(strip_filler(u.text, labels=False)):
        return None
    before = [x for x in units if x.sentence.start < u.sentence.start and not x.consumed][-3:]
    if not before:
        return None
    for x in before:
        x.consumed, x.kind = True, None
    return " ".join(x.text for x in before + [u])


def _diagnosis(u: Unit, open_: Sequence[Problem | None]) -> bool:
    """The assistant explaining an open problem that has no cause yet, in so many words: a
    statement (no question, advice or plan) with a failure or a cause in it ("Login calls fail
    the TLS handshake: the auth endpoint serves an expired certificate")."""
    from .classify import _PLAN_RE

    if u.user or not u.own or u.kind not in (None, "fact") or u.sentence.question or \
            word_count(u.text) < 6 or not any(p is None or p.cause is None for p in open_):
        return False
    body = strip_filler(u.text, labels=False)
    if _PLAN_RE.match(body) or cues.has(body, "suggestion") or cues.has(body, "restatement"):
        return False
    return cues.has(body, "error") or cues.has(body, "gotcha")


# a question that asks for work, not about a failure: "Can we graph replica lag per host?"
_REQUEST_RE = re.compile(r"(?i)^\s*(?:can|could|would|should|shall|may)\s+(?:we|you|i)\b|^\s*(?:能不能|可不可以|"
                         r"要不要|是否|能否|可以帮)")
_NAMED_PROBLEM_RE = re.compile(r"(?i)\bthe\s+(?:real\s+)?(?:problem|issue|culprit)\s+(?:was|is)\b|\broot\s+cause\b"
                               r"|根因|问题出在|原因是")
_WHY_RE = re.compile(r"(?i)^(?:why|how\s+come|what\s+happened|为什么|为啥|怎么(?:会|又)?|咋)")


def _problem_of_first_turn(first: Unit | None, u: Unit) -> Problem | None:
    """The conversation itself is about a problem its first turn states ("The billing cron ran
    twice …" before "The problem was …"): opened when a cause or a fix names it."""
    named = _NAMED_PROBLEM_RE.search(u.text)  # "The problem was …": there was one
    if first is None or first.turn is u.turn or first.kind not in (None, "fact", "event") or \
            not named and not set(tokenize(first.text)) & set(tokenize(u.text)):
        return None
    if first.sentence.question and not _WHY_RE.match(strip_filler(first.text, labels=False)):
        return None  # "Can we graph replica lag per host?" asks for work, not about a problem
    if u.kind == "fix" and not _ACTION_RE.search(u.text):
        return None  # "上线一天了，QPS 降到原来的五分之一": a result, not the fix of a problem
    return Problem(first.turn.anchor, first.text, set(tokenize(first.text)),
                   _strong_tokens(first.text), units=[first])


def link_problems(turns: list[list[Unit]]) -> list[Problem]:
    """Walk the session in order: open problems, attach causes, close them with fixes."""
    problems: list[Problem] = []
    first_user = next((u for units in turns for u in units if u.user and u.own), None)
    previous: list[Unit] = []
    for units in turns:
        if not units:
            continue
        _open_problem(units, problems)
        _findings(units, previous, problems)
        previous = units
        for u in list(units):
            open_ = [p for p in problems if not p.fixes]
            closed = _closure(u, units) if open_ else None
            if closed is not None:
                target = open_[-1]
                target.fixes.append((u, closed))
                for reported in target.units:
                    reported.consumed = True
                u.consumed, u.kind = True, None
                continue
            if not open_ and not u.user and u.kind in (None, "fact", "gotcha", "fix") and (
                    _remedy(u, [None]) or _diagnosis(u, [None]) and cues.has(u.text, "error")):
                first = _problem_of_first_turn(first_user, u)  # the assistant answers the first turn
                if first is not None:
                    problems.append(first)
                    open_ = [first]
            if _remedy(u, open_):
                u.kind = "fix"
            elif _diagnosis(u, open_):
                u.kind = "gotcha"
            if u.consumed or u.kind not in ("gotcha", "fix"):
                continue
            if u.kind == "gotcha":
                if word_count(u.text) < 5:
                    continue
                if not open_:
                    first = _problem_of_first_turn(first_user, u) if not u.user else None
                    if first is None:
                        continue
                    problems.append(first)
                    open_ = [first]
                best = max(open_, key=lambda p: (_overlap(p, u.text), p.turn_anchor))
                if best.cause is None or re.search(r"根因|root\s+cause", u.text, re.I):
                    best.cause = u
                continue
            if no_problem(u):
                u.kind = "fact"
                continue
            scored = sorted(((_overlap(p, u.text), i, p) for i, p in enumerate(open_)),
                            key=lambda x: (-x[0], -x[1]))
            targets = [p for score, _, p in scored if score >= 3] or (
                [scored[0][2]] if scored else [])
            if not targets:
                first = _problem_of_first_turn(first_user, u)
                if first is not None:
                    problems.append(first)
                    targets = [first]
            for p in targets:
                p.fixes.append((u, _fix_text(u, units)))
                for reported in p.units:  # the problem is the fix card's first claim
                    reported.consumed = True
            if targets:
                u.consumed = True
            else:
                u.kind = "fact"
    return problems


def problem_title_text(description: str) -> str:
    """The part of a problem's description a title should start from: the first clause that
    names the failure ("…, but the notification step failed with `Error: …`")."""
    from vault_engine.text.segment import clause_spans

    said = [x.text for x in sentences(description)]
    if len(said) > 1:  # a report of two sentences: the title comes from the one with the failure
        description = next((x for x in said if cues.has(x, "error")), said[0])
    for a, _b in clause_spans(description):
        if cues.has(description[a:], "error") and cues.has(description[a:_b], "error"):
            rest = description[a:].lstrip(" ，,；;")
            return rest if word_count(rest) >= 5 and not _WHY_RE.match(rest) else description
    return description
