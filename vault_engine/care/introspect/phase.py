"""What every introspect phase shares: its context (the vault, the clock, dry run), its
result (numbers, report lines, files changed, commit) and its one commit, which carries the
phase's section of `reports/introspect-<date>.md`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vault_engine.store.frontmatter import FlowMap, NoteText
from vault_engine.store.vault import Transaction, Vault, VaultIndex
from vault_engine.telemetry import NoteStats


@dataclass
class PhaseResult:
    name: str
    numbers: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # the report section (markdown)
    changed: list[str] = field(default_factory=list)
    commit: str | None = None


@dataclass
class Context:
    vault: Vault
    now: dt.datetime
    dry_run: bool
    commit: bool
    report_path: str
    stats: dict[str, NoteStats]
    tiers: dict[str, Any] | None = None

    def index(self) -> VaultIndex:
        return self.vault.load()


def flow(claims: Sequence[Any]) -> list[Any]:
    """Claims as the house style renders them: evidence items one line each."""
    out = []
    for c in claims:
        c = dict(c)
        if isinstance(c.get("evidence"), list):
            c["evidence"] = [FlowMap(e) if isinstance(e, dict) else e for e in c["evidence"]]
        out.append(c)
    return out


def appender(key: str, item: Any) -> Callable[[NoteText], None]:
    def edit(doc: NoteText) -> None:
        doc.ensure_frontmatter()
        doc.frontmatter.append_item(key, item)
    return edit


def _report_text(ctx: Context, results: Sequence[PhaseResult], current: PhaseResult) -> str:
    path = ctx.vault.root / ctx.report_path
    if path.exists():
        text = path.read_text(encoding="utf-8")
    else:
        text = (f"---\nid: report-introspect-{ctx.now.date().isoformat()}\n"
                f"title: Introspection {ctx.now.date().isoformat()}\ntype: report\n---\n"
                f"# Introspection {ctx.now.date().isoformat()}\n\n")
    section = [f"## {current.name} · {ctx.now.strftime('%H:%M UTC')}", ""]
    if current.numbers:
        section += [f"- {k.replace('_', ' ')}: {v}" for k, v in current.numbers.items()]
        section.append("")
    section += current.lines
    return text.rstrip("\n") + "\n\n" + "\n".join(section).rstrip("\n") + "\n"


def commit_phase(ctx: Context, result: PhaseResult, results: Sequence[PhaseResult],
                  work: Callable[[Transaction], None] | None, message: str) -> None:
    if ctx.dry_run:
        return
    with ctx.vault.transaction(f"introspect: {result.name} — {message}", commit=ctx.commit) as tx:
        if work is not None:
            work(tx)
        rel = ctx.report_path
        text = _report_text(ctx, results, result)
        if (ctx.vault.root / rel).exists():
            tx.write(rel, text, ctx.vault.current_checksum(rel))
        else:
            tx.create(rel, text)
        result.changed = sorted(set(tx.written))
    result.commit = tx.sha


def report_text(ctx: Context, rel: str, title: str, intro: str) -> str:
    """A report note's current text, or a new one with its frontmatter, heading and intro
    (the managed block is added by whoever fills it)."""
    path = ctx.vault.root / rel
    if path.exists():
        return path.read_text(encoding="utf-8")
    slug = rel.rsplit("/", 1)[-1].removesuffix(".md")
    return (f"---\nid: report-{slug}\ntitle: {title}\ntype: report\n---\n# {title}\n\n"
            f"{intro}\n\n")
