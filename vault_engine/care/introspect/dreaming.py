"""Dreaming (seed 002): the three passes promote runs, offline.

- **Light** — the day's sessions (started in the 24 hours before "now") are short-term recall
  signals: a card one of them produced (`source_sessions`), or that one of its turns restates
  (overlap of content words ≥ 0.6, at least 3 shared), gets a light hit per session; bonus
  0.06 × min(1, hits / 2).
- **REM** — patterns across memories: a card gets a REM hit for every other card it shares a
  scene with (scenes/: the cards their managed block links) and for every other card it shares
  a concept tag with; bonus 0.09 × min(1, hits / 2). Scene membership is read from the scene
  notes themselves, so it is real, not a frontmatter flag.
- **Deep** — promotion with the six-factor score plus both bonuses (promote.py). Candidates
  whose first recall is more than 30 days old and that were never promoted drop out. When the
  memory's health — the mean six-factor score, today, of what MEMORY.md holds (0 when it holds
  nothing) — is below 0.35, a recovery pass looks back 30 days and promotes up to 3 recalled
  cards with a supported claim of confidence ≥ 0.85 and a score of at least 0.5.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from vault_engine.store.model import CARD_TYPES, Card, Note, Session
from vault_engine.store.vault import VaultIndex
from vault_engine.text.overlap import overlap, terms

LIGHT_MAX, REM_MAX = 0.06, 0.09
LIGHT_FULL, REM_FULL = 2, 2  # hits for the full bonus
LIGHT_OVERLAP, LIGHT_SHARED = 0.6, 3
SHORT_TERM_DAYS = 30  # seed 002: not promoted within 30 days → no longer evaluated
HEALTH_FLOOR = 0.35
RECOVERY = {"days": 30, "confidence": 0.85, "min_score": 0.5, "max": 3}


@dataclass
class Dream:
    light: dict[str, int] = field(default_factory=dict)  # card key → light hits
    rem: dict[str, int] = field(default_factory=dict)  # card key → REM hits

    def bonus(self, key: str) -> float:
        light = LIGHT_MAX * min(1.0, self.light.get(key, 0) / LIGHT_FULL)
        rem = REM_MAX * min(1.0, self.rem.get(key, 0) / REM_FULL)
        return round(light + rem, 4)


def key_of(note: Note) -> str:
    return note.id or f"path:{note.path}"


def card_terms(card: Card) -> frozenset[str]:
    return terms(" ".join([card.title, *(c.text for c in card.claims)]))


def light_hits(index: VaultIndex, cards: Iterable[Card], now: dt.datetime) -> dict[str, int]:
    day = [n for n in index.notes if isinstance(n, Session) and n.started is not None
           and dt.timedelta(0) <= now - n.started <= dt.timedelta(days=1)]
    if not day:
        return {}
    turns = {s.path: [terms(t.text) for t in s.turns if t.text] for s in day}
    names = {s.path: {x.casefold() for x in (s.id, s.stem, s.path[:-3]) if x} for s in day}
    out: dict[str, int] = {}
    for card in cards:
        mine = card_terms(card)
        sources = {str(x).strip("[]").split("#")[0].split("|")[0].casefold()
                   for x in card.source_sessions}
        hits = 0
        for s in day:
            produced = bool(sources & names[s.path])
            restated = any(overlap(mine, t) >= LIGHT_OVERLAP and len(mine & t) >= LIGHT_SHARED
                           for t in turns[s.path])
            hits += produced or restated
        if hits:
            out[key_of(card)] = hits
    return out


def scene_members(index: VaultIndex) -> dict[str, set[str]]:
    """Scene path → keys of the cards its links resolve to."""
    out: dict[str, set[str]] = {}
    for n in index.notes:
        if n.kind != "scene":
            continue
        members = set()
        for lk in n.links:
            res = index.resolver.resolve_link(lk, n.path) if lk.target else None
            if res is not None and isinstance(res.note, Card):
                members.add(key_of(res.note))
        out[n.path] = members
    return out


def rem_hits(index: VaultIndex, cards: Iterable[Card]) -> dict[str, int]:
    cards = list(cards)
    peers: dict[str, set[str]] = {key_of(c): set() for c in cards}
    for members in scene_members(index).values():
        for key in members:
            if key in peers:
                peers[key] |= members - {key}
    by_tag: dict[str, set[str]] = {}
    for c in cards:
        for tag in c.tags:
            if tag.casefold() not in CARD_TYPES:
                by_tag.setdefault(tag.casefold(), set()).add(key_of(c))
    for keys in by_tag.values():
        for key in keys:
            peers[key] |= keys - {key}
    return {k: len(v) for k, v in peers.items() if v}


def dream(index: VaultIndex, now: dt.datetime) -> Dream:
    cards = [n for n in index.notes if isinstance(n, Card)]
    return Dream(light=light_hits(index, cards, now), rem=rem_hits(index, cards))


def health(scores: Mapping[str, float], in_memory: Iterable[str]) -> float:
    held = [scores.get(k, 0.0) for k in in_memory]
    return round(sum(held) / len(held), 4) if held else 0.0
