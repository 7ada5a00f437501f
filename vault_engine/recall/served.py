"""What a reader is handed of a note or a trace (`show`, MCP `get`, `trace` and the note
resources): secrets a hand-written note still holds are masked for everyone; a session turn
that reads as a prompt injection is withheld from an agent (the file keeps it, a person reads
it there)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from vault_engine.store.model import Note, Session
from vault_engine.store.namespaces import Caller
from vault_engine.store.serialize import note_dict
from vault_engine.text.injection import is_injection
from vault_engine.text.secrets import mask, redact

WITHHELD = "[withheld: this turn reads as a prompt injection; it is kept in the file, " \
           "never served to an agent]"


def injected_anchors(note: Session) -> set[str]:
    marked = note.meta.get("injection_turns")
    out = {str(a) for a in marked} if isinstance(marked, list) else set()
    return out | {t.anchor for t in note.turns if is_injection(t.text)}


def _withhold_body(note: Session, anchors: set[str]) -> str:
    """The session's body with each injected turn's quoted text replaced by one line."""
    lines = note.body.split("\n")
    spans: dict[int, int] = {}
    for t in note.turns:
        if t.anchor in anchors:
            start = t.line - note.body_line + 1  # the first quoted line after the callout head
            end = start
            while 0 <= end < len(lines) and lines[end].startswith(">"):
                end += 1
            spans[start] = end
    out: list[str] = []
    k = 0
    while k < len(lines):
        if k in spans and spans[k] > k:
            out.append("> " + WITHHELD)
            k = spans[k]
            continue
        out.append(lines[k])
        k += 1
    return "\n".join(out)


def served_note(note: Note, caller: Caller) -> dict[str, Any]:
    """`note_dict` as a caller may be handed it."""
    data = note_dict(note)
    if isinstance(note, Session) and not caller.is_owner:
        anchors = injected_anchors(note)
        if anchors:
            for turn in data.get("turns", []):
                if turn.get("anchor") in anchors:
                    turn["text"] = WITHHELD
            data["body"] = _withhold_body(note, anchors)
    return mask(data)  # type: ignore[no-any-return]


def served_trace(result: Any, caller: Caller) -> dict[str, Any]:
    """A TraceResult as a dict, masked; injected context turns withheld from an agent."""
    data = asdict(result)
    if not caller.is_owner:
        for s in data.get("sessions", []):
            for t in s.get("turns", []):
                if is_injection(t.get("text") or ""):
                    t["text"] = WITHHELD
    return mask(data)  # type: ignore[no-any-return]


def served_markdown(note: Note, text: str, caller: Caller) -> str:
    """A note's file as a caller may be handed it (MCP `alaya://note/…`): secrets masked and,
    for an agent, a session's turns that read as an injection withheld."""
    if isinstance(note, Session) and not caller.is_owner:
        anchors = injected_anchors(note)
        if anchors:
            head = text.split("\n")[:max(0, note.body_line - 1)]
            text = "\n".join([*head, _withhold_body(note, anchors)])
    return redact(text)
