"""Passive validation (seed 003 §3.3.4): what later sessions say about a claim, without anyone
asking. Part of introspect's conflicts phase.

For every supported claim of a card or entity, every session that started after the claim
(its `valid_from`, else the note's `created`) and is not already among its evidence is read
sentence by sentence (Chinese and English). A sentence **confirms** the claim when it restates
it — most of the claim's content words are in it (overlap ≥ 0.6, at least 3 shared: for
Chinese, jieba words) — and asserts the same values (no quantity, identifier, number,
name or negation that differs, vault_engine.care.detection). Each confirming session adds
+0.15 confidence (up to 1.0) and is recorded as evidence, so the next run does not count it
again. A sentence that restates the claim's subject (content Jaccard ≥ 0.6) but **differs** in
a value contradicts it: the claim is marked `contested` and the sentence is listed in
reports/contradictions.md for a person to settle.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

from vault_engine.care.detection import LIVE, SIMILAR, _content, _jaccard, differs, values
from vault_engine.store.model import Card, Claim, Entity, Note, Session
from vault_engine.store.namespaces import may_name
from vault_engine.text.overlap import overlap

CONFIRM_OVERLAP, CONFIRM_SHARED = 0.6, 3
CONFIDENCE_STEP = 0.15  # seed 003 §3.3.4
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|[。！？；;，\n]+")


@dataclass(frozen=True)
class Observation:
    note: Note
    claim: Claim
    session: Session
    anchor: str | None
    sentence: str
    kind: str  # confirms | contradicts
    detail: str = ""

    @property
    def source(self) -> str:
        name = self.session.stem  # the file name: a link Obsidian opens (ids stay in frontmatter)
        return f"[[{name}#^{self.anchor}]]" if self.anchor else f"[[{name}]]"


def _sentences(text: str) -> Iterable[str]:
    for part in _SENTENCE_RE.split(text):
        part = part.strip(" >*-`")
        if len(part) >= 4:
            yield part


def _cited(claim: Claim) -> set[str]:
    out = set()
    for ev in claim.evidence:
        if ev.link is not None and ev.link.target:
            out.add(ev.link.target.casefold())
    return out


def observations(notes: Iterable[Note], now: dt.datetime) -> list[Observation]:
    notes = list(notes)
    sessions = sorted((n for n in notes if isinstance(n, Session) and n.started is not None
                       and n.started <= now), key=lambda s: (s.started, s.path))
    split = {s.path: [(t.anchor, x, _content(x)) for t in s.turns for x in _sentences(t.text)]
             for s in sessions}
    out: list[Observation] = []
    for note in notes:
        if not isinstance(note, Card | Entity):
            continue
        created = note.created if isinstance(note, Card) else None
        for claim in note.claims:
            if claim.status not in LIVE or not claim.text.strip():
                continue
            since = claim.valid_from or created
            mine = _content(claim.text)
            if since is None or len(mine) < CONFIRM_SHARED:
                continue
            claimed = values(claim.text)
            cited = _cited(claim)
            for s in sessions:
                assert s.started is not None
                if not may_name(note.namespace, s.namespace):
                    continue  # a card is judged only by sessions all its readers may read
                if s.started <= since or {x.casefold() for x in (s.id, s.stem) if x} & cited:
                    continue
                for anchor, sentence, theirs in split[s.path]:
                    shared = len(mine & theirs)
                    if shared < CONFIRM_SHARED:
                        continue
                    how = differs(claimed, values(sentence))
                    if how is None and overlap(mine, theirs) >= CONFIRM_OVERLAP:
                        out.append(Observation(note, claim, s, anchor, sentence, "confirms"))
                        break
                    if how is not None and _jaccard(mine, theirs) >= SIMILAR:
                        out.append(Observation(note, claim, s, anchor, sentence, "contradicts",
                                               how[1]))
                        break
    return out
