"""The offline distiller: deterministic rules, no model (docs/distill.md says what it finds
and what it misses).

It reads the turns that passed the quality gate, sentence by sentence, and extracts:

- **preferences** ("I prefer …", "I like …", "我喜欢…") and **instructions** ("always …",
  "never …", "don't …", "from now on …", "记住…") — from the user's own turns;
- **decisions** ("we'll go with …", "decided to …", "let's use …", "决定…");
- **gotchas and causes** ("the problem was …", "turns out …", "caused by …", "原因是…");
- **errors and their fixes**: a turn showing an error followed by a turn that fixes it become
  one gotcha card with both as evidence;
- **dated facts** about people and things (a sentence with a date and a capitalised name);
- **entities**: speakers, and capitalised names or technical terms (CamelCase, dotted config
  keys, identifiers such as db-primary or orders_archive) that recur across turns;
- **temporal order**: cards of one session chained with TEMPORAL_NEXT in turn order.

Every card carries claims whose evidence is the exact turn (`t3`) the sentence came from.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from vault_engine.store.model import Session, Turn

from .model import CardDraft, ClaimDraft, DistillResult, EntityDraft, LinkDraft

_SENT_RE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_CODE_FENCE_RE = re.compile(r"```.*?```", re.S)

PREFERENCE_RE = re.compile(
    r"(?i)(?:^|[,;:]\s*|\b(?:and|but|also|so)\s+)(?:i\s+(?:really\s+|much\s+|generally\s+|"
    r"also\s+)?(?:prefer|like|love|enjoy|hate|dislike|can't stand)|i'd\s+rather|my\s+favou?rite"
    r"|i\s+(?:don't|do not)\s+(?:like|want))\b|我(?:更|比较|很|最)?(?:喜欢|偏好|讨厌|不喜欢|爱)")
INSTRUCTION_RE = re.compile(
    r"(?i)(?:^|[\s,;:])(?:always|never|don't|do not|please\s+(?:always|never|don't|use|avoid|"
    r"keep|make)|from\s+now\s+on|make\s+sure\s+(?:to|you)|remember\s+(?:to|that)|you\s+should|"
    r"you\s+must|avoid)\b|(?:总是|永远不要|不要|别再|记住|以后|务必|一定要)")
DECISION_RE = re.compile(
    r"(?i)\b(?:we(?:'ll|\s+will|\s+should)?\s+(?:go\s+with|use|choose|pick|switch\s+to|stick\s+with|"
    r"adopt)|(?:i|we)\s+(?:have\s+)?(?:decided|chose|picked|settled\s+on)|(?:the\s+)?decision\s+"
    r"(?:is|was)|let's\s+(?:go\s+with|use|switch|stick)|going\s+with|decided\s+(?:to|on|against))"
    r"\b|(?:决定|选择了|采用|定下来)")
CAUSE_RE = re.compile(
    r"(?i)\b(?:the\s+(?:real\s+)?(?:problem|issue|cause|root\s+cause|culprit|bug)\s+(?:was|is)|"
    r"turn(?:s|ed)\s+out|caused\s+by|because\s+(?:the|it|we|of|our)|gotcha|pitfall|watch\s+out|"
    r"be\s+careful|silently|only\s+works\s+(?:if|when)|doesn't\s+work\s+(?:when|if|unless)|"
    r"unless)\b|(?:原因是|导致|是因为|注意|坑)")
ERROR_RE = re.compile(
    r"(?i)\b(?:error|exception|traceback|failed|failing|failure|fatal|panic|crash(?:ed|es)?|"
    r"permission\s+denied|connection\s+refused|not\s+found|timed?\s*out|exit\s+code\s+[1-9]|"
    r"segfault|oom|out\s+of\s+memory|broke|broken|doesn't\s+work|isn't\s+working|"
    r"didn't\s+(?:get|work|arrive))\b|(?:报错|失败|错误|异常|崩溃)")
FIX_RE = re.compile(
    r"(?i)\b(?:fixed|the\s+fix|to\s+fix|fix\s+(?:is|was)|solved|resolved|solution|workaround|"
    r"worked\s+after|works\s+now|that\s+worked|it\s+works|now\s+it\s+works|add(?:ed|ing)?\s+\S+\s+"
    r"to|after\s+(?:adding|setting|changing|restarting))\b|(?:修复|解决|搞定|好了)")
MONTHS = ("january february march april may june july august september october november "
          "december").split()
DATE_RE = re.compile(
    r"(?i)\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    r"[a-z]*(?:,?\s+\d{4})?|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d{1,2}"
    r"(?:st|nd|rd|th)?(?:,?\s+\d{4})?|yesterday|today|tomorrow|last\s+(?:week|month|year|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)|next\s+(?:week|month|"
    r"year|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b")
CAPITALISED_RE = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2}\b")
TECH_RE = re.compile(r"\b(?:[a-z]+(?:\.[a-z_]+)+|[A-Z][a-z]+[A-Z]\w+|[A-Z]{2,}[a-z0-9]*"
                     r"(?:\s+[A-Z]{2,}[a-z0-9]*)*)\b")
# technical identifiers an agent session names: host and service names, tables, jobs
# (db-primary, api-gateway, orders_archive, worker-3) — hyphenated English (follow-up,
# long-term, re-run) is left out: an identifier has an underscore, a digit, or a short
# first part that is not an English prefix
IDENT_RE = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![\w-])")
PREFIXES = frozenset("a e x re co de un in pre pro non sub self well ex anti auto multi".split())


def is_identifier(name: str) -> bool:
    if "_" in name or any(ch.isdigit() for ch in name):
        return True
    first = re.split(r"[-_]", name, maxsplit=1)[0]
    return len(first) <= 3 and first not in PREFIXES


STOP_CAPS = frozenset("""I I'm I've I'd I'll The This That These Those It It's We We'll You You're
He She They Our My Your Their A An And But Or So If Then When What Why How Where Who Which
Yes No Ok Okay Thanks Thank Hi Hello Hey Sure Also Just Maybe Please Let Let's Not Now
Today Yesterday Tomorrow Monday Tuesday Wednesday Thursday Friday Saturday Sunday Also Great
Good Nice Well Oh Sounds Really Actually Anyway After Before Because Since Still Yeah Wow
January February March April May June July August September October November December
Is Are Was Were Do Does Did Can Could Would Should Will Have Has Had There Here Once Every""".split())
FILLER_RE = re.compile(
    r"(?i)^(?:(?:so|ok(?:ay)?|well|also|and|but|yes|yeah|right|hmm|then|agreed|i\s+think|"
    r"i\s+guess|by\s+the\s+way|btw|actually|anyway|please|watch\s+out|be\s+careful|"
    r"from\s+now\s+on|remember\s+that|note\s+that|the\s+(?:real\s+)?(?:problem|issue|"
    r"cause|root\s+cause|culprit|bug)\s+(?:was|is)(?:\s+that)?|it\s+turn(?:s|ed)\s+out"
    r"(?:\s+that)?|(?:the\s+)?decision\s+(?:is|was)|we(?:'ll|\s+will)\s+go\s+with)[,:\s]+)+")
_TRAILING_RE = re.compile(
    r"(?i)(?:\s+(?:so|and|or|but|with|the|a|an|to|of|for|before|after|then|that|which|if|"
    r"unless|when|by|on|in|at|is|are|was|were|not|using|from|again|does|do|did|has|have|had|"
    r"be|been|can|could|will|would|should|it|its|this|these|those))+$")


@dataclass(frozen=True)
class _Finding:
    kind: str  # preference | instruction | decision | gotcha | fact | fix
    sentence: str
    turn: Turn


def sentences(text: str) -> list[str]:
    text = _CODE_FENCE_RE.sub(" ", text)
    out = []
    for part in _SENT_RE.split(text):
        part = part.strip(" >*-\t")
        if 12 <= len(part) <= 400 and re.search(r"[A-Za-z\u4e00-\u9fff]", part):
            out.append(part)
    return out


def make_title(sentence: str, max_words: int = 10) -> str:
    """A short title from a sentence: lead-in phrases dropped, cut at a clause boundary or
    `max_words`, no dangling conjunction at the end."""
    text = FILLER_RE.sub("", sentence.strip().replace("`", ""))
    text = re.sub(r"[\s]+", " ", text).strip(" .!?。！？,;:")
    if re.search(r"[\u4e00-\u9fff]", text) and " " not in text[:30]:
        title = text[:24]
    else:
        words = text.split(" ")
        title = " ".join(words[:max_words])
        clause = re.split(r"[,;]\s|\s[-–—]\s", title)
        if len(clause[0].split()) >= 4:
            title = clause[0]
        title = _TRAILING_RE.sub("", title).strip(" ,;:")
    return (title[:1].upper() + title[1:]) if title else "Untitled"


def attribute(sentence: str, name: str | None) -> str:
    """First person made explicit: 'I prefer tea' said by Alice → 'Alice prefers tea'.

    Claims are read later, out of the conversation: "Alice is on call" answers "who is on
    call?", "I'm on call" does not.
    """
    if not name:
        return sentence
    s = re.sub(r"(?i)\bi\s+(?:really\s+|also\s+)?(prefer|like|love|enjoy|hate|dislike|want|need)\b",
               lambda m: f"{name} {m.group(1).lower()}s", sentence)
    s = re.sub(r"(?i)\bi'd\s+rather\b", f"{name} would rather", s)
    s = re.sub(r"(?i)\bi(?:'m|\s+am)\b", f"{name} is", s)
    s = re.sub(r"(?i)\bi\s+was\b", f"{name} was", s)
    s = re.sub(r"(?i)\bi(?:'ve|\s+have)\b", f"{name} has", s)
    s = re.sub(r"(?i)\bi(?:'ll|\s+will)\b", f"{name} will", s)
    s = re.sub(r"\bI\b", name, s)
    s = re.sub(r"(?i)\bmy\b", f"{name}'s", s)
    s = re.sub(r"(?i)\bme\b", name, s)
    return s


def _resolve_date(text: str, when: dt.datetime | None) -> str | None:
    m = DATE_RE.search(text)
    if not m:
        return None
    token = m.group(0).lower()
    if re.match(r"\d{4}-\d{2}-\d{2}", token):
        return token + "T00:00:00Z"
    if when is None:
        return None
    days = {"yesterday": -1, "today": 0, "tomorrow": 1, "last week": -7, "next week": 7,
            "last month": -30, "next month": 30, "last year": -365, "next year": 365,
            "last weekend": -7}
    if token in days:
        return (when + dt.timedelta(days=days[token])).strftime("%Y-%m-%dT00:00:00Z")
    for i, month in enumerate(MONTHS, 1):
        if month[:3] in token:
            day = re.search(r"\d{1,2}(?!\d)", token)
            year = re.search(r"\d{4}", token)
            try:
                return dt.datetime(int(year.group(0)) if year else when.year, i,
                                   int(day.group(0)) if day else 1).strftime(
                    "%Y-%m-%dT00:00:00Z")
            except ValueError:
                return None
    return when.strftime("%Y-%m-%dT00:00:00Z")


class RulesDistiller:
    """The offline, deterministic distiller."""

    name = "rules"

    def distill(self, session: Session, turns: Sequence[Turn]) -> DistillResult:
        findings: list[_Finding] = []
        error_turn: Turn | None = None
        error_sentence = ""
        for turn in turns:
            is_user = turn.role in ("user", "human")
            sents = sentences(turn.text)
            for s in sents:
                if is_user and PREFERENCE_RE.search(s):
                    findings.append(_Finding("preference", s, turn))
                elif is_user and INSTRUCTION_RE.search(s) and not s.endswith("?"):
                    findings.append(_Finding("instruction", s, turn))
                elif DECISION_RE.search(s) and not s.endswith("?"):
                    findings.append(_Finding("decision", s, turn))
                elif CAUSE_RE.search(s) and not s.endswith("?"):
                    findings.append(_Finding("gotcha", s, turn))
                elif DATE_RE.search(s) and CAPITALISED_RE.search(s[1:]) and not s.endswith("?"):
                    findings.append(_Finding("fact", s, turn))
            # errors and their fixes: an error turn, then a later turn that fixes it
            err = next((s for s in sents if ERROR_RE.search(s)), None)
            fix = next((s for s in sents if FIX_RE.search(s) and not s.endswith("?")), None)
            if error_turn is not None and fix and turn is not error_turn:
                findings.append(_Finding("fix", f"{error_sentence}\x00{fix}", turn))
                findings.append(_Finding("fix-error", error_sentence, error_turn))
                error_turn = None
            elif err:
                error_turn, error_sentence = turn, err
        return self._assemble(session, findings, turns)

    def _assemble(self, session: Session, findings: list[_Finding],
                  turns: Sequence[Turn]) -> DistillResult:
        result = DistillResult(distiller=self.name)
        titles: set[str] = set()
        entity_names = self._entities(session, turns)
        order: list[tuple[int, str]] = []
        fix_errors = {f.turn.anchor: f.sentence for f in findings if f.kind == "fix-error"}
        for f in findings:
            if f.kind == "fix-error":
                continue
            who = f.turn.name if f.turn.role in ("user", "human") else None
            if f.kind == "fix":
                error, fix = f.sentence.split("\x00", 1)
                err_turn = next((a for a, s in fix_errors.items() if s == error), None)
                clauses = re.split(r",\s+(?:but|and|so)\s+|;\s+", error)
                title = make_title(next((c for c in clauses if ERROR_RE.search(c)), error),
                                   max_words=14)
                claims: tuple[ClaimDraft, ...] = (ClaimDraft(text=error, confidence=0.8,
                                     evidence=(err_turn,) if err_turn else ()),
                          ClaimDraft(text=f"Fix: {fix}", confidence=0.8,
                                     evidence=(f.turn.anchor,)))
                ctype, importance = "gotcha", 0.8
                content = f"**Problem:** {error}\n\n**Fix:** {fix}"
            else:
                text = attribute(f.sentence, who) if who else f.sentence
                title = make_title(text)
                when = _resolve_date(f.sentence, f.turn.timestamp or session.started)
                conf = {"preference": 0.9, "instruction": 0.9, "decision": 0.8,
                        "gotcha": 0.7, "fact": 0.7}[f.kind]
                claims = (ClaimDraft(text=text, confidence=conf, evidence=(f.turn.anchor,),
                                     valid_from=when if f.kind == "fact" else None),)
                ctype = {"fact": "event"}.get(f.kind, f.kind)
                importance = {"preference": 0.7, "instruction": 0.8, "decision": 0.8,
                              "gotcha": 0.7, "fact": 0.5}[f.kind]
                content = f"> {f.sentence}\n> — {f.turn.name or f.turn.role}"
            if title.casefold() in titles:
                continue
            titles.add(title.casefold())
            mentioned = tuple(n for n in entity_names if n.casefold() in
                              " ".join(c.text for c in claims).casefold())
            tags = tuple(sorted({ctype} | {re.sub(r"\W+", "-", n.lower()).strip("-")
                                           for n in mentioned if len(n) < 30}))
            result.cards.append(CardDraft(title=title, type=ctype, content=content,
                                          tags=tags, importance=importance, claims=claims,
                                          entities=mentioned))
            order.append((int(f.turn.anchor[1:]) if f.turn.anchor[1:].isdigit() else 0, title))
        result.cards = _merge_similar(result.cards)
        # an error fixed in this session was caused by what the session named as its cause
        fixes = [c for c in result.cards if c.type == "gotcha" and len(c.claims) > 1
                 and c.claims[-1].text.startswith("Fix: ")]
        causes = [c for c in result.cards if c.type == "gotcha" and c not in fixes]
        for fix_card in fixes:
            for cause in causes:
                result.links.append(LinkDraft(fix_card.title, cause.title, "CAUSED_BY",
                                              "the cause named in the same session"))
        kept_titles = {c.title for c in result.cards}
        order = [(n, t) for n, t in order if t in kept_titles]
        # temporal order within the session: decisions, events and fixes as a chain
        chain = [t for _, t in sorted(order) if any(
            c.title == t and c.type in ("decision", "event", "gotcha") for c in result.cards)]
        for a, b in zip(chain, chain[1:], strict=False):
            result.links.append(LinkDraft(a, b, "TEMPORAL_NEXT", "later in the same session"))
        for name in entity_names:
            etype = "person" if name in {t.name for t in turns if t.name} else (
                "system" if TECH_RE.fullmatch(name) or IDENT_RE.fullmatch(name) else "topic")
            result.entities.append(EntityDraft(name=name, type=etype))
        return result

    def _entities(self, session: Session, turns: Sequence[Turn]) -> list[str]:
        counts: Counter[str] = Counter()
        seen_in: dict[str, set[str]] = {}
        for turn in turns:
            for s in sentences(turn.text):
                body = s.split(" ", 1)[1] if " " in s else ""  # not the sentence's first word
                found = list(CAPITALISED_RE.finditer(body)) + list(TECH_RE.finditer(s)) + [
                    m for m in IDENT_RE.finditer(s) if is_identifier(m.group(0))]
                for m in found:
                    name = m.group(0).strip()
                    if name.split(" ")[0] in STOP_CAPS or len(name) < 3:
                        continue
                    counts[name] += 1
                    seen_in.setdefault(name, set()).add(turn.anchor)
        speakers = {t.name for t in session.turns if t.name and t.role in ("user", "human")}
        names = [n for n, c in counts.items() if len(seen_in[n]) >= 2 or n in speakers]
        names += [s for s in speakers if s not in names]
        return sorted(set(names), key=lambda n: (-counts[n], n))[:12]


def _merge_similar(cards: list[CardDraft]) -> list[CardDraft]:
    """Cards of one session saying the same thing (same type, token overlap ≥ 0.5) become one
    card with both claims — the second sentence usually restates the first."""
    from vault_engine.text.tokens import tokenize

    out: list[CardDraft] = []
    toks: list[set[str]] = []
    for card in cards:
        mine = set(tokenize(card.title + " " + " ".join(c.text for c in card.claims)))
        for i, other in enumerate(out):
            inter = len(mine & toks[i])
            if other.type == card.type and inter and inter / len(mine | toks[i]) >= 0.5:
                out[i] = CardDraft(title=other.title, type=other.type, content=other.content,
                                   tags=tuple(sorted(set(other.tags) | set(card.tags))),
                                   importance=max(other.importance, card.importance),
                                   claims=other.claims + card.claims,
                                   entities=tuple(dict.fromkeys(other.entities + card.entities)))
                toks[i] |= mine
                break
        else:
            out.append(card)
            toks.append(mine)
    return out
