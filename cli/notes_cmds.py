"""`init`, `new`, `show`, `link`, `unlink`: thin wrappers over vault_engine."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from vault_engine.errors import UsageError
from vault_engine.store import cards as card_ops
from vault_engine.store.init_vault import init_vault
from vault_engine.store.model import Card, Entity, Session
from vault_engine.text import mend

from .output import (
    echo,
    emit_json,
    fail,
    json_option,
    no_commit_option,
    ok,
    pass_json,
    propose_option,
    style,
)
from .writes import after_write, shared_screen


@click.command()
@click.argument("path", required=False, type=click.Path(path_type=Path))
@json_option
@no_commit_option
@click.option("--no-compile", is_flag=True,
              help="Skip the first compile (recall needs one; `alaya compile` later).")
@click.pass_obj
@pass_json
def init(obj: object, path: Path | None, as_json: bool, no_commit: bool,
         no_compile: bool) -> None:
    """Create a vault at PATH (default: --vault) from the bundled template.

    Makes the folders, alaya.toml, MEMORY.md, persona.md, AGENTS.md, Obsidian settings and
    templates, then a git repository whose first commit holds them, then the first compile
    (so recall works at once and every later write is visible to the next recall). Running
    it again on a vault changes nothing; missing template files are added, existing files
    never touched.

    Over a folder or git repository that already has notes (adoption), no note is touched:
    an existing .gitignore, .gitattributes or AGENTS.md gets alaya's lines in a marked block
    at its end, existing Obsidian settings are kept, files the vault's .gitignore ignores are
    not committed, and only alaya's files are committed, authored by alaya.

    \b
    Example:
      alaya init ~/notes/agent-memory
      alaya init ~/Documents/MyObsidianVault     # adopt a vault you already keep
    """
    target = path or obj.vault_path  # type: ignore[attr-defined]
    result = init_vault(target, commit=not no_commit)
    build = None
    # a new vault is compiled at once (cheap: only the template); adopted notes are left for
    # an explicit `alaya compile`, which embeds them all
    if not result.already and not result.adopted and not no_compile:
        from compilers.pipeline import compile_vault
        from vault_engine.errors import WriteRefusedError
        from vault_engine.store.vault import Vault

        try:
            build = compile_vault(Vault.open(result.root, caller=obj.caller)).build  # type: ignore[attr-defined]
        except WriteRefusedError as exc:
            raise WriteRefusedError(
                f"the vault is created and committed, but its first compile was refused: "
                f"{exc.message}", path=exc.path,
                fix=(exc.fix or "").replace("run the command again", "run `alaya compile`")
            ) from exc
    if as_json:
        emit_json({"vault": str(result.root), "created": list(result.created),
                   "extended": list(result.extended), "kept": list(result.kept),
                   "adopted_notes": result.adopted,
                   "already_initialised": result.already, "commit": result.commit,
                   "commit_error": result.commit_error, "build": build})
        if result.commit_error:
            raise SystemExit(1)
        return
    if result.already:
        echo(ok(f"{result.root} is already an alaya vault; nothing changed"))
        return
    if result.adopted:
        echo(ok(f"Adopted {result.adopted} existing notes in {result.root} (none changed)"))
    echo(ok(f"Created {len(result.created)} files in {result.root}"))
    for rel in result.extended:
        echo(f"  Added alaya's marked block to your {rel} (your lines are unchanged)")
    for line in result.kept:
        echo(f"  Kept: {line}")
    if result.commit:
        echo(ok(f"Committed {result.commit[:8]} as alaya: init"))
    if result.commit_error:
        echo(fail(f"not committed: {result.commit_error}"), err=True)
        echo("  The files are written; commit them by hand or run `alaya doctor`.", err=True)
        raise SystemExit(1)
    if build:
        echo(ok(f"Compiled the first build {build}"))
    elif result.adopted and not no_compile:
        echo(f"  Run `alaya --vault {result.root} compile` once to index the {result.adopted} "
             "notes (it embeds them all; every later write refreshes by itself)")
    echo(f"  Open {result.root} in Obsidian, or run: alaya --vault {result.root} doctor")


@click.command()
@click.argument("source", required=False)
@click.option("--title", "-t", help="Card title (also its file name).")
@click.option("--type", "card_type", default="concept", show_default=True,
              help="Card type: concept, pattern, gotcha, decision, fact, preference, "
                   "constraint, skill, event, instruction …")
@click.option("--tag", "tags", multiple=True, help="Tag (repeat, or comma-separated).")
@click.option("--alias", "aliases", multiple=True, help="Another name the card answers to.")
@click.option("--body", default="", help="Markdown body.")
@click.option("--claim", "claims", multiple=True, help="A claim sentence (repeatable).")
@click.option("--importance", type=click.FloatRange(0, 1), default=None, help="0.0–1.0.")
@click.option("--namespace", default=None, help="shared | <agent>-main | <agent>-ephemeral.")
@click.option("--pinned", is_flag=True, help="Never cooled, forgotten or evicted.")
@json_option
@no_commit_option
@propose_option
@click.pass_obj
@pass_json
def new(obj: object, source: str | None, title: str | None, card_type: str,
        tags: tuple[str, ...], aliases: tuple[str, ...], body: str, claims: tuple[str, ...],
        importance: float | None, namespace: str | None, pinned: bool, as_json: bool,
        no_commit: bool, propose: bool) -> None:
    """Create a card from options, or from a JSON object on stdin with `alaya new -`.

    The JSON shape is the one distill produces: {"title", "content", "type", "tags",
    "importance", "aliases", "claims": [{"text", "confidence", "evidence"}], "relations":
    [{"type", "target", "weight", "reason"}]}. Relation targets must exist.

    \b
    Examples:
      alaya new --title "Gateway restart drops Telegram notices" --type gotcha --tag gateway
      echo '{"title": "Use uv for installs", "type": "preference"}' | alaya new -
    """
    if source == "-":
        if title:
            raise UsageError("give either `-` (JSON on stdin) or --title, not both")
        try:
            obj_in = mend.loads(sys.stdin.read())
        except json.JSONDecodeError as exc:
            raise UsageError(f"stdin is not valid JSON: {exc.msg} (line {exc.lineno}, "
                             f"column {exc.colno})",
                             fix='pipe one JSON object, e.g. {"title": "…"}') from None
        spec = card_ops.NewCard.from_json(obj_in)
    elif source is not None:
        raise UsageError(f"unexpected argument {source!r}",
                         fix="use `alaya new -` to read JSON from stdin, or --title")
    else:
        if not title:
            raise UsageError("a card needs --title (or `alaya new -` with JSON on stdin)",
                             fix='alaya new --title "…" --type gotcha')
        spec = card_ops.NewCard(title=title.strip(), type=card_type, content=body,
                                tags=card_ops.parse_tags(tags), aliases=aliases,
                                importance=importance, namespace=namespace, pinned=pinned,
                                claims=tuple(card_ops.ClaimSpec(text=c) for c in claims))
    vault = obj.writer(propose)  # type: ignore[attr-defined]
    created = card_ops.create_card(vault, spec, commit=not no_commit, screen=shared_screen(vault))
    refresh = after_write(obj.vault(), vault, quiet=as_json)  # type: ignore[attr-defined]
    if as_json:
        emit_json({"id": created.id, "title": created.title, "path": created.path,
                   "commit": created.commit, "relations": list(created.relations),
                   "refresh": refresh})
        return
    echo(ok(f"Card: {created.title} [{spec.type}] {style(created.id, fg='cyan')}"))
    echo(f"  {created.path}")
    for rel in created.relations:
        echo(f"  → {rel}")


@click.command()
@click.argument("ref")
@json_option
@click.option("--raw", is_flag=True,
              help="Print the file as stored, secrets masked (read the file itself for its "
                   "exact bytes).")
@click.pass_obj
@pass_json
def show(obj: object, ref: str, as_json: bool, raw: bool) -> None:
    """Show one note by id, title, alias, file name or path.

    \b
    Examples:
      alaya show card-7f3a2c1d
      alaya show "Gateway restart drops Telegram notices" --json
    """
    from vault_engine.recall.served import served_note
    from vault_engine.text.secrets import redact

    vault = obj.vault()  # type: ignore[attr-defined]
    note = vault.load().find(ref)  # only what this caller may see (store/namespaces.py)
    if raw:
        click.echo(redact(vault.abspath(note.path).read_text(encoding="utf-8")), nl=False)
        return
    if as_json:
        emit_json(served_note(note, vault.caller))
        return
    data = served_note(note, vault.caller)  # secrets masked; injected turns withheld
    note = _masked_view(note, data)
    kind = note.kind if not isinstance(note, Card) else f"{note.type or 'card'} card"
    echo(style(note.title, bold=True) + f"  [{kind}]  " + style(note.id or "(no id)", fg="cyan"))
    echo(f"  {note.path}")
    if note.tags:
        echo("  tags: " + ", ".join(note.tags))
    if note.aliases:
        echo("  aliases: " + ", ".join(note.aliases))
    if isinstance(note, Entity) and note.lane:
        echo(f"  lane: {note.lane}")
    claims = getattr(note, "claims", ())
    if claims:
        echo("\nClaims:")
        for c in claims:
            conf = f"{c.confidence:.2f}" if c.confidence is not None else "?"
            echo(f"  {c.id} [{c.status} {conf}] {c.text}")
            for ev in c.evidence:
                echo(f"      evidence: {ev.source}")
    if note.relations:
        echo("\nRelations:")
        for r in note.relations:
            echo(f"  {r.type} → {r.link.raw}" + (f"  ({r.reason})" if r.reason else ""))
    if isinstance(note, Session):
        echo(f"\n{len(note.turns)} turns")
    if note.body.strip():
        echo("")
        echo(note.body.rstrip())


def _masked_view(note: Any, data: dict[str, Any]) -> Any:
    """The note with the served (masked) title, body and claims, for the text rendering."""
    import dataclasses

    changes: dict[str, Any] = {"title": data["title"], "body": data.get("body", note.body)}
    if getattr(note, "claims", None):
        texts = {c["id"]: c["text"] for c in data.get("claims", [])}
        changes["claims"] = tuple(dataclasses.replace(c, text=texts.get(c.id, c.text))
                                  for c in note.claims)
    return dataclasses.replace(note, **changes)


def _link_output(result: card_ops.LinkResult, as_json: bool,
                 refresh: dict[str, object] | None) -> None:
    if as_json:
        emit_json({"source": result.source.id or result.source.path,
                   "target": result.target.id or result.target.path, "type": result.type,
                   "changed": result.changed, "commit": result.commit,
                   "message": result.message, "refresh": refresh})
        return
    echo(ok(result.message) if result.changed else result.message)


@click.command()
@click.argument("a")
@click.argument("b")
@click.option("--rel", "rel_type", default="RELATES_TO", show_default=True,
              help="Relation type (UPPER_SNAKE): DEPENDS_ON, CAUSED_BY, SIMILAR_TO …")
@click.option("--weight", type=click.FloatRange(0, 1), default=None,
              help="Strength 0.0–1.0 (default 1.0).")
@click.option("--reason", default=None, help="Why they are related.")
@json_option
@no_commit_option
@propose_option
@click.pass_obj
@pass_json
def link(obj: object, a: str, b: str, rel_type: str, weight: float | None, reason: str | None,
         as_json: bool, no_commit: bool, propose: bool) -> None:
    """Add a typed relation A → B, written into A's frontmatter as one line.

    A and B are ids, titles, aliases or paths. B must exist (a dangling link can still be
    typed by hand). Symmetric types (SIMILAR_TO, CONTRADICTS, CO_OCCURS) are stored once.

    \b
    Example:
      alaya link "Gateway restart" "Telegram notices" --rel DEPENDS_ON --weight 0.8 \\
          --reason "the restart notice goes out through Telegram"
    """
    vault = obj.writer(propose)  # type: ignore[attr-defined]
    result = card_ops.link(vault, a, b, rel_type, weight=weight, reason=reason,
                           commit=not no_commit, screen=shared_screen(vault))
    refresh = after_write(obj.vault(), vault, quiet=as_json) if result.changed else None  # type: ignore[attr-defined]
    _link_output(result, as_json, refresh)


@click.command()
@click.argument("a")
@click.argument("b")
@click.option("--rel", "rel_type", default=None,
              help="Only this relation type (default: every frontmatter relation A → B).")
@json_option
@no_commit_option
@click.pass_obj
@pass_json
def unlink(obj: object, a: str, b: str, rel_type: str | None, as_json: bool,
           no_commit: bool) -> None:
    """Remove relations A → B from A's frontmatter (symmetric ones from either end).

    Wikilinks in a note's text are human writing and are left alone.

    \b
    Example:
      alaya unlink "Gateway restart" "Telegram notices" --rel DEPENDS_ON
    """
    vault = obj.vault()  # type: ignore[attr-defined]
    result = card_ops.unlink(vault, a, b, rel_type, commit=not no_commit)
    refresh = after_write(vault, quiet=as_json) if result.changed else None
    _link_output(result, as_json, refresh)
