"""`alaya capture`: a running conversation, as JSONL messages, into a session note (seed 004 L0).

Each line is one message: `{"role": "user", "content": "…", "name"?, "timestamp"?, "id"?}`.

- **From a file that grows** (an agent's transcript): every pass reads the file's complete lines
  (a line still being written — no newline yet — waits for the next pass) and ingests the whole
  conversation so far. Ingest is append-only and checks that the note's turns are a prefix of
  the input, so a crash or a restart at any moment neither loses nor duplicates a turn: the
  file is the record, the note catches up with it.
- **From stdin** (a stream that cannot be re-read): each complete line is first appended and
  fsynced to a spool, `.alaya/capture/<session>.jsonl`, and the spool is ingested; after a
  restart, messages whose `id` the spool already holds are skipped.

A checkpoint (`.alaya/capture/<session>.json`: bytes and turns consumed) makes an unchanged
file cost nothing. One commit per flush. A malformed line is reported with its line number
and skipped; it stays in the source, never lost.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_engine.errors import UsageError
from vault_engine.store.ids import is_valid_id
from vault_engine.store.vault import Vault, atomic_write

from .ingest import IngestError


@dataclass
class CaptureStats:
    session: str
    turns: int = 0  # turns in the note after the last flush
    appended: int = 0  # turns this run added
    flushes: int = 0
    commits: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "line N: why"
    channel: str | None = None  # an agent transcript's own (claude-code, openclaw)
    metadata: dict[str, Any] = field(default_factory=dict)


def _state_dir(vault: Vault) -> Path:
    path = vault.state_dir / "capture"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _checkpoint(vault: Vault, session: str) -> dict[str, Any]:
    try:
        data = json.loads((_state_dir(vault) / f"{session}.json").read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_checkpoint(vault: Vault, session: str, data: dict[str, Any]) -> None:
    """Where the next capture resumes. The turns are already committed: a checkpoint the
    disk refuses only means the next capture reads the transcript again (and finds nothing
    new), so it is a notice, not a failure."""
    from vault_engine.errors import WriteRefusedError, notice, refused_write

    path = vault.state_dir / "capture" / f"{session}.json"
    try:
        atomic_write(_state_dir(vault) / path.name, json.dumps(data).encode("utf-8"),
                     durable=False)
    except (OSError, WriteRefusedError) as exc:
        refused = refused_write(exc, path)
        if refused is None:
            raise
        notice(f"{refused} — the capture checkpoint was not saved; the next capture of "
               f"{session} reads the transcript again")


def transcript_format(data: bytes) -> str | None:
    """"claude-code" or "openclaw" when `data` is such an agent's transcript, else None
    (JSONL messages)."""
    from .formats import claude_code, openclaw
    from .formats import detect_records as records

    if data.lstrip()[:1] != b"{":
        return None
    sample = records(data)
    if claude_code.looks_like(sample):
        return "claude-code"
    return "openclaw" if openclaw.looks_like(sample) else None


def default_session(source: Path) -> str:
    """The session id `capture` uses for a file: the transcript's own (what `ingest` gives
    the same file), else the file's name."""
    try:
        with source.open("rb") as fh:
            head = fh.read(1 << 20)
    except OSError:
        return source.stem
    fmt = transcript_format(head)
    if fmt is None:
        return source.stem
    data = source.read_bytes()
    return _agent_session(fmt, data[:data.rfind(b"\n") + 1], str(source), final=True).id


def _agent_session(fmt: str, data: bytes, source: str, *, final: bool) -> Any:
    from .formats import claude_code, openclaw

    parse = claude_code.parse if fmt == "claude-code" else openclaw.parse
    return parse(data, source, final=final)


def _messages(data: bytes, stats: CaptureStats,
              final: bool = True) -> tuple[list[dict[str, Any]], int]:
    """Complete lines → messages; returns them and the byte offset after the last one. An
    agent's transcript (Claude Code, OpenClaw) is read in its own format; `final=False`
    holds its last turn back while it may still grow."""
    end = data.rfind(b"\n") + 1
    fmt = transcript_format(data[:end])
    if fmt is not None:
        from vault_engine.store.frontmatter import format_datetime

        parsed = _agent_session(fmt, data[:end], "transcript", final=final)
        stats.channel, stats.metadata = parsed.channel, parsed.metadata
        return [{"role": t.role, "content": t.content, "name": t.name, "id": t.turn_id,
                 "timestamp": format_datetime(t.timestamp) if t.timestamp else None}
                for t in parsed.turns], end
    out = []
    for n, line in enumerate(data[:end].split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError as exc:
            note = f"line {n}: not JSON ({exc})"
            if note not in stats.skipped:
                stats.skipped.append(note)
            continue
        if not isinstance(msg, dict) or "content" not in msg:
            note = f"line {n}: not a message (needs role and content)"
            if note not in stats.skipped:
                stats.skipped.append(note)
            continue
        out.append(msg)
    return out, end


def _flush(vault: Vault, session: str, messages: list[dict[str, Any]],
           stats: CaptureStats, meta: dict[str, Any], redact: bool = True) -> None:
    from .ingest import ingest

    if not messages:
        return
    obj = {"id": session, **({"channel": stats.channel} if stats.channel else {}),
           **({"metadata": stats.metadata} if stats.metadata else {}), **meta,
           "turns": messages}
    try:
        reports, sha = ingest(vault, [(f"{session}.json", json.dumps(obj).encode("utf-8"))],
                              redact=redact)
    except IngestError as exc:
        raise IngestError(f"capture {session}: {exc.message}", path=exc.path,
                          fix=exc.fix or "") from None
    stats.flushes += 1
    for r in reports:
        stats.turns = r.turns
        stats.appended += r.new_turns
    if sha:
        stats.commits.append(sha)


def _clean_name(session: str) -> str:
    """A session name without a token pasted into it: it names the spool, the checkpoint and
    the note (docs/security.md §2)."""
    from vault_engine.redaction import redact_name

    if redact_name(session) == session:
        return session
    from .formats.base import session_id

    return session_id(session, session)


def capture_file(vault: Vault, source: Path, session: str, *, follow: bool = False,
                 poll_s: float = 0.5, idle_s: float | None = None,
                 should_stop: Callable[[], bool] = lambda: False,
                 meta: dict[str, Any] | None = None,
                 on_flush: Callable[[CaptureStats], None] | None = None,
                 redact: bool = True) -> CaptureStats:
    _check_session(session)
    session = _clean_name(session) if redact else session
    stats = CaptureStats(session)
    last_change = time.monotonic()
    while True:
        try:
            data = source.read_bytes()
        except FileNotFoundError:
            if not follow:
                raise UsageError(f"{source} does not exist", path=str(source),
                                 fix="pass the transcript file the agent writes") from None
            data = b""
        point = _checkpoint(vault, session)
        stats.turns = stats.turns or int(point.get("turns") or 0)
        end = data.rfind(b"\n") + 1
        if point.get("source") != str(source) or point.get("offset") != end:
            messages, end = _messages(data, stats, final=not follow)
            if len(messages) != point.get("turns"):
                before = stats.appended
                _flush(vault, session, messages, stats, meta or {}, redact)
                if on_flush and stats.appended > before:
                    on_flush(stats)
            _save_checkpoint(vault, session, {"source": str(source), "offset": end,
                                              "turns": len(messages)})
            last_change = time.monotonic()
        if not follow:
            return stats
        if should_stop() or (idle_s is not None and time.monotonic() - last_change > idle_s):
            # the turn held back while the transcript could still grow is complete now
            messages, _ = _messages(data, stats, final=True)
            if len(messages) > int(_checkpoint(vault, session).get("turns") or 0):
                before = stats.appended
                _flush(vault, session, messages, stats, meta or {}, redact)
                if on_flush and stats.appended > before:
                    on_flush(stats)
            return stats
        time.sleep(poll_s)


def capture_stream(vault: Vault, lines: Iterable[bytes], session: str, *, batch: int = 1,
                   meta: dict[str, Any] | None = None,
                   on_flush: Callable[[CaptureStats], None] | None = None,
                   redact: bool = True) -> CaptureStats:
    """stdin: every complete line is spooled (fsync) before it counts; the spool is what gets
    ingested. Messages with an `id` already in the spool are skipped after a restart. With
    `redact`, a line's secrets are replaced before it reaches the spool."""
    _check_session(session)
    session = _clean_name(session) if redact else session
    stats = CaptureStats(session)
    spool = _state_dir(vault) / f"{session}.jsonl"
    spooled, _ = _messages(spool.read_bytes() if spool.exists() else b"", stats)
    seen = {str(m["id"]) for m in spooled if m.get("id") is not None}
    pending = 0
    from vault_engine.redaction import Scanner

    scanner = Scanner()  # a private key pasted over several messages is masked to its END
    fd = os.open(spool, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for line in lines:
            if not line.endswith(b"\n"):
                stats.skipped.append("the last line ended without a newline (cut off): "
                                     "not captured")
                break
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            if isinstance(msg, dict) and msg.get("id") is not None and str(msg["id"]) in seen:
                continue
            if isinstance(msg, dict) and msg.get("id") is not None:
                seen.add(str(msg["id"]))
            if redact:
                from vault_engine.text.secrets import redact_input

                line = redact_input(line, scanner)
            os.write(fd, line)
            os.fsync(fd)
            pending += 1
            if pending >= batch:
                _flush_spool(vault, spool, session, stats, meta, on_flush, redact)
                pending = 0
    finally:
        os.close(fd)
    _flush_spool(vault, spool, session, stats, meta, on_flush, redact)
    return stats


def _flush_spool(vault: Vault, spool: Path, session: str, stats: CaptureStats,
                 meta: dict[str, Any] | None,
                 on_flush: Callable[[CaptureStats], None] | None, redact: bool = True) -> None:
    messages, _ = _messages(spool.read_bytes(), stats)
    before = stats.appended
    _flush(vault, session, messages, stats, meta or {}, redact)
    if on_flush and stats.appended > before:
        on_flush(stats)


def _check_session(session: str) -> None:
    if not is_valid_id(session):
        raise UsageError(f"session id {session!r} is not a valid id",
                         fix="use letters, digits, '-', '_' and '.' (e.g. --session chat-0412)")
