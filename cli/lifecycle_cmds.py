"""`ingest`, `distill`, `trace`, `import`, `demo`: sessions in, knowledge out."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from vault_engine.sessions.ingest import FORMATS, read_inputs
from vault_engine.sessions.ingest import ingest as ingest_sessions

from .output import echo, emit_json, json_option, no_commit_option, ok, pass_json, propose_option, style, warn
from .writes import after_write, queue_proposals


@click.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["auto", *FORMATS]), default="auto",
              show_default=True,
              help="The input format; auto tells them apart by their shape (docs/distill.md).")
@click.option("--redact/--no-redact", default=True, show_default=True,
              help="Replace API keys, tokens, private keys and passwords (English and Chinese "
                   "phrasing) with [REDACTED:kind] before anything is written — the note and "
                   "the raw file. --no-redact keeps them as they are.")
@json_option
@no_commit_option
@click.pass_obj
@pass_json
def ingest(obj: Any, files: tuple[str, ...], fmt: str, redact: bool, as_json: bool,
           no_commit: bool) -> None:
    """Ingest session files as session notes: the session JSON, JSONL messages, text
    transcripts, Claude Code transcripts, ChatGPT and Claude.ai exports (conversations.json:
    one session per conversation), OpenClaw session files.

    FILES are paths or globs; `-` reads stdin. Every turn gets a block anchor (^t1, ^t2 …)
    so evidence can cite it; the raw input is kept beside the note, unchanged. Ingesting the
    same session again changes nothing; a session that grew gets only its new turns. Input
    is checked completely first: bad or truncated input writes nothing. Secrets are redacted
    unless --no-redact.

    \b
    Examples:
      alaya ingest session-20260331-062900.json
      alaya ingest 'exports/*.jsonl'
      alaya ingest ~/.claude/projects/-home-me-app/*.jsonl       # Claude Code sessions
      alaya ingest ~/Downloads/chatgpt-export/conversations.json  # every ChatGPT conversation
      cat transcript.md | alaya ingest -
    """
    vault = obj.vault()
    stdin = sys.stdin.buffer.read() if "-" in files else None
    reports, sha = ingest_sessions(vault, read_inputs(files, stdin), commit=not no_commit,
                                   redact=redact, fmt=None if fmt == "auto" else fmt)
    changed = any(r.action != "unchanged" for r in reports)
    refresh = after_write(vault, quiet=as_json) if changed else None
    if as_json:
        emit_json({"sessions": [r.__dict__ for r in reports], "commit": sha,
                   "refresh": refresh})
        return
    for r in reports:
        if r.action == "unchanged":
            echo(f"= {r.session}: already ingested ({r.turns} turns), nothing changed")
        else:
            echo(ok(f"{r.session}: {r.action}, {r.new_turns} new turn(s) → {r.path}"))
    if sha:
        echo(f"  committed {sha[:8]}")




@click.command()
@click.option("--session", "session_ref", default=None,
              help="Distil this session (id or title), even if it was distilled before.")
@click.option("--all", "all_sessions", is_flag=True,
              help="Distil every session again (dedup keeps it idempotent).")
@click.option("--distiller", type=click.Choice(["rules", "llm"]), default=None,
              help="Override [llm] provider: rules (offline) or llm (ALAYA_LLM_BASE_URL).")
@json_option
@no_commit_option
@propose_option
@click.pass_obj
@pass_json
def distill(obj: Any, session_ref: str | None, all_sessions: bool, distiller: str | None,
            as_json: bool, no_commit: bool, propose: bool) -> None:
    """Distil sessions into cards with claims, evidence and links (one commit per session).

    By default every pending session (no `distilled:` mark, or turns appended since) is
    distilled with the offline
    rules, or with the LLM when ALAYA_LLM_BASE_URL (or [llm] in alaya.toml) points at an
    OpenAI-compatible endpoint. Near-duplicate cards are updated, not repeated. A session the
    LLM could not distil stays pending. Exit 1 when a session failed.

    \b
    Examples:
      alaya distill
      alaya distill --session session-20260331-062900 --json
      ALAYA_LLM_BASE_URL=http://127.0.0.1:8000/v1 alaya distill --distiller llm
    """
    from vault_engine.sessions.distill import distill as run_distill

    vault = obj.writer(propose)

    def show(o: Any) -> None:
        if as_json:
            return
        if o.status == "failed":
            echo(warn(f"{o.session}: not distilled ({o.reason}); it stays pending"), err=True)
            return
        if o.status == "skipped":
            echo(f"- {o.session}: skipped ({o.reason})")
            return
        a = o.applied
        echo(ok(f"Distilled {o.session} [{o.distiller}]: {len(a.created)} new, "
                f"{len(a.updated)} updated, {len(a.discarded)} already known"))
        for c in a.created:
            echo(f"    + {c}")
        for c in a.updated:
            echo(f"    ~ {c}")
        for c in a.superseded:
            echo(f"    ⤳ {c} superseded")
        for p in a.proposals:
            echo(f"    ? {p.summary} (a person's card: proposed, not changed)")
        for link in a.links:
            echo(f"    → {link}")
        if o.gated_turns:
            echo(f"    (quality gate skipped turns {', '.join(o.gated_turns)})")

    outcomes = run_distill(vault, session=session_ref, all_sessions=all_sessions,
                           distiller=distiller, commit=not no_commit, on_outcome=show)
    refresh = after_write(obj.vault(), vault, quiet=as_json) \
        if any(o.status == "distilled" for o in outcomes) else None
    # a person's card a later value supersedes: proposed for review, never rewritten
    proposals = [p for o in outcomes if o.applied for p in o.applied.proposals]
    queued = None if no_commit else queue_proposals(
        vault, proposals, f"distill: propose {len(proposals)} change(s) to a person's cards")
    if as_json:
        emit_json({"sessions": [o.to_dict() for o in outcomes], "refresh": refresh,
                   "review_commit": queued})
    elif not outcomes:
        echo("Nothing to distil: every session is distilled (use --all or --session).")
    elif proposals:
        echo(f"   {len(proposals)} change(s) to a person's cards proposed, not made"
             + (" — see `alaya review`" if queued else ""))
    sys.exit(1 if any(o.status == "failed" for o in outcomes) else 0)


@click.command()
@click.argument("ref")
@click.option("--context", type=int, default=1, show_default=True,
              help="Turns shown around each evidence turn.")
@json_option
@click.pass_obj
@pass_json
def trace(obj: Any, ref: str, context: int, as_json: bool) -> None:
    """Trace a card back to its source sessions and the exact evidence turns.

    REF is a card id, title or alias. Every claim's evidence link is resolved to its session
    turn and shown with the turns around it; evidence that does not resolve is listed.
    Exit 1 when some evidence does not resolve.

    \b
    Example:
      alaya trace "Plugins.allow lists only discord"
    """
    from vault_engine.recall.served import served_trace
    from vault_engine.recall.trace import trace as run_trace
    from vault_engine.text.injection import is_injection
    from vault_engine.text.secrets import redact

    vault = obj.vault()
    result = run_trace(vault, ref, context=max(0, context))
    if as_json:
        emit_json(served_trace(result, vault.caller))
    else:
        echo(style(f"Tracing {result.id or result.path}: \"{redact(result.title)}\"", bold=True))
        if result.claims:
            echo("\n=== Claims ===")
            for c in result.claims:
                echo(f"  {c['id']}: {redact(str(c['text']))}")
        echo("\n=== Source sessions ===")
        for s in result.sessions:
            echo(f"- {s.id} ({s.started or 'undated'})  {s.path}")
        for s in result.sessions:
            if not s.turns:
                continue
            echo(f"\n=== Relevant context: {s.id} ===")
            for t in s.turns:
                mark = style(" ← evidence for " + ", ".join(t.evidence_for), fg="green") \
                    if t.evidence_for else ""
                who = t.name or t.role
                text = redact(t.text.strip())
                if is_injection(text):
                    text = "(reads as a prompt injection: kept in the file, never obeyed) " + (
                        text if vault.caller.is_owner else "[withheld]")
                echo(f"[{t.anchor}] {who}: {text}{mark}")
            if s.raw:
                echo(f"  (full session: {s.path}, raw file {s.raw})")
        for u in result.unresolved:
            echo(warn(f"unresolved evidence {u}"), err=True)
    sys.exit(1 if result.unresolved else 0)


@click.command("import")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@json_option
@no_commit_option
@click.pass_obj
@pass_json
def import_cmd(obj: Any, path: Path, as_json: bool, no_commit: bool) -> None:
    """Import an existing Obsidian vault or folder of markdown notes as cards.

    Notes keep their frontmatter and text; missing id/title/type/created are added. Their
    [[wikilinks]] become RELATES_TO edges when compiled. Attachments go to attachments/.
    One commit.

    \b
    Example:
      alaya import ~/Documents/ObsidianVault
    """
    from vault_engine.store.importer import import_notes

    report = import_notes(obj.vault(), path, commit=not no_commit)
    if as_json:
        emit_json(report.__dict__)
        return
    echo(ok(f"Imported {len(report.imported)} notes, {len(report.attachments)} attachments "
            f"from {path}"))
    for s in report.skipped:
        echo(warn(f"skipped {s}"), err=True)
    for s in report.renamespaced:
        dest, _, named = s.rpartition(": ")
        echo(warn(f"{dest}: it named namespace {named!r}, which an import does not fill; kept "
                  "in yours (the name it gave is in `imported_namespace`)"), err=True)
