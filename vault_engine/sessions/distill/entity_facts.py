"""What the memory knows about one person, system or project: the facts an entity page lists
(entity_pages.py writes them), found offline in the sessions and cards a reader may see.

- **Who gets a page**: every entity note, and every name said in two or more sessions — the
  speakers, people named in the turns (text.names), systems and identifiers (text.entities,
  under one name each: k8s → Kubernetes; identifiers such as payment-svc), and system parts
  people write in lower case ("the connection pool", "the renewal job", 连接池, 支付服务).
  Acronyms and CamelCase words of unknown kind (SELECT, OOM) get no page of their own.
- **Facts from cards**: each current claim of a card that is about the entity (it links to the
  entity's note or names it), with the turn its evidence cites.
- **Facts from sessions**: the sentences that name the entity — and, for a person, what they
  say of themselves in the first person (I, my, we, 我, 我们) — when they state something: no
  questions, no chit-chat, at least
  three words that carry meaning — kept as said, with who said it. The best three of each
  session, dated ones first; the relative dates a turn names are shown as the day ingest
  resolved ("last Saturday (2023-05-20)").

Pure functions over a parsed vault; nothing is written here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from vault_engine.store.model import Card, Entity, Note, Session, Turn
from vault_engine.text.entities import ALIASES, canonical, find_components, find_entities
from vault_engine.text.injection import is_injection
from vault_engine.text.names import chinese_names, english_person_names
from vault_engine.text.secrets import has_secret, redact
from vault_engine.text.segment import has_cjk, sentences
from vault_engine.text.tokens import tokenize

from .gate import turn_gate

_KNOWN_SYSTEMS = frozenset(ALIASES.values())
PER_SESSION = 3  # facts a page keeps from one session
MAX_FACTS = 120  # facts on one page (the weakest go first)
MIN_SESSIONS = 2  # a name said in this many sessions gets a page
_MIN_WORDS = 3  # words that carry meaning in a fact sentence (after stopwords and the name)
# words that praise or react rather than state ("Wow, that's so cool, thanks!")
_FILLER = frozenset(tokenize("""wow cool great awesome amazing nice thanks thank love lovely
glad happy sounds really totally super so very good sure yeah yes okay ok hey hi hello oh
congrats congratulations proud wonderful fantastic incredible beautiful stoked excited
inspiring hope hear chat talk soon fun""")) | {"哈哈", "好的", "谢谢", "厉害", "不错", "加油"}


@dataclass(frozen=True)
class Fact:
    text: str  # a claim about the entity, or a sentence said about it (as said)
    session: str  # the session note's stem (the link target)
    anchor: str | None  # its turn ("t12"), None for a card claim without a turn
    said: str | None  # the day it was said (the turn's), YYYY-MM-DD
    card: str | None = None  # the card it came from (its stem), for a card's claim
    score: float = 0.0
    speaker: str | None = None  # who said it, for a sentence from a session


@dataclass
class Subject:
    """An entity a page is (or will be) written for."""

    name: str
    type: str  # person | system | project | topic …
    forms: tuple[str, ...]  # the name and its aliases, as the text writes them
    note: Entity | None = None
    sessions: set[str] = field(default_factory=set)


def _day(turn: Turn, session: Session) -> str | None:
    when = turn.timestamp or session.started
    return when.date().isoformat() if when else None


def _names_in(session: Session) -> dict[str, str]:
    """Name → type for everyone and everything named in a session."""
    speakers = sorted({t.name for t in session.turns if t.name and t.role in ("user", "human")})
    out: dict[str, str] = {s: "person" for s in speakers}
    for turn in session.turns:
        if is_injection(turn.text):
            continue
        for n in english_person_names(turn.text, speakers) + (
                chinese_names(turn.text, speakers) if has_cjk(turn.text) else []):
            out.setdefault(n, "person")
        for e in find_entities(turn.text):
            # a known system, an identifier (db-primary, payment-svc), a version (PG 16): an
            # acronym or CamelCase word of unknown kind (SELECT, OOM, ConfigMap) is too often
            # a keyword to get a page of its own (an entity note for it still gets facts)
            known = e.kind == "identifier" or e.name in _KNOWN_SYSTEMS or e.name[-1:].isdigit()
            if known and "REDACTED" not in e.name:
                out.setdefault(e.name, "system")
        for c in find_components(turn.text):
            out.setdefault(c, "system")
    return out


def subjects(notes: Sequence[Note], sessions: Sequence[Session]) -> dict[str, Subject]:
    """Every entity note, and every name said in MIN_SESSIONS or more sessions (by its one
    name, casefolded)."""
    out: dict[str, Subject] = {}
    for note in notes:
        if isinstance(note, Entity):
            forms = tuple(dict.fromkeys([note.title, *note.aliases]))
            out[note.title.casefold()] = Subject(note.title, note.entity_type or "topic", forms,
                                                note)
    alias_of = {f.casefold(): key for key, s in out.items() for f in s.forms}
    seen: dict[str, tuple[str, str, set[str]]] = {}
    for session in sessions:
        for name, kind in _names_in(session).items():
            key = alias_of.get(canonical(name).casefold(), canonical(name).casefold())
            entry = seen.setdefault(key, (canonical(name), kind, set()))
            entry[2].add(session.stem)
    for key, (name, kind, where) in seen.items():
        if key in out:
            out[key].sessions |= where
        elif len(where) >= MIN_SESSIONS:
            out[key] = Subject(name, kind, (name,), None, set(where))
    return out


def _pattern(forms: Iterable[str]) -> re.Pattern[str] | None:
    parts = []
    for f in sorted({f for f in forms if f and len(f) >= 2}, key=len, reverse=True):
        esc = re.escape(f)
        parts.append(esc if has_cjk(f) else rf"(?<![\w-]){esc}(?![\w-])")
    return re.compile("|".join(parts), re.I) if parts else None


def _statement(sentence: str, forms: Sequence[str]) -> bool:
    """Does a sentence state something (not a question, not a reaction)?"""
    if sentence.rstrip("”’」』）)\"' ").endswith(("?", "？", "吗", "呢")):
        return False
    name_words = {w for f in forms for w in tokenize(f)}
    words = [w for w in tokenize(sentence) if w not in name_words and w not in _FILLER]
    if has_cjk(sentence):
        return len("".join(words)) >= 6
    return len(words) >= _MIN_WORDS


def _dated(sentence: str, turn: Turn, session: Session) -> str:
    """The sentence with each relative date ingest resolved shown beside it (a note ingested
    before headers carried dates: resolved here, against the turn's time)."""
    resolved = turn.dates
    when = turn.timestamp or session.started
    if not resolved and when is not None:
        from vault_engine.text.when import relative_dates

        resolved = tuple(relative_dates(turn.text, when))
    for said, day in resolved:
        shown = f"（{day}）" if has_cjk(said) else f" ({day})"
        if said in sentence and shown not in sentence:
            sentence = sentence.replace(said, said + shown, 1)
    return sentence


def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\[\[|\]\]", "", text)  # a fact line holds only alaya's own links
    return redact(text) if has_secret(text) else text


def session_facts(subject: Subject, session: Session) -> list[Fact]:
    """What one session says about `subject`: its best PER_SESSION statements."""
    pattern = _pattern(subject.forms)
    person = subject.type == "person"
    own = {f.casefold() for f in subject.forms}
    marked = session.meta.get("injection_turns")
    flagged = {str(a) for a in marked} if isinstance(marked, list) else set()
    found: list[tuple[float, int, Fact]] = []
    for turn in session.turns:
        if turn.anchor in flagged or turn_gate(turn.text) is not None:
            continue
        speaks = person and (turn.name or "").casefold() in own
        if not speaks and (pattern is None or not pattern.search(turn.text)):
            continue
        for s in sentences(turn.text):
            if s.quoted:
                continue
            text = s.text.strip()
            names_it = pattern is not None and pattern.search(text) is not None
            first = speaks and re.search(
                r"(?i)\b(?:i|i'm|i've|i'd|i'll|my|me|we|we're|we've|our|us)\b|我", text)
            if not (names_it or first) or not _statement(text, subject.forms):
                continue
            dated = _dated(text, turn, session)
            text = _clean(dated)
            if len(text) > 300:
                text = text[:297].rstrip() + "…"
            score = (1.0 if dated != s.text.strip() else 0.0) + min(len(tokenize(text)), 20) / 20
            found.append((score, turn.index, Fact(text, session.stem, turn.anchor,
                                                  _day(turn, session), score=score,
                                                  speaker=turn.name or turn.role)))
    best = sorted(found, key=lambda x: (-x[0], x[1]))[:PER_SESSION]
    return [f for _, _, f in sorted(best, key=lambda x: x[1])]


def card_facts(subject: Subject, cards: Sequence[Card], days: dict[str, str]) -> list[Fact]:
    """Current claims of the cards about `subject`, each with the turn its evidence cites."""
    pattern = _pattern(subject.forms)
    page = subject.note.stem.casefold() if subject.note is not None else None
    out: list[Fact] = []
    for card in cards:
        linked = page is not None and any(
            r.target.split("#")[0].split("/")[-1].casefold() == page for r in card.relations)
        for claim in card.claims:
            if claim.status in ("refuted", "superseded"):
                continue
            if not linked and (pattern is None or not pattern.search(claim.text)):
                continue
            link = next((e.link for e in claim.evidence if e.link is not None and e.link.target),
                        None)
            session = link.target.split("/")[-1] if link else \
                (card.source_sessions[0].strip("[]").split("|")[0] if card.source_sessions
                 else "")
            when = claim.valid_from.date().isoformat() if claim.valid_from else days.get(session)
            out.append(Fact(_clean(claim.text), session, link.block if link else None, when,
                            card=card.stem, score=2.0))
    return out


def facts_for(subject: Subject, sessions: Sequence[Session], cards: Sequence[Card]) -> list[Fact]:
    """Every fact of a page: card claims first (they were distilled), then what the sessions
    say; a turn a card already cites is not listed twice. At most MAX_FACTS, the weakest left
    out."""
    days = {s.stem: s.started.date().isoformat() for s in sessions if s.started}
    from_cards = card_facts(subject, cards, days)
    cited = {(f.session, f.anchor) for f in from_cards}
    said = [f for s in sessions if s.stem in subject.sessions or subject.note is not None
            for f in session_facts(subject, s) if (f.session, f.anchor) not in cited]
    facts = from_cards + said
    if len(facts) > MAX_FACTS:
        keep = set(map(id, sorted(facts, key=lambda f: -f.score)[:MAX_FACTS]))
        facts = [f for f in facts if id(f) in keep]
    return facts
