"""`alaya ingest`: session files in, session notes out (seed 000 §3.1, seed 004 L0).

Accepted inputs (vault_engine/sessions/formats/, detected or named with `--format`): the
session JSON of seed 000, JSONL messages (seed 004), text transcripts, Claude Code
transcripts, ChatGPT and Claude.ai exports, OpenClaw session files.

Every session becomes `sessions/YYYY-MM/<session-id>.md` — each turn a callout with its block
anchor `^tN` — and the raw input is kept beside it, unchanged. Re-ingesting the same session
changes nothing; a session that grew (same id, more turns) gets only the new turns appended.
Input is validated completely before anything is written; a failure writes nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vault_engine.errors import UsageError
from vault_engine.primitives import now
from vault_engine.store.frontmatter import NoteText, format_datetime, new_note_text
from vault_engine.store.namespaces import home_folder
from vault_engine.store.notes import parse_turns
from vault_engine.store.vault import Vault

from .formats import FORMATS, IngestError, SessionIn, TurnIn, parse_input

MAX_TURN_CHARS = 20_000  # longer turns are cut in the note (the raw file keeps everything)
__all__ = ["FORMATS", "IngestError", "IngestReport", "SessionIn", "TurnIn", "ingest",
           "parse_input", "read_inputs"]


# -- rendering -----------------------------------------------------------------------------

def turn_note_text(turn: TurnIn) -> str:
    """A turn's text as the note holds it: cut past MAX_TURN_CHARS, tool calls noted."""
    text = turn.content.strip("\n").rstrip()
    if len(text) > MAX_TURN_CHARS:
        cut = len(text) - MAX_TURN_CHARS
        text = text[:MAX_TURN_CHARS] + f"\n\n… [{cut:,} more characters in the raw file]"
    if turn.tool_calls:
        text += "\n\n*tool calls: " + ", ".join(turn.tool_calls) + "*"
    return text


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.splitlines() or [""])


def injection_turns(turns: Sequence[TurnIn]) -> list[str]:
    """Anchors of the turns that read as a prompt injection (vault_engine/text/injection.py):
    the session note lists them, distill and recall leave them out.

    A turn is read as its speaker said it, and two more ways: a `system` or `developer` turn
    after the conversation began (a `SYSTEM:` line in a text transcript, a role message in the
    middle of a chat) is read with its role as the line's head — a role marker, judged as one;
    and consecutive turns of one speaker are read together, so an order split over two
    messages ("… ignore every" / "instruction you had before this …") marks both."""
    from vault_engine.text.injection import is_injection

    flagged: set[int] = set()
    begun = False
    for i, t in enumerate(turns):
        role = (t.role or "").lower()
        if is_injection(t.content) or begun and role in ("system", "developer") \
                and is_injection(f"{role.capitalize()}: {t.content}"):
            flagged.add(i)
        begun = begun or role in ("user", "human")
    for i in range(len(turns) - 1):
        a, b = turns[i], turns[i + 1]
        if i in flagged or i + 1 in flagged or (a.role, a.name) != (b.role, b.name) \
                or not a.content.strip() or not b.content.strip():
            continue
        if is_injection(a.content.rstrip() + "\n" + b.content.lstrip()):
            flagged |= {i, i + 1}
    return [f"t{i + 1}" for i in sorted(flagged)]


def shown_time(when: dt.datetime, tz: dt.tzinfo | None) -> str:
    """A time for people, in the vault's zone (`[vault] timezone`): `2026-04-23T13:52:07+08:00`;
    in UTC the usual `…Z`. Either reads back as the same instant."""
    if tz is None or when.astimezone(tz).utcoffset() == dt.timedelta(0):
        return format_datetime(when)
    return when.astimezone(tz).replace(microsecond=0).isoformat()


def render_turn(index: int, turn: TurnIn, fallback_time: dt.datetime | None,
                tz: dt.tzinfo | None = None) -> str:
    when = turn.timestamp or fallback_time
    speaker = (turn.name or turn.role).replace("·", "-")
    head = f"> [!{turn.role}] t{index} · {turn.role} · {speaker}"
    dates = turn_dates(turn.content, when, tz)
    if when or turn.turn_id or dates:
        head += f" · {shown_time(when, tz) if when else '-'}"
    if turn.turn_id:
        head += f" · id {turn.turn_id.replace('·', '-')}"
    if dates:
        head += " · dates: " + "; ".join(f"{said} = {day}" for said, day in dates)
    return f"{head}\n{_quote(turn_note_text(turn))}\n\n^t{index}\n\n"


def turn_dates(text: str, when: dt.datetime | None,
               tz: dt.tzinfo | None) -> list[tuple[str, str]]:
    """The relative dates a turn names ("yesterday", "上周六", "two weeks ago"), made absolute
    against when it was said in the vault's zone, for the turn's header: the note then says
    which day was meant, for a person, an agent and recall alike (docs/vault-format.md)."""
    if when is None or not text:
        return []
    from vault_engine.text.when import relative_dates

    return relative_dates(text, when, tz)


def session_paths(session: SessionIn, namespace: str | None = None) -> tuple[str, str]:
    """(note, raw file) of a new session: `sessions/YYYY-MM/<id>` for `shared`, under the
    namespace's own folder otherwise (`sessions/@alice/YYYY-MM/<id>`, store/namespaces.py
    `home_folder`) — so another agent's session of the same id is never in the way."""
    month = (session.started or now()).strftime("%Y-%m")
    base = f"{home_folder(f'sessions/{month}', namespace)}/{session.id}"
    return base + ".md", base + session.raw_ext


def render_session(session: SessionIn, note_rel: str, raw_rel: str,
                   tz: dt.tzinfo | None = None, namespace: str = "shared") -> str:
    title = f"Session {shown_time(session.started, tz)[:16].replace('T', ' ')}" \
        if session.started else f"Session {session.id}"
    if session.channel:
        title += f" · {session.channel}"
    if session.agent:
        title += f" · {session.agent}"
    speakers = sorted({t.name for t in session.turns if t.name})
    meta: dict[str, Any] = {
        "id": session.id, "title": title, "channel": session.channel, "agent": session.agent,
        "started": session.started,
        "ended": max((t.timestamp for t in session.turns if t.timestamp), default=None),
        "speakers": speakers or None, "turns": len(session.turns), "raw": raw_rel,
        "raw_sha256": hashlib.sha256(session.raw).hexdigest(),
        # whose conversation it is (store/namespaces.py); shared ones carry no key
        "namespace": namespace if namespace != "shared" else None,
        # turns addressed to the memory or the model: kept as said, never obeyed
        "injection_turns": injection_turns(session.turns) or None,
    }
    # metadata fields that read as an injection, left out of the note (formats/fields.py)
    for key in ("duration_ms", "model", "tokens", "topic", "cwd", "git_branch", "injection_fields"):
        if key in session.metadata:
            meta[key] = session.metadata[key]
    body = "".join(render_turn(i, t, session.started, tz) for i, t in enumerate(session.turns, 1))
    return new_note_text(meta, body)


@dataclass
class IngestReport:
    session: str
    path: str
    action: str  # created | appended | unchanged
    turns: int
    new_turns: int


def _existing_turn_texts(text: str, body_line: int) -> list[str]:
    return [t.text for t in parse_turns(NoteText.parse(text).body, body_line)]


def plan_session(vault: Vault, session: SessionIn) -> tuple[IngestReport, str | None, str, str]:
    """Decide what ingesting `session` does. Returns (report, new note text or None, note
    path, raw path). Never writes."""
    report, text, note_rel, raw_rel = _plan(vault, session)
    limit = int(vault.config.get("vault", "max_note_bytes"))
    if text is not None and len(text.encode("utf-8")) > limit:
        raise IngestError(f"{session.id}: the session note would be "
                          f"{len(text.encode('utf-8')):,} bytes, over [vault] max_note_bytes "
                          f"({limit:,})", path=session.source,
                          fix="split the session into several, or raise max_note_bytes")
    return report, text, note_rel, raw_rel


def _plan(vault: Vault, session: SessionIn) -> tuple[IngestReport, str | None, str, str]:
    namespace = vault.caller.session_home(vault.config)
    note_rel, raw_rel = session_paths(session, namespace)
    existing = _find_session_note(vault, session.id) or note_rel
    if existing != note_rel:
        note_rel = existing
        raw_rel = note_rel[:-3] + session.raw_ext
    full = vault.abspath(note_rel)
    if not full.exists():
        return (IngestReport(session.id, note_rel, "created", len(session.turns),
                             len(session.turns)),
                render_session(session, note_rel, raw_rel, vault.config.timezone(),
                               namespace), note_rel, raw_rel)
    old_text, _ = vault.read_text(note_rel)
    doc = NoteText.parse(old_text, path=note_rel)
    old_turns = _existing_turn_texts(old_text, doc.body_line)
    new_turns = [turn_note_text(t) for t in session.turns]
    if len(session.turns) < len(old_turns):
        raise IngestError(f"{session.id}: the input has {len(session.turns)} turns but the vault "
                          f"already holds {len(old_turns)}", path=note_rel,
                          fix="ingest the complete session (alaya only appends turns)")
    for i, (a, b) in enumerate(zip(old_turns, new_turns, strict=False), start=1):
        if a.strip() != b.strip():
            raise IngestError(f"{session.id}: turn t{i} differs from the one already ingested",
                              path=note_rel,
                              fix="a session is append-only; give the edited one a new id")
    if len(session.turns) == len(old_turns):
        return IngestReport(session.id, note_rel, "unchanged", len(old_turns), 0), None, \
            note_rel, raw_rel
    extra = "".join(render_turn(i, t, session.started, vault.config.timezone())
                    for i, t in enumerate(session.turns[len(old_turns):], len(old_turns) + 1))
    doc.body = doc.body + ("" if doc.body.endswith("\n\n") or not doc.body else "\n") + extra
    doc.set("turns", len(session.turns))
    doc.set("raw_sha256", hashlib.sha256(session.raw).hexdigest())
    flagged = injection_turns(session.turns)
    if flagged:
        old = doc.frontmatter.data.get("injection_turns")
        doc.set("injection_turns", sorted(set(flagged) | set(old if isinstance(old, list)
                                                              else []),
                                          key=lambda a: int(str(a)[1:] or 0)))
    ended = max((t.timestamp for t in session.turns if t.timestamp), default=None)
    if ended:
        doc.set("ended", ended)
    return (IngestReport(session.id, note_rel, "appended", len(session.turns),
                         len(session.turns) - len(old_turns)), doc.render(), note_rel, raw_rel)


def _find_session_note(vault: Vault, session_id: str) -> str | None:
    """The note of session `session_id` the caller may read (`sessions/YYYY-MM/<id>.md`, or
    under a namespace's folder). Another agent's session of that id is not there for this
    caller — exactly as a missing one: no content of it is ever compared."""
    sessions = vault.root / "sessions"
    if not sessions.is_dir():
        return None
    from vault_engine.store.namespaces import namespace_in_head

    for pattern in (f"*/{session_id}.md", f"@*/*/{session_id}.md"):
        for path in sorted(sessions.glob(pattern)):
            try:
                head = path.read_text(encoding="utf-8", errors="replace")[:4096]
            except OSError:
                continue
            if vault.caller.may_read(namespace_in_head(head)):
                return path.relative_to(vault.root).as_posix()
    return None


def read_inputs(paths: Sequence[str], stdin: bytes | None = None) -> list[tuple[str, bytes]]:
    """Expand globs and read every input ('-' reads `stdin`)."""
    import glob

    out: list[tuple[str, bytes]] = []
    for p in paths:
        if p == "-":
            out.append(("<stdin>", stdin or b""))
            continue
        matches = sorted(glob.glob(p)) if any(c in p for c in "*?[") else [p]
        if not matches:
            raise UsageError(f"no file matches {p!r}", fix="check the path or the glob")
        for m in matches:
            path = Path(m)
            if path.is_dir():
                raise UsageError(f"{m} is a folder", fix=f"use a glob such as '{m}/*.json'")
            try:
                out.append((m, path.read_bytes()))
            except OSError as exc:
                raise UsageError(f"cannot read {m}: {exc.strerror}",
                                 fix="check the path and permissions") from None
    return out


def ingest(vault: Vault, inputs: Iterable[tuple[str, bytes]], *, commit: bool = True,
           redact: bool = True, fmt: str | None = None) -> tuple[list[IngestReport], str | None]:
    """Parse every input first (all or nothing), then write the sessions in one commit.
    `fmt`: the format of every input (formats.FORMATS); None detects each one's.

    `redact` (the default): every secret in the input — API keys, tokens, private keys,
    passwords, in English or Chinese phrasing — is replaced before anything is written, in
    the note and in the raw file (vault_engine/text/secrets.py)."""
    sessions: list[SessionIn] = []
    for source, data in inputs:
        if redact:
            from vault_engine.text.secrets import redact_input

            data = redact_input(data)
        sessions.extend(parse_input(data, source, fmt))
    ids = [s.id for s in sessions]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise IngestError(f"the same session id appears twice in this input: {sorted(dup)}",
                          fix="ingest one version of each session")
    reports: list[IngestReport] = []
    with vault.locked():
        from vault_engine.store.journal import recover

        if commit:
            recover(vault)  # a killed ingest's notes are committed before anything is planned
        plans = [plan_session(vault, s) for s in sessions]
        changed = [(s, p) for s, p in zip(sessions, plans, strict=True) if p[1] is not None]
        if not changed:
            return [p[0] for p in plans], None
        lines = [f"{p[0].session}: {p[0].action} {p[0].new_turns} turn(s)" for _, p in changed]
        first = changed[0][1][0]
        message = (f"ingest: {first.session} ({first.new_turns} turns)" if len(changed) == 1
                   else f"ingest: {len(changed)} sessions")
        with vault.transaction(message + "\n\n" + "\n".join(lines), commit=commit,
                               redact=redact) as tx:
            for session, (report, text, note_rel, raw_rel) in changed:
                assert text is not None
                tx.write_raw(raw_rel, session.raw)  # first: a note never names a missing raw
                if report.action == "created":
                    tx.create(note_rel, text)
                else:
                    tx.write(note_rel, text, vault.current_checksum(note_rel))
        reports = [p[0] for p in plans]
    return reports, tx.sha
