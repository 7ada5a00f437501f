"""`alaya trace CARD`: from knowledge back to where it came from (seed 000 §4.6).

For each claim, every evidence link `[[session#^tN]]` is resolved to the session note and the
exact turn; the turns around it (±`context`) are shown so the claim can be checked against
what was actually said. Sessions named only in `source_sessions` are listed too. Evidence
that does not resolve is reported, never silently dropped.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from vault_engine.store.frontmatter import format_datetime
from vault_engine.store.model import Card, Entity, Session, Turn
from vault_engine.store.vault import Vault


@dataclass(frozen=True)
class TracedTurn:
    anchor: str
    role: str
    name: str | None
    timestamp: str | None
    text: str
    evidence_for: tuple[str, ...]  # claim ids citing this turn (empty for context turns)


@dataclass
class TracedSession:
    id: str
    title: str
    path: str
    started: str | None
    raw: str | None
    turns: list[TracedTurn] = field(default_factory=list)


@dataclass
class TraceResult:
    id: str | None
    title: str
    path: str
    kind: str
    claims: list[dict[str, object]]
    sessions: list[TracedSession]
    unresolved: list[str]


def _when(value: dt.datetime | None) -> str | None:
    return format_datetime(value) if value else None


def trace(vault: Vault, ref: str, *, context: int = 1) -> TraceResult:
    index = vault.load()
    note = index.find(ref)
    claims = list(getattr(note, "claims", ()))
    cited: dict[str, dict[str, list[str]]] = {}  # session path → anchor → claim ids
    sessions: dict[str, Session] = {}
    unresolved: list[str] = []
    claim_rows = []
    for claim in claims:
        evidence_rows = []
        for ev in claim.evidence:
            row: dict[str, object] = {"kind": ev.kind, "source": ev.source,
                                      "confidence": ev.confidence, "resolved": False}
            if ev.link is not None:
                res = index.resolver.resolve_link(ev.link, note.path)
                target = res.note
                if isinstance(target, Session):
                    anchor = ev.link.block
                    if anchor is None or target.turn(anchor) is not None:
                        sessions[target.path] = target
                        if anchor:
                            cited.setdefault(target.path, {}).setdefault(anchor, []).append(claim.id)
                        row.update(resolved=True, session=target.id, anchor=anchor)
                    else:
                        unresolved.append(f"{claim.id}: {ev.source} (no turn ^{anchor} in "
                                          f"{target.path})")
                elif target is not None:
                    row.update(resolved=True, note=target.id or target.path)
                else:
                    unresolved.append(f"{claim.id}: {ev.source} ({res.reason})")
            evidence_rows.append(row)
        claim_rows.append({"id": claim.id, "text": claim.text, "confidence": claim.confidence,
                           "status": claim.status, "evidence": evidence_rows})
    for name in getattr(note, "source_sessions", ()):
        res = index.resolver.resolve(name, note.path, extras=True)
        if isinstance(res.note, Session):
            sessions.setdefault(res.note.path, res.note)
        else:
            unresolved.append(f"source_sessions: [[{name}]] ({res.reason})")
    out_sessions = []
    for path, session in sorted(sessions.items(), key=lambda kv: (_when(kv[1].started) or "",
                                                                   kv[0])):
        anchors = cited.get(path, {})
        wanted: set[int] = set()
        positions = {t.anchor: i for i, t in enumerate(session.turns)}
        for anchor in anchors:
            i = positions[anchor]
            wanted.update(range(max(0, i - context), min(len(session.turns), i + context + 1)))
        turns: list[Turn] = [session.turns[i] for i in sorted(wanted)]
        out_sessions.append(TracedSession(
            id=session.id or session.stem, title=session.title, path=session.path,
            started=_when(session.started), raw=session.raw,
            turns=[TracedTurn(anchor=t.anchor, role=t.role, name=t.name,
                              timestamp=_when(t.timestamp), text=t.text,
                              evidence_for=tuple(anchors.get(t.anchor, ())))
                   for t in turns]))
    kind = note.kind if not isinstance(note, Card | Entity) else note.kind
    return TraceResult(id=note.id, title=note.title, path=note.path, kind=kind,
                       claims=claim_rows, sessions=out_sessions, unresolved=unresolved)
