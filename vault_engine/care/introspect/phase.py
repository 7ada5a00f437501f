"""What every introspect phase shares: its context (the vault, the clock, dry run), its
result (numbers, report lines, files changed, commit) and its one commit, which carries the
phase's section of `reports/introspect-<date>.md`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vault_engine.store.authorship import Authorship
from vault_engine.store.frontmatter import NoteText, flow_claims
from vault_engine.store.proposals import Proposal
from vault_engine.store.reports import report_head
from vault_engine.store.vault import Transaction, Vault, VaultIndex
from vault_engine.telemetry import NoteStats


@dataclass
class PhaseResult:
    name: str
    numbers: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # the report section (markdown)
    changed: list[str] = field(default_factory=list)
    commit: str | None = None
    proposals: list[Proposal] = field(default_factory=list)  # for a person's notes


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

    def owners(self, index: VaultIndex) -> Authorship:
        """Whose each note is: a person's note is proposed to, never rewritten."""
        return Authorship.load(self.vault, index.notes)


def flow(claims: Sequence[Any]) -> list[Any]:
    """Claims as the house style renders them: evidence items one line each."""
    return flow_claims(claims)


def appender(key: str, item: Any) -> Callable[[NoteText], None]:
    def edit(doc: NoteText) -> None:
        doc.ensure_frontmatter()
        doc.frontmatter.append_item(key, item)
    return edit


def _section_body(current: PhaseResult, index: VaultIndex | None = None) -> str:
    """The section's text. With `index` (every note), a line that links a note outside
    `shared` is left out and counted: every agent reads the report."""
    from vault_engine.store.namespaces import public_lines

    section: list[str] = []
    # the counts are the whole vault's: in a vault with private notes they would tell every
    # reader how much of it is someone else's — only the public lines are listed then
    private = index is not None and any((n.namespace or "shared") != "shared"
                                        for n in (*index.notes, *index.hidden))
    if current.numbers and not private:
        section += [f"- {k.replace('_', ' ')}: {v}" for k, v in current.numbers.items()]
        section.append("")
    lines = current.lines + [p.line() for p in current.proposals]
    if index is not None:
        lines, _dropped = public_lines(lines, index)
    section += lines
    if private:
        section += ["", "(only what concerns shared notes is listed here: every agent reads "
                        "this report; `alaya introspect` shows the owner everything)"]
    return "\n".join(section).rstrip("\n")


def _report_text(ctx: Context, results: Sequence[PhaseResult], current: PhaseResult) -> str:
    path = ctx.vault.root / ctx.report_path
    if path.exists():
        text = path.read_text(encoding="utf-8")
    else:
        text = (f"---\nid: report-introspect-{ctx.now.date().isoformat()}\n"
                f"title: Introspection {ctx.now.date().isoformat()}\ntype: report\n---\n"
                f"# Introspection {ctx.now.date().isoformat()}\n\n")
    head = f"## {current.name} · {ctx.now.strftime('%H:%M UTC')}"
    body = _section_body(current, ctx.vault.load_all())
    return text.rstrip("\n") + "\n\n" + f"{head}\n\n{body}".rstrip("\n") + "\n"


def _already_reported(ctx: Context, current: PhaseResult) -> bool:
    """Today's report already has this phase's section, word for word (a run with nothing
    new to do must not write or commit anything)."""
    path = ctx.vault.root / ctx.report_path
    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    marker = f"## {current.name} · "
    body = _section_body(current, ctx.vault.load_all())
    for chunk in text.split("\n" + marker)[1:]:
        rest = chunk.split("\n", 1)[1] if "\n" in chunk else ""
        rest = rest.split("\n## ", 1)[0].strip("\n")
        if rest == body.strip("\n"):
            return True
    return False


def _says_nothing(result: PhaseResult) -> bool:
    """No finding to report: no proposal, no list item or warning (only numbers, a
    histogram or a score table, which the next run recomputes anyway)."""
    return not result.proposals and not any(
        line.lstrip().startswith(("- ", "⚠")) for line in result.lines)


def commit_phase(ctx: Context, result: PhaseResult, results: Sequence[PhaseResult],
                  work: Callable[[Transaction], None] | None, message: str) -> None:
    """Run the phase's writes and its report section in one commit. A phase whose writes
    change no byte and whose section is already in today's report (or says nothing) writes
    nothing and makes no commit."""
    if ctx.dry_run:
        return
    if work is None and (_says_nothing(result) or _already_reported(ctx, result)):
        return  # nothing changed, nothing found to report: no write, no commit
    with ctx.vault.transaction(f"introspect: {result.name} — {message}", commit=ctx.commit) as tx:
        if work is not None:
            work(tx)
        changed = tx.changed()
        rel = ctx.report_path
        if changed or not (_says_nothing(result) or _already_reported(ctx, result)):
            text = _report_text(ctx, results, result)
            if (ctx.vault.root / rel).exists():
                tx.write(rel, text, ctx.vault.current_checksum(rel))
            else:
                tx.create(rel, text)
        result.changed = tx.changed()
    result.commit = tx.sha


def report_text(ctx: Context, rel: str, title: str, intro: str,
                namespace: str | None = None) -> str:
    """A report note's current text, or a new one with its frontmatter (and `namespace`
    for a namespace's own report, store/reports.py), heading and intro (the managed block is
    added by whoever fills it)."""
    path = ctx.vault.root / rel
    if path.exists():
        return path.read_text(encoding="utf-8")
    slug = rel.rsplit("/", 1)[-1].removesuffix(".md")
    return report_head(slug, title, namespace, intro)
