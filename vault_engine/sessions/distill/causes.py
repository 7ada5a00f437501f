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
from dataclasses import dataclass, field

from vault_engine.text import cues
from vault_engine.text.segment import sentences
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
    r"enabled|changed|created|dropped|deleted)\b")
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
    own = [u for u in units if u.own and cues.has(u.text, "error") and not cues.has(u.text, "fix")
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


def no_problem(unit: Unit) -> bool:
    return cues.has(unit.text, "status") or cues.has(unit.text, "self_recovery")


def _fix_text(unit: Unit, turn_units: list[Unit]) -> str:
    """The fix said by `unit`, with the action said just before it when the unit only reports
    the recovery ("20:45 … CREATE INDEX …" then "20:52 p99 恢复到 200ms 以下")."""
    text = unit.text
    if not _ACTION_RE.search(strip_filler(text, labels=False)):
        before = [u for u in turn_units if u.sentence.start < unit.sentence.start]
        if before and _ACTION_RE.search(before[-1].sentence.text):
            text = f"{before[-1].sentence.text}；{text}"
    return text


def link_problems(turns: list[list[Unit]]) -> list[Problem]:
    """Walk the session in order: open problems, attach causes, close them with fixes."""
    problems: list[Problem] = []
    first_user = next((u for units in turns for u in units if u.user and u.own), None)
    for units in turns:
        if not units:
            continue
        _open_problem(units, problems)
        for u in units:
            if u.consumed or u.kind not in ("gotcha", "fix"):
                continue
            open_ = [p for p in problems if not p.fixes]
            if u.kind == "gotcha":
                if not open_ or word_count(u.text) < 5:
                    continue
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
            if not targets and first_user is not None and first_user.turn is not u.turn and \
                    set(tokenize(first_user.text)) & set(tokenize(u.text)):
                # the conversation itself is about a problem the first turn states
                problems.append(Problem(first_user.turn.anchor, first_user.text,
                                        set(tokenize(first_user.text)),
                                        _strong_tokens(first_user.text)))
                targets = [problems[-1]]
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

    for a, _b in clause_spans(description):
        if cues.has(description[a:], "error") and cues.has(description[a:_b], "error"):
            rest = description[a:].lstrip(" ，,；;")
            return rest if word_count(rest) >= 4 else description
    return description
