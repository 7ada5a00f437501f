"""JSON-ready views of the model (for `--json` output and, later, the agent digest)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Any

from .frontmatter import format_datetime
from .model import Card, Claim, Entity, Note, Relation, Session, Tombstone


def jsonable(value: Any) -> Any:
    """Datetimes → ISO strings, tuples → lists, mappings → dicts, recursively."""
    if isinstance(value, dt.datetime):
        return format_datetime(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if isinstance(value, float | int | str | bool) or value is None:
        return value
    return str(value)


def claim_dict(claim: Claim) -> dict[str, Any]:
    return {
        "id": claim.id, "text": claim.text, "confidence": claim.confidence,
        "status": claim.status, "valid_from": jsonable(claim.valid_from),
        "valid_until": jsonable(claim.valid_until), "line": claim.line,
        "evidence": [{"kind": e.kind, "source": e.source, "confidence": e.confidence}
                     for e in claim.evidence],
    }


def relation_dict(rel: Relation, resolved: str | None = None) -> dict[str, Any]:
    out = {"type": rel.type, "target": rel.target, "weight": rel.weight, "reason": rel.reason,
           "origin": rel.origin, "line": rel.line}
    if resolved is not None:
        out["target_path"] = resolved
    return out


def note_dict(note: Note, *, body: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": note.id, "title": note.title, "kind": note.kind, "path": note.path,
        "namespace": note.namespace, "tags": list(note.tags), "aliases": list(note.aliases),
        "relations": [relation_dict(r) for r in note.relations],
        "meta": jsonable(note.meta),
    }
    if isinstance(note, Card):
        out.update(type=note.type, created=jsonable(note.created),
                   updated=jsonable(note.updated), importance=note.importance,
                   pinned=note.pinned, source_sessions=list(note.source_sessions),
                   claims=[claim_dict(c) for c in note.claims])
    elif isinstance(note, Entity):
        out.update(type=note.entity_type, lane=note.lane, ask_for=list(note.ask_for),
                   claims=[claim_dict(c) for c in note.claims])
    elif isinstance(note, Session):
        out.update(started=jsonable(note.started), channel=note.channel, agent=note.agent,
                   raw=note.raw, turns=[jsonable(dataclasses.asdict(t)) for t in note.turns])
    elif isinstance(note, Tombstone):
        out.update(reason=note.reason, merged_into=note.merged_into,
                   archived=jsonable(note.archived))
    if body:
        out["body"] = note.body
    return out
