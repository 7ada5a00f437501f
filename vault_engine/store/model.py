"""Typed, frozen views of parsed notes.

Parsing happens once (`vault_engine.store.notes.parse_note`); everything downstream — compilers,
lint, recall — reads these objects. `Note.meta` keeps every frontmatter key with its YAML type,
known or not, so nothing a human wrote is lost between parse and render.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Relation types alaya knows. Any other UPPER_SNAKE name is allowed (a custom relation).
CORE_RELATIONS: tuple[str, ...] = (
    "CAUSES", "CAUSED_BY", "DEPENDS_ON", "SIMILAR_TO", "CONTRADICTS", "TEMPORAL_NEXT",
    "EXTRACTED_FROM", "REFERENCES", "SUPERSEDES", "CO_OCCURS", "RELATES_TO",
)
# One edge, traversable both ways: stored once, on either end.
SYMMETRIC_RELATIONS: frozenset[str] = frozenset({"SIMILAR_TO", "CONTRADICTS", "CO_OCCURS"})

CARD_TYPES: tuple[str, ...] = (
    # seed 000: knowledge distilled from sessions
    "concept", "pattern", "gotcha", "decision",
    # seed 003: unified memory categories
    "fact", "preference", "constraint", "skill", "template",
    # seed 004: episodic and instruction memories
    "event", "instruction",
    # notes imported from an existing vault
    "note",
)
CLAIM_STATUSES: tuple[str, ...] = ("supported", "contested", "refuted", "superseded")
NOTE_KINDS: tuple[str, ...] = (
    "card", "entity", "session", "scene", "memory", "persona", "report", "archive", "query",
    "template", "note",
)


@dataclass(frozen=True, kw_only=True)
class WikiLink:
    """One `[[target#anchor|display]]` occurrence."""

    raw: str
    target: str  # page part as written ("" for a same-note link like [[#Heading]])
    heading: str | None = None
    block: str | None = None
    display: str | None = None
    embed: bool = False
    line: int = 0  # 1-based line in the file
    field: str | None = None  # inline-field or frontmatter key the link sits under
    kind: str = "wiki"  # "wiki" ([[…]]) | "markdown" ([text](Note.md))
    frontmatter: bool = False  # in a frontmatter value (alaya's extras resolve there)
    managed: bool = False  # inside a managed block alaya owns (extras resolve there too)


@dataclass(frozen=True, kw_only=True)
class Relation:
    """A typed edge from the note that holds it to `target` (a wikilink).

    `origin` says where it was written: `frontmatter` (the `relations:` list), `inline`
    (a Dataview field `TYPE:: [[target]]`) or `body` (a plain wikilink: RELATES_TO).
    """

    type: str
    target: str
    link: WikiLink
    weight: float = 1.0
    reason: str | None = None
    origin: str = "frontmatter"
    line: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Evidence:
    kind: str
    source: str
    confidence: float | None = None
    link: WikiLink | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Claim:
    id: str
    text: str
    confidence: float | None = None
    status: str = "supported"
    valid_from: dt.datetime | None = None
    valid_until: dt.datetime | None = None
    evidence: tuple[Evidence, ...] = ()
    line: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def valid_at(self, when: dt.datetime) -> bool:
        if self.valid_from is not None and when < self.valid_from:
            return False
        return not (self.valid_until is not None and when >= self.valid_until)


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One turn of a session note, addressable as `[[session-id#^tN]]`."""

    anchor: str  # "t3"
    index: int
    role: str
    name: str | None
    timestamp: dt.datetime | None
    text: str
    line: int
    source_id: str | None = None  # the turn's id in the raw input (e.g. "m17", "D3:5")
    # relative dates the turn names, made absolute at ingest: (("yesterday", "2023-05-07"), …)
    dates: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, kw_only=True)
class Issue:
    """A problem found while parsing (reported, never fatal for the rest of the vault)."""

    code: str
    path: str
    line: int | None
    message: str
    fix: str
    severity: str = "error"
    namespace: str | None = None  # of the note it is about, when known (views filter by it)


@dataclass(frozen=True, kw_only=True)
class Note:
    """Every note. `kind` comes from the folder (cards/, entities/, sessions/ …)."""

    path: str  # vault-relative, POSIX separators
    kind: str
    id: str | None
    title: str
    meta: Mapping[str, Any]
    body: str
    body_line: int
    checksum: str
    links: tuple[WikiLink, ...] = ()
    relations: tuple[Relation, ...] = ()
    headings: tuple[tuple[int, str], ...] = ()  # (level, text) in document order
    block_ids: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    namespace: str = "shared"
    key_lines: Mapping[str, int] = field(default_factory=dict)
    issues: tuple[Issue, ...] = ()

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.endswith(".md") else name

    def key_line(self, key: str) -> int | None:
        """1-based line where frontmatter `key` starts, if present."""
        return self.key_lines.get(key)


@dataclass(frozen=True, kw_only=True)
class Card(Note):
    type: str | None = None
    created: dt.datetime | None = None
    updated: dt.datetime | None = None
    importance: float | None = None
    pinned: bool = False
    source_sessions: tuple[str, ...] = ()
    claims: tuple[Claim, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Entity(Note):
    entity_type: str | None = None  # person | system | project | organization | place …
    lane: str | None = None  # what this person/system is responsible for (seed 002 personCard)
    ask_for: tuple[str, ...] = ()  # what to ask them for
    claims: tuple[Claim, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Session(Note):
    started: dt.datetime | None = None
    ended: dt.datetime | None = None
    channel: str | None = None
    agent: str | None = None
    raw: str | None = None  # vault-relative path of the raw file kept beside it
    turns: tuple[Turn, ...] = ()

    def turn(self, anchor: str) -> Turn | None:
        anchor = anchor.lstrip("^")
        for t in self.turns:
            if t.anchor == anchor:
                return t
        return None


@dataclass(frozen=True, kw_only=True)
class Tombstone(Note):
    """An archived card: forgotten, merged or deprecated. Never deleted."""

    reason: str | None = None
    merged_into: str | None = None
    archived: dt.datetime | None = None
