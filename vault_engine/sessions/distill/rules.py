"""The offline distiller: deterministic rules, no model, Chinese and English alike
(docs/distill.md says what it finds and what it misses).

It reads the turns that passed the quality gate sentence by sentence (`text.segment`: no space
needed after 。, code and identifiers intact), decides what each sentence is in its context
(`classify`: cue lexicons weighed by who said it, pasted material, lists, one-off tasks),
follows problems to their causes and fixes across turns (`causes`), and writes:

- **preference**, **instruction** — the user's own words only;
- **decision** — with its reason when one is given;
- **gotcha** — causes and traps; an error plus its confirmed fix is one gotcha with the fix as
  a claim and a CAUSED_BY link to its cause;
- **event** — dated statements, the date resolved against the turn's time in the vault's time
  zone (`[vault] timezone`) and shown in it;
- **fact** — statements with a concrete value (a number, an identifier, an address, a name),
  also from pasted material; **pattern** — a rule the assistant states;
- **entities**: people (speakers, Chinese names from the surname lexicon and context, English
  names), systems and identifiers under one name each (`text.entities`);
- **temporal order**: decisions, events and gotchas of one session chained with TEMPORAL_NEXT.

In claims 我/I become the speaker's name, and 他/她 the one other person named before it.
Every claim cites the exact turn it came from (`t3`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Sequence

from vault_engine.store.model import Session, Turn
from vault_engine.text.entities import find_entities
from vault_engine.text.entities import is_identifier as is_identifier
from vault_engine.text.names import (
    chinese_names,
    english_person_names,
    first_person,
    first_person_en,
    third_person_zh,
)
from vault_engine.text.secrets import redact
from vault_engine.text.segment import cjk_share
from vault_engine.text.titles import make_title as _make_title
from vault_engine.text.when import TimeMention, describe

from .causes import Problem, link_problems, problem_title_text
from .classify import Unit, assign, dated, turn_units
from .model import CardDraft, ClaimDraft, DistillResult, EntityDraft, LinkDraft

# kept for callers of the old module: identifiers as the entity rules see them
IDENT_RE = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![\w-])")
CONFIDENCE = {"preference": 0.9, "instruction": 0.9, "decision": 0.8, "gotcha": 0.7,
              "fact": 0.7, "event": 0.7, "pattern": 0.7}
IMPORTANCE = {"preference": 0.7, "instruction": 0.8, "decision": 0.8, "gotcha": 0.7,
              "fact": 0.5, "event": 0.5, "pattern": 0.6}


def make_title(sentence: str, max_words: int = 10) -> str:
    """A title from a sentence (`vault_engine.text.titles.make_title`)."""
    return _make_title(sentence)


def attribute(sentence: str, name: str | None) -> str:
    """First person made explicit: 'I prefer tea' said by Alice → 'Alice prefers tea'."""
    return first_person_en(sentence, name) if name else sentence


def session_language(turns: Sequence[Turn]) -> str:
    text = " ".join(t.text for t in turns if t.role in ("user", "human")) or \
        " ".join(t.text for t in turns)
    return "zh" if cjk_share(text) >= 0.3 else "en"


class RulesDistiller:
    """The offline, deterministic distiller."""

    name = "rules"

    def __init__(self, timezone: dt.tzinfo | None = None) -> None:
        self.timezone = timezone or dt.UTC

    def distill(self, session: Session, turns: Sequence[Turn]) -> DistillResult:
        lang = session_language(turns)
        by_turn: list[list[Unit]] = []
        for turn in turns:
            when = turn.timestamp or session.started
            units = turn_units(turn, when.astimezone(self.timezone) if when else None)
            assign(units)
            by_turn.append(units)
        _cause_from_previous_turn(by_turn)
        problems = link_problems(by_turn)
        return self._assemble(session, turns, by_turn, problems, lang)

    # -- cards ---------------------------------------------------------------------------

    def _claim_text(self, unit: Unit, names: list[str]) -> str:
        text = f"{unit.before} {unit.text}".strip() if unit.before else unit.text
        if unit.user and unit.own:
            text = first_person(text, unit.turn.name)
            context = unit.turn.text[:unit.sentence.start]
            text = third_person_zh(text, [n for n in names if n != unit.turn.name], context)
        return redact(text)

    def _when(self, unit: Unit) -> TimeMention | None:
        return next((m for m in unit.times if m.when is not None and not m.recurring
                     and not m.inferred), None)

    def _content(self, unit: Unit, lang: str) -> str:
        who = unit.turn.name or unit.turn.role
        quoted = "\n".join(f"> {line}" for line in redact(unit.text).splitlines())
        content = f"{quoted}\n> — {who}"
        if unit.sentence.quoted:
            content += f" ({'粘贴的' if lang == 'zh' else 'pasted'} {unit.sentence.quoted})"
        mention = self._when(unit)
        if mention is not None:
            label = "时间" if lang == "zh" else "When"
            content += f"\n\n{label}: {describe(mention, self.timezone)}"
            if mention.was is not None:
                was = describe(TimeMention(mention.text, 0, 0, mention.was), self.timezone)
                content += f" ({'原定' if lang == 'zh' else 'was'} {was})"
        return content

    def _card(self, unit: Unit, kind: str, names: list[str], lang: str) -> CardDraft:
        claim = self._claim_text(unit, names)
        main = claim if unit.titled_with_before else self._claim_text(
            Unit(unit.turn, unit.sentence, unit.text, unit.index, unit.user, unit.own), names)
        mention = self._when(unit) if kind == "event" else None
        valid_from = mention.iso() if mention is not None else None
        return CardDraft(title=_make_title(main), type=kind, content=self._content(unit, lang),
                         importance=IMPORTANCE.get(kind, 0.5),
                         claims=(ClaimDraft(text=claim, confidence=CONFIDENCE.get(kind, 0.7),
                                            evidence=(unit.turn.anchor,), valid_from=valid_from),))

    def _incident(self, unit: Unit, names: list[str], lang: str) -> CardDraft | None:
        """A problem the user reported with its time ("lag 从昨晚开始一直涨", "cannot log in since
        this morning") is also an event: when it happened, titled with its date so it stands
        apart from the gotcha that tells the cause and the fix."""
        if not unit.user or not dated(unit, loose=True):
            return None
        mention = next(m for m in unit.times if m.when is not None and not m.recurring)
        if mention.when is None:
            return None
        draft = self._card(unit, "event", names, lang)
        day = mention.when.astimezone(self.timezone).strftime("%Y-%m-%d")
        claim = ClaimDraft(text=draft.claims[0].text, confidence=0.7, evidence=(unit.turn.anchor,),
                           valid_from=mention.iso())
        return CardDraft(title=f"{day} {draft.title}", type="event", content=draft.content,
                         importance=IMPORTANCE["event"], claims=(claim,))

    def _fix_card(self, problem: Problem, lang: str, names: list[str]) -> CardDraft:
        prefix = "修复：" if lang == "zh" else "Fix: "
        problem_text = redact(problem.description)
        claims = [ClaimDraft(text=problem_text, confidence=0.8, evidence=(problem.turn_anchor,))]
        for unit, text in problem.fixes:
            fix = redact(first_person(text, unit.turn.name) if unit.user else text)
            claims.append(ClaimDraft(text=prefix + fix, confidence=0.8,
                                     evidence=(unit.turn.anchor,)))
        body = "\n\n".join([f"**{'问题' if lang == 'zh' else 'Problem'}:** {problem_text}"]
                           + [f"**{'修复' if lang == 'zh' else 'Fix'}:** {c.text[len(prefix):]}"
                              for c in claims[1:]])
        return CardDraft(title=_make_title(problem_title_text(problem_text)), type="gotcha",
                         content=body,
                         importance=0.8, claims=tuple(claims))

    def _assemble(self, session: Session, turns: Sequence[Turn], by_turn: list[list[Unit]],
                  problems: list[Problem], lang: str) -> DistillResult:
        result = DistillResult(distiller=self.name)
        speakers = sorted({t.name for t in turns if t.name and t.role in ("user", "human")})
        names = _people(turns, speakers)
        cards: list[tuple[int, CardDraft, Unit | None]] = []
        cause_title: dict[int, str] = {}
        for units in by_turn:
            for u in units:
                if u.consumed or u.kind is None:
                    continue
                kind = "fact" if u.kind == "fix" else u.kind
                draft = self._card(u, kind, names, lang)
                cause_of = next((p for p in problems if p.cause is u and not p.fixes), None)
                if cause_of is not None and cause_of.description not in draft.claims[0].text:
                    draft = _with_claim(draft, ClaimDraft(
                        text=redact(cause_of.description), confidence=0.7,
                        evidence=(cause_of.turn_anchor,)))
                cards.append((_turn_no(u.turn.anchor), draft, u))
                cause_title[id(u)] = draft.title
        for p in problems:
            if p.fixes:
                draft = self._fix_card(p, lang, names)
                cards.append((_turn_no(p.turn_anchor), draft, None))
                for u in p.units:  # the incident itself, on the timeline
                    twin = self._incident(u, names, lang)
                    if twin is not None:
                        cards.append((_turn_no(u.turn.anchor), twin, None))
                if p.cause is not None and id(p.cause) in cause_title:
                    result.links.append(LinkDraft(draft.title, cause_title[id(p.cause)],
                                                  "CAUSED_BY", "the cause named in the session"))
        entity_names = _entities(turns, speakers, names)
        seen: set[str] = set()
        for _, draft, _u in sorted(cards, key=lambda x: x[0]):
            if draft.title.casefold() in seen:
                continue
            seen.add(draft.title.casefold())
            text = " ".join(c.text for c in draft.claims).casefold()
            mentioned = tuple(n for n in entity_names if n.casefold() in text)
            tags = tuple(sorted({draft.type} | {_slug(n) for n in mentioned if len(n) < 30}))
            result.cards.append(CardDraft(title=draft.title, type=draft.type,
                                          content=draft.content, tags=tags,
                                          importance=draft.importance, claims=draft.claims,
                                          entities=mentioned))
        result.cards = _merge_similar(result.cards)
        kept = {c.title for c in result.cards}
        result.links = [link for link in result.links if link.from_title in kept
                        and link.to_title in kept]
        order = [(n, d.title) for n, d, _ in sorted(cards, key=lambda x: x[0]) if d.title in kept]
        chain = list(dict.fromkeys(t for _, t in order if any(
            c.title == t and c.type in ("decision", "event", "gotcha") for c in result.cards)))
        for a, b in zip(chain, chain[1:], strict=False):
            result.links.append(LinkDraft(a, b, "TEMPORAL_NEXT", "later in the same session"))
        people = set(names) | set(speakers)
        for name in entity_names:
            etype = "person" if name in people else "system" if (
                IDENT_RE.fullmatch(name) or re.search(r"[A-Z._\-\d/]", name)) else "topic"
            result.entities.append(EntityDraft(name=name, type=etype))
        return result


def _turn_no(anchor: str) -> int:
    return int(anchor[1:]) if anchor[1:].isdigit() else 0


def _slug(name: str) -> str:
    return re.sub(r"[^\w\u4e00-\u9fff]+", "-", name.lower()).strip("-")


def _with_claim(draft: CardDraft, claim: ClaimDraft) -> CardDraft:
    return CardDraft(title=draft.title, type=draft.type, content=draft.content, tags=draft.tags,
                     importance=draft.importance, claims=draft.claims + (claim,),
                     entities=draft.entities)


def _people(turns: Sequence[Turn], speakers: list[str]) -> list[str]:
    """Everyone named in the session, in order: speakers first."""
    out = list(speakers)
    for t in turns:
        for n in chinese_names(t.text, speakers) + english_person_names(t.text, speakers):
            if n not in out:
                out.append(n)
    return out


def _entities(turns: Sequence[Turn], speakers: list[str], people: list[str]) -> list[str]:
    """People and the systems, identifiers and time zones named in two or more turns."""
    counts: Counter[str] = Counter()
    for t in turns:
        for name in {e.name for e in find_entities(t.text)} | {p for p in people if p in t.text}:
            counts[name] += 1
    names = [n for n, c in counts.items() if c >= 2 or n in people]
    names += [s for s in speakers if s not in names]
    return sorted(set(names), key=lambda n: (-counts[n], n))[:12]


def _cause_from_previous_turn(by_turn: list[list[Unit]]) -> None:
    """"That's the root cause: …" opening a turn: the user's finding in the turn before is the
    cause (a gotcha with both sentences as its claim)."""
    from .classify import _ANAPHORIC_CAUSE_RE, no_memory

    for i in range(1, len(by_turn)):
        units = by_turn[i]
        if not units or not _ANAPHORIC_CAUSE_RE.match(units[0].text):
            continue
        before = [u for u in by_turn[i - 1] if u.own and not no_memory(u)
                  and not u.sentence.question]
        if not before:
            continue
        finding = before[-1]
        finding.kind = "gotcha"
        finding.consumed = False
        units[0].before = finding.text
        units[0].kind = "gotcha"
        finding.consumed = True


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


__all__ = ["RulesDistiller", "attribute", "make_title", "is_identifier", "IDENT_RE", "dated"]
