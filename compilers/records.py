"""A parsed note reduced to what the artifacts need — cached per note between compiles.

A `NoteRecord` depends only on its own file, so an unchanged file is never parsed again.
Link targets stay unresolved here: resolution needs every note and happens in graph building.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from vault_engine.store.frontmatter import format_datetime
from vault_engine.store.model import Card, Entity, Note, Session, Tombstone
from vault_engine.store.serialize import claim_dict, jsonable
from vault_engine.text.injection import is_injection
from vault_engine.text.secrets import has_secret, redact
from vault_engine.text.timed import says_when
from vault_engine.text.tokens import tokenize

# Kinds that become recall targets; the rest (templates, reports, archive, MEMORY.md …) are
# graph nodes at most.
UNIT_KINDS = frozenset({"card", "entity", "session", "note", "scene", "query"})
GRAPH_KINDS = UNIT_KINDS
SUMMARY_CHARS = 400
LEXICAL_CHARS = 6000
TURN_CHUNK_CHARS = 1200

_LINK_TEXT_RE = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_MD_NOISE_RE = re.compile(r"<!--.*?-->|[#>*`~]+|^\s*[-+]\s+", re.M | re.S)


def plain(text: str) -> str:
    """Markdown → plain text for embedding: `[[a|b]]` → `b`, markup and runs of space removed."""
    text = _LINK_TEXT_RE.sub(lambda m: m.group(2) or m.group(1), text)
    text = _MD_NOISE_RE.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True)
class Unit:
    """One recall target: a card, an entity, a plain note, or one turn (window) of a session."""

    anchor: str | None  # "t3" for a session turn
    embed_text: str  # the shortest text that carries the meaning
    lexical: str  # BM25 tokens joined by spaces (one string pickles far faster than a tuple)
    snippet: str
    # a session turn read with the one before it ("[date] A: question\nB: answer"): embedded
    # as a second vector, so an answer that never names its subject is found through the
    # question it answers (docs/recall.md, "turn context")
    context: str | None = None
    # the turn says when (a date, a relative day, how long ago): time questions rank it up
    timed: bool = False
    # the days it names, resolved against when it was said ("yesterday" → 2023-05-07): a
    # question that names a day finds the turn that dates the event, not only the session
    dates: tuple[str, ...] = ()
    # a fact of an entity page: the turn it links to ("conv-26-s5#^t4"); graph expansion goes
    # from the entity to the sessions of the facts a question matched
    cites: str | None = None


@dataclass(frozen=True)
class RelationRef:
    type: str
    target: str
    weight: float
    reason: str
    origin: str


@dataclass(frozen=True)
class NoteRecord:
    path: str
    checksum: str
    key: str  # graph/digest node id: the note id, else "path:<path>"
    id: str | None
    kind: str
    title: str
    stem: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    namespace: str
    type: str | None
    pinned: bool
    created: str | None
    updated: str | None
    importance: float | None
    source_sessions: tuple[str, ...]
    relations: tuple[RelationRef, ...]
    evidence_targets: tuple[tuple[str, float], ...]  # (link target, confidence)
    claims: tuple[dict[str, Any], ...]
    units: tuple[Unit, ...]
    extra: dict[str, Any] = field(default_factory=dict)
    volatile: bool = False  # corrected often (seed 003 §3.3.3): decays twice as fast
    stale: str | None = None  # why it may be outdated (a correction it depends on), or None


def _card_text(note: Note, claims: list[str], extra: list[str]) -> str:
    parts = [note.title]
    parts += claims
    summary = plain(note.body)[:SUMMARY_CHARS]
    if summary:
        parts.append(summary)
    parts += extra
    return "\n".join(p for p in parts if p)


def _turn_units(note: Session) -> list[Unit]:
    """One unit per turn (chunk). A turn that reads as a prompt injection gets none, and the
    turn after it is not read together with it: recall never serves it (docs/security.md).
    Snippets carry no secret a hand-written note may still hold."""
    units: list[Unit] = []
    day = note.started.date().isoformat() if note.started else None
    marked = note.meta.get("injection_turns")
    flagged = {str(a) for a in marked} if isinstance(marked, list) else set()
    previous_ok = True
    from vault_engine.text.names import name_forms

    romanised: dict[str, str] = {}  # 李娜 → "li na lina": an English question finds her turns
    for turn in note.turns:
        when = turn.timestamp.date().isoformat() if turn.timestamp else day
        speaker = turn.name or turn.role
        if speaker not in romanised:
            romanised[speaker] = " ".join(sorted(f for f in name_forms(speaker) if f.isascii())
                                          ) if re.search(r"[\u4e00-\u9fff]", speaker) else ""
        text = plain(turn.text)
        if not text:
            continue
        if turn.anchor in flagged or is_injection(turn.text):
            previous_ok = False
            continue
        if has_secret(text):
            text = redact(text)
        chunks = [text[i:i + TURN_CHUNK_CHARS] for i in range(0, len(text), TURN_CHUNK_CHARS)]
        said = turn.timestamp or note.started
        for chunk in chunks:
            prefix = f"[{when}] " if when else ""
            line = f"{prefix}{speaker}: {chunk}"
            context = f"{units[-1].embed_text}\n{speaker}: {chunk}" \
                if units and previous_ok else None
            previous_ok = True
            units.append(Unit(anchor=turn.anchor, embed_text=line,
                              lexical=" ".join(tokenize(f"{line} {romanised[speaker]}")),
                              snippet=line[:240], context=context, timed=says_when(chunk),
                              dates=_days_named(chunk, said, turn.dates)))
    return units


_DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


_FACT_LINK_RE = re.compile(r"\[\[([^\]|#]+)#\^(t\d+)(?:\|[^\]]*)?\]\]")
_TRAILING_LINKS_RE = re.compile(r"\s*\((?:\[\[[^\]]*\]\](?:,\s*)?)+\)\s*$")
_FACT_DAY_RE = re.compile(r"^###\s+(\d{4}-\d{2}-\d{2})")
MAX_FACT_UNITS = 150


def _fact_units(note: Entity) -> list[Unit]:
    """One unit per fact of an entity page's `facts` block (vault_engine/sessions/distill/
    entity_pages.py), each citing the turn it links to; a hand-written list item with a turn
    link counts too."""
    from vault_engine.store.blocks import read_block

    try:
        block = read_block(note.body, "facts", note.path)
    except Exception:  # a broken block is lint's to report; the note keeps its one unit
        return []
    if not block:
        return []
    units: list[Unit] = []
    day: str | None = None
    for line in block.splitlines():
        m = _FACT_DAY_RE.match(line)
        if m:
            day = m.group(1)
            continue
        if not line.startswith("- "):
            continue
        link = _FACT_LINK_RE.search(line)
        if link is None:
            continue
        text = _TRAILING_LINKS_RE.sub("", line[2:])  # a card fact's "(turn, card)"
        text = plain(_FACT_LINK_RE.sub("", text)).strip()
        if not text:
            continue
        text = redact(text) if has_secret(text) else text
        when = day or next(iter(re.findall(r"\|(\d{4}-\d{2}-\d{2})\]\]", line)), None)
        embed = f"[{when}] {text}" if when else text
        units.append(Unit(anchor=None, embed_text=embed,
                          lexical=" ".join(tokenize(f"{note.title} {text}")),
                          snippet=embed[:240], cites=f"{link.group(1)}#^{link.group(2)}",
                          dates=(when,) if when else ()))
        if len(units) >= MAX_FACT_UNITS:
            break
    return units


def _days_named(text: str, said: Any, resolved: tuple[tuple[str, str], ...] = ()
                ) -> tuple[str, ...]:
    """The days a turn names: the relative ones as ingest made them absolute in the turn's
    header (in the vault's zone), and dates written out in full; for a note ingested before
    headers carried dates, every one resolved here against when it was said
    (vault_engine/text/when.py). One-off dates only — "every Monday" has no single day."""
    days = [m.group(0) for _, value in resolved for m in [_DAY_RE.match(value)] if m]
    if said is None:
        return tuple(dict.fromkeys(days))[:4]
    from vault_engine.text.when import mentions

    for m in mentions(text, said):
        if resolved and not re.search(r"\d{4}", m.text):
            continue  # relative: the header says which day
        if m.when is not None and not m.recurring and m.granularity in ("day", "minute"):
            days.append(m.when.date().isoformat())
    return tuple(dict.fromkeys(days))[:4]


def build_record(note: Note) -> NoteRecord:
    claims = getattr(note, "claims", ())
    claim_texts = [c.text for c in claims if c.status not in ("refuted", "superseded")]
    units: list[Unit] = []
    if note.kind in UNIT_KINDS:
        if isinstance(note, Session):
            units = _turn_units(note)
        else:
            extra: list[str] = []
            if isinstance(note, Entity):
                extra = [x for x in (note.lane, ", ".join(note.ask_for)) if x]
                if note.aliases:
                    extra.append("also known as " + ", ".join(note.aliases))
            embed = _card_text(note, claim_texts, extra)
            lexical = "\n".join([note.title, " ".join(note.aliases), " ".join(note.tags),
                                 *claim_texts, plain(note.body)[:LEXICAL_CHARS], *extra])
            snippet = (claim_texts[0] if claim_texts else plain(note.body))[:400]
            snippet = (redact(snippet) if has_secret(snippet) else snippet)[:240]
            units = [Unit(anchor=None, embed_text=embed, lexical=" ".join(tokenize(lexical)),
                          snippet=snippet)]
            if isinstance(note, Entity):
                units += _fact_units(note)
    relations = tuple(RelationRef(type=r.type, target=r.target, weight=float(r.weight),
                                  reason=str(r.reason or ""), origin=r.origin)
                      for r in note.relations if r.target)
    evidence = tuple((ev.link.target, float(ev.confidence if ev.confidence is not None else 1.0))
                     for c in claims for ev in c.evidence if ev.link is not None and ev.link.target)
    card = note if isinstance(note, Card) else None
    created = card.created if card else getattr(note, "started", None)
    extra_fields: dict[str, Any] = {}
    if isinstance(note, Entity):
        extra_fields = {"lane": note.lane, "ask_for": list(note.ask_for)}
    elif isinstance(note, Tombstone):
        extra_fields = {"merged_into": note.merged_into, "reason": note.reason}
    elif isinstance(note, Session):
        from vault_engine.text.names import name_forms

        speakers = {t.name for t in note.turns if t.name}
        extra_fields = {"turns": len(note.turns), "channel": note.channel, "agent": note.agent,
                        "speakers": sorted({f for n in speakers for f in name_forms(n)})}
    title = redact(note.title) if has_secret(note.title) else note.title
    return NoteRecord(
        path=note.path, checksum=note.checksum, key=note.id or f"path:{note.path}",
        id=note.id, kind=note.kind, title=title, stem=note.stem, aliases=note.aliases,
        tags=note.tags, namespace=note.namespace,
        type=card.type if card else (note.entity_type if isinstance(note, Entity) else None),
        pinned=bool(card.pinned) if card else False,
        created=format_datetime(created) if created else None,
        updated=format_datetime(card.updated) if card and card.updated else None,
        importance=card.importance if card else None,
        source_sessions=card.source_sessions if card else (),
        relations=relations, evidence_targets=evidence,
        claims=tuple(_masked(jsonable(claim_dict(c))) for c in claims), units=tuple(units),
        extra=extra_fields, volatile=note.meta.get("volatile") is True,
        stale=(str(note.meta.get("stale_reason") or "something it depends on changed")
               if note.meta.get("stale") is True else None))


def _masked(claim: dict[str, Any]) -> dict[str, Any]:
    """A claim for the digest and claims.jsonl, with any secret in its text masked."""
    text = claim.get("text")
    if isinstance(text, str) and has_secret(text):
        claim = {**claim, "text": redact(text)}
    return claim


def distinct_keys(records: list[NoteRecord]) -> list[NoteRecord]:
    """Records whose note id another note also uses, keyed by their path instead: two notes
    never become one node — one namespace's session and another's of the same id would
    otherwise share their units, edges and digest page (a reader of one would be shown the
    other's turns). lint and doctor report the duplicate id itself."""
    import dataclasses
    from collections import Counter

    seen = Counter(r.key for r in records)
    return [dataclasses.replace(r, key=f"path:{r.path}") if seen[r.key] > 1 else r
            for r in records]
