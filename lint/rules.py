"""The lint rules. Each rule reads the parsed vault (`LintContext`) and yields findings.

Codes follow OpenClaw memory-wiki's lint where they overlap (missing-id … stale-claim), plus
alaya's own. Default severities are in `RULES`; `[lint] severity` in alaya.toml overrides them
per code, `[lint] select` / `ignore` choose which rules run. docs/lint.md describes every rule.
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from vault_engine.care.detection import claim_conflicts, near_duplicates
from vault_engine.primitives import now as clock
from vault_engine.store import blocks
from vault_engine.store.authorship import Authorship
from vault_engine.store.links import format_link, has_block, has_heading, link_target_for, link_to
from vault_engine.store.model import CARD_TYPES, CLAIM_STATUSES, CORE_RELATIONS, Card, Entity, Note, Session
from vault_engine.store.relations import FAMILIES, GENERIC, classify
from vault_engine.store.vault import Vault, VaultIndex
from vault_engine.text.secrets import find_secrets


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str  # error | warning
    path: str  # relative to the vault
    line: int | None
    message: str
    fix: str

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "path": self.path,
                "line": self.line, "message": self.message, "fix": self.fix}


OPEN_QUESTIONS = "reports/open-questions.md"  # written by `alaya introspect --phase gaps`


@dataclass
class LintContext:
    vault: Vault
    index: VaultIndex
    stale_days: int = 180
    low_confidence: float = 0.5
    budget_chars: int = 10_000
    now: dt.datetime = field(default_factory=clock)

    @cached_property
    def live(self) -> list[Note]:
        """Notes a person or agent relies on: not templates, not archived."""
        return [n for n in self.index.notes if n.kind not in ("template", "archive")]

    @cached_property
    def authorship(self) -> Authorship:
        return Authorship.load(self.vault, self.index.notes)

    def persons(self, note: Note) -> bool:
        """A person's note (see vault_engine.store.authorship): lint judges their notes by
        what Obsidian needs, not by what alaya's own cards must carry."""
        return self.authorship.is_persons(note.path)

    @cached_property
    def incoming(self) -> dict[str, int]:
        """How many other notes link to each note, provenance links left out."""
        counts: dict[str, int] = {}
        resolver = self.index.resolver
        for n in self.index.notes:
            if n.kind in ("template", "report", "query"):
                continue
            seen = set()
            for link in connections(n):
                res = resolver.resolve_link(link, n.path) if link.target else None
                if res is not None and res.note is not None and res.note.path != n.path:
                    seen.add(res.note.path)
            for path in seen:
                counts[path] = counts.get(path, 0) + 1
        return counts


PROVENANCE_FIELDS = ("evidence", "source_sessions", "source", "raw")
# Frontmatter keys whose links alaya writes and relies on: a dangling one is an error. A link
# in any other property (a person's `related: "[[Idea]]"`) is like a body link.
ALAYA_LINK_FIELDS = frozenset({"relations", "evidence", "source_sessions", "merged_into",
                               "superseded_by"})


def connections(note: Note) -> list[Any]:
    """A note's links to other knowledge: relations and body links, not where it came from
    (evidence and source sessions are provenance, not a connection between ideas)."""
    return [link for link in note.links if link.field not in PROVENANCE_FIELDS]


Emit = Callable[[str, str, int | None, str, str], Finding]
Rule = Callable[[LintContext, Emit], Iterable[Finding]]


@dataclass(frozen=True)
class RuleInfo:
    code: str
    severity: str
    summary: str
    check: Rule | None = None  # None: emitted by another rule's check


RULES: dict[str, RuleInfo] = {}
OWNERS: dict[str, str] = {}  # code emitted by another rule's check → that rule's code


def rule(code: str, severity: str, summary: str,
         also: tuple[tuple[str, str, str], ...] = ()) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        RULES[code] = RuleInfo(code, severity, summary, fn)
        for c, s, text in also:
            RULES[c] = RuleInfo(c, s, text)
            OWNERS[c] = code
        return fn
    return register


def _linkable_kinds(note: Note) -> bool:
    return note.kind in ("card", "entity", "session")


# -- structure ------------------------------------------------------------------------------

@rule("malformed-frontmatter", "error", "a note whose YAML frontmatter cannot be read",
      also=(("unreadable-note", "error", "a file that is not readable UTF-8 text"),
            ("malformed-relation", "error", "a `relations:` item alaya cannot read"),
            ("malformed-claim", "error", "a `claims:` item alaya cannot read"),
            ("invalid-id", "error", "an id with characters ids may not have"),
            ("duplicate-key", "error", "a frontmatter key written twice (YAML keeps only "
                                       "the last)"),
            ("symlink", "warning", "a symlink in the vault (never followed)")))
def _parse_issues(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for issue in ctx.index.issues:
        yield emit(issue.code, issue.path, issue.line, issue.message, issue.fix)
    for note in ctx.index.notes:
        if note.kind == "template":
            continue  # templates hold placeholders ({{title}}, empty claims) on purpose
        for issue in note.issues:
            yield emit(issue.code, issue.path, issue.line, issue.message, issue.fix)


@rule("missing-id", "error", "a card, entity or session without an `id`")
def _missing_id(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for n in ctx.live:
        if _linkable_kinds(n) and not n.id and not ctx.persons(n):
            yield emit("missing-id", n.path, 1, f"{n.kind} has no `id` in its frontmatter",
                       "add `id: <unique-id>` (or run `alaya new` to create cards with one)")


@rule("duplicate-id", "error", "an id used by more than one note")
def _duplicate_id(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for note_id, notes in sorted(ctx.index.duplicate_ids().items()):
        others = ", ".join(n.path for n in notes)
        for n in notes:
            yield emit("duplicate-id", n.path, n.key_line("id"),
                       f"id {note_id!r} is also used by: {others}",
                       "give each note its own id; links by id are ambiguous until then")


@rule("missing-title", "error", "a card or entity without a `title`")
def _missing_title(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for n in ctx.live:
        if n.kind in ("card", "entity") and not str(n.meta.get("title") or "").strip() \
                and not ctx.persons(n):  # a person's note is titled by its file name
            yield emit("missing-title", n.path, 1, f"{n.kind} has no `title`",
                       "add `title: …` to the frontmatter")


@rule("missing-type", "warning", "a card without a `type`",
      also=(("type-mismatch", "warning",
             "a card type alaya does not know, or a `kind:` that disagrees with the folder"),))
def _types(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for n in ctx.live:
        declared = n.meta.get("kind")
        if declared and str(declared) != n.kind and n.kind in ("card", "entity", "session"):
            yield emit("type-mismatch", n.path, n.key_line("kind"),
                       f"`kind: {declared}` but the note is in the {n.kind} folder",
                       f"move the file to the {declared} folder or remove `kind:`")
        if not isinstance(n, Card):
            continue
        if not n.type:
            if not ctx.persons(n):
                yield emit("missing-type", n.path, 1, "card has no `type`",
                           "add `type:` — one of " + ", ".join(CARD_TYPES))
        elif n.type not in CARD_TYPES:
            near = difflib.get_close_matches(n.type, CARD_TYPES, n=1)
            if ctx.persons(n) and not near:
                continue  # a person's own taxonomy (`type: book`), not a typo
            yield emit("type-mismatch", n.path, n.key_line("type"),
                       f"unknown card type {n.type!r}",
                       f"use {near[0]!r}" if near else "use one of " + ", ".join(CARD_TYPES))


@rule("missing-source", "warning", "a card alaya wrote that has no provenance: no source "
      "session, no evidence (a person's notes need none)")
def _missing_source(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for n in ctx.live:
        if isinstance(n, Card) and not ctx.persons(n) and not n.source_sessions and \
                not any(c.evidence for c in n.claims) and not n.meta.get("source"):
            yield emit("missing-source", n.path, 1,
                       "the card says where none of it came from",
                       "add `source_sessions:` or evidence to its claims (`alaya trace` shows "
                       "what a card came from)")


# -- links ----------------------------------------------------------------------------------

@rule("broken-wikilink", "error", "a link to a heading or block that does not exist, a "
      "relation whose target does not exist, or a link that leaves the vault",
      also=(("ambiguous-wikilink", "error", "a frontmatter link whose title or alias "
             "matches several notes"),
            ("unresolved-link", "warning", "a body link to a note not created yet (normal "
             "Obsidian practice; `[lint] severity` makes it an error)"),
            ("alaya-only-link", "warning", "a body link by alias, title or id: alaya finds "
             "the note, Obsidian does not"),
            ("self-link", "warning", "a relation from a note to itself")))
def _links(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    resolver = ctx.index.resolver
    for n in ctx.index.notes:
        if n.kind == "template":
            continue
        rel_lines = {r.link.line for r in n.relations if r.origin == "frontmatter"}
        for link in n.links:
            if n.kind == "session" and link.line > n.body_line:
                continue  # what people said in a conversation is not an authored link
            res = resolver.resolve_link(link, n.path)
            if res.reason == "attachment":
                continue  # sub-paths of PDFs and images (#page=3) are not checked
            if res.note is None:
                yield from _unresolved(ctx, emit, n, link, res)
                continue
            target = res.note
            if link.managed and res.reason in ("id", "title", "alias"):
                yield emit("alaya-only-link", n.path, link.line,
                           f"{link.raw}: Obsidian won't resolve this (the {res.reason} of "
                           f"{target.path}, written by an older alaya)",
                           f"write {link_to(target, ctx.index.resolver)} (the next introspect "
                           "or distill rewrites the block)")
            if link.target and target.path == n.path and link.line in rel_lines:
                yield emit("self-link", n.path, link.line,
                           f"{link.raw}: a relation from the note to itself",
                           "remove it, or point it at the note that was meant")
            if link.heading and not has_heading(target.headings, link.heading):
                yield emit("broken-wikilink", n.path, link.line,
                           f"{link.raw}: {target.path} has no heading {link.heading!r}",
                           "fix the heading name or drop the #part (case and punctuation "
                           "do not matter; #A#B is heading B inside heading A)")
            if link.block and not has_block(target.block_ids, link.block) and not (
                    isinstance(target, Session) and target.turn(link.block)):
                yield emit("broken-wikilink", n.path, link.line,
                           f"{link.raw}: {target.path} has no block ^{link.block.lstrip('^')}",
                           "fix the block id or drop the #^part")


def _unresolved(ctx: LintContext, emit: Emit, n: Note, link: Any, res: Any) -> Iterator[Finding]:
    if res.reason == "unsafe":
        yield emit("broken-wikilink", n.path, link.line, f"{link.raw} points outside the vault",
                   "link to a note inside the vault")
    elif res.reason == "ambiguous":
        yield emit("ambiguous-wikilink", n.path, link.line,
                   f"{link.raw} matches {len(res.candidates)} notes: "
                   + ", ".join(c.path for c in res.candidates),
                   "link by file name or path: "
                   + link_to(res.candidates[0], ctx.index.resolver))
    elif res.hint is not None:
        fix = format_link(link_target_for(res.hint, ctx.index.resolver),
                          display=link.display or link.target)
        yield emit("alaya-only-link", n.path, link.line,
                   f"{link.raw}: Obsidian won't resolve this (it is the {res.hint_kind} of "
                   f"{res.hint.path})", f"write {fix}")
    elif link.frontmatter and link.field in ALAYA_LINK_FIELDS:
        yield emit("broken-wikilink", n.path, link.line,
                   f"{link.raw} matches no note (by path, file name, id, title or alias)",
                   _suggest(ctx, link.target))
    else:
        yield emit("unresolved-link", n.path, link.line,
                   f"{link.raw}: no note {link.target!r} yet", _suggest(ctx, link.target))


def _suggest(ctx: LintContext, target: str) -> str:
    names = {n.title: n for n in ctx.live if n.title} | {n.stem: n for n in ctx.live}
    near = difflib.get_close_matches(target, list(names), n=1, cutoff=0.75)
    if near:
        return (f"did you mean {link_to(names[near[0]], ctx.index.resolver)}? Otherwise create "
                "the note or remove the link")
    return "create the note, or fix or remove the link"


@rule("orphan-card", "warning", "a card nothing links to and that links to nothing")
def _orphans(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for n in ctx.live:
        if isinstance(n, Card) and not connections(n) and not ctx.incoming.get(n.path):
            yield emit("orphan-card", n.path, 1, "no links in or out: recall can only find it "
                       "by its words, never by navigation",
                       "link it: `alaya link <this> <other> RELATES_TO` (or a sharper type)")


@rule("unknown-relation", "warning", "a relation type outside the known list")
def _unknown_relation(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    known = set(CORE_RELATIONS) | GENERIC | {x for f, b in FAMILIES.values() for x in f | b}
    for n in ctx.live:
        for r in n.relations:
            if r.origin in ("body", "embed") or r.type in known:
                continue
            yield emit("unknown-relation", n.path, r.line or r.link.line,
                       f"relation type {r.type!r} is not a known type",
                       f"use {_nearest_relation(r.type)} — or keep it and declare it in "
                       "docs (custom types are allowed; introspect suggests merges)")


def _nearest_relation(name: str) -> str:
    fam = classify(name)
    if fam is not None:
        fwd, bwd = FAMILIES[fam[0]]
        pool = sorted(fwd if fam[1] > 0 or not bwd else bwd)
        core = [p for p in pool if p in CORE_RELATIONS]
        return (core or difflib.get_close_matches(name, pool, n=1, cutoff=0) or pool)[0]
    near = difflib.get_close_matches(name, CORE_RELATIONS, n=1, cutoff=0)
    return near[0] if near else "RELATES_TO"


@rule("weight-out-of-range", "warning", "a relation weight or confidence outside 0–1")
def _ranges(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for n in ctx.live:
        for r in n.relations:
            if not 0.0 <= r.weight <= 1.0:
                yield emit("weight-out-of-range", n.path, r.line or r.link.line,
                           f"{r.type} → {r.target}: weight {r.weight} is outside 0–1",
                           "use a weight between 0 and 1")
        for c in getattr(n, "claims", ()):
            values = [("confidence", c.confidence)] + [
                ("evidence confidence", e.confidence) for e in c.evidence]
            for what, v in values:
                if v is not None and not 0.0 <= v <= 1.0:
                    yield emit("weight-out-of-range", n.path, c.line,
                               f"claim {c.id}: {what} {v} is outside 0–1",
                               "use a value between 0 and 1")
        conf = n.meta.get("confidence")
        if isinstance(conf, int | float) and not isinstance(conf, bool) \
                and not 0.0 <= conf <= 1.0:
            yield emit("weight-out-of-range", n.path, n.key_line("confidence"),
                       f"confidence {conf} is outside 0–1", "use a value between 0 and 1")


@rule("supersedes-cycle", "error", "notes that supersede each other in a loop")
def _supersedes_cycle(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    import networkx as nx

    g = nx.DiGraph()
    resolver = ctx.index.resolver
    where: dict[tuple[str, str], tuple[str, int]] = {}
    for n in ctx.live:
        for r in n.relations:
            if r.type not in ("SUPERSEDES", "SUPERSEDED_BY"):
                continue
            res = resolver.resolve_link(r.link, n.path)
            if res.note is None:
                continue
            a, b = (n.path, res.note.path) if r.type == "SUPERSEDES" else (res.note.path, n.path)
            g.add_edge(a, b)
            where[(a, b)] = (n.path, r.line or r.link.line)
    reported: set[frozenset[str]] = set()
    for cycle in nx.simple_cycles(g):
        key = frozenset(cycle)
        if key in reported:
            continue
        reported.add(key)
        path, line = where[(cycle[0], cycle[1 % len(cycle)])]
        yield emit("supersedes-cycle", path, line,
                   "SUPERSEDES loop: " + " → ".join(cycle + [cycle[0]]),
                   "decide which note is current and remove the SUPERSEDES link that points "
                   "back to an older one")


# -- knowledge ------------------------------------------------------------------------------

@rule("contradiction-present", "warning",
      "a recorded contradiction (CONTRADICTS link or a contested claim) awaiting resolution",
      also=(("claim-conflict", "error",
             "two supported claims that contradict each other and are not marked contested"),))
def _contradictions(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for n in ctx.live:
        for r in n.relations:
            if r.type == "CONTRADICTS":
                yield emit("contradiction-present", n.path, r.line or r.link.line,
                           f"contradicts {r.target}",
                           "resolve it: keep one side (`alaya feedback correct`) or record "
                           "why both hold; see reports/contradictions.md")
        for c in getattr(n, "claims", ()):
            if c.status == "contested":
                yield emit("contradiction-present", n.path, c.line,
                           f"claim {c.id} is contested: {c.text[:80]}",
                           "resolve it and set its status to supported, refuted or superseded")
    for k in claim_conflicts(ctx.live):
        a, b = k.a, k.b
        yield emit("claim-conflict", a.note.path, a.claim.line,
                   f"claim {a.claim.id} ({a.claim.text[:60]!r}) conflicts with {b.note.path} "
                   f"claim {b.claim.id} ({b.claim.text[:60]!r}): {k.detail}",
                   "run `alaya introspect --phase conflicts` to mark both contested, or "
                   "correct the wrong one (`alaya feedback correct`)")


@rule("near-duplicate", "warning", "two cards that say nearly the same thing")
def _near_duplicates(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for d in near_duplicates(ctx.live):
        yield emit("near-duplicate", d.b.path, 1,
                   f"nearly the same as {d.a.path} ({d.similarity:.0%} of their words shared)",
                   "merge them: `alaya introspect --phase consolidate`")


@rule("open-question", "warning", "an open question: in a card, or a knowledge gap introspect "
      "listed in reports/open-questions.md")
def _open_questions(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    for n in ctx.live:
        if n.path == OPEN_QUESTIONS:  # knowledge gaps (seed 003 §3.2.2), not ticked yet
            for i, line in enumerate(n.body.splitlines(), n.body_line):
                if line.startswith("- [ ] **"):
                    topic = line[8:].split("**", 1)[0]
                    yield emit("open-question", n.path, i, f"knowledge gap: {topic[:80]}",
                               "answer it in a card (the line says how), then tick it "
                               "`- [x]`")
            continue
        if not isinstance(n, Card | Entity):
            continue
        for c in n.claims:
            if c.text.rstrip().endswith("?"):
                yield emit("open-question", n.path, c.line, f"claim {c.id} is a question: "
                           f"{c.text[:80]}", "answer it as a statement, or move it to an "
                           f"`## Open questions` section (gaps recall found: {OPEN_QUESTIONS})")
        section = False
        for i, line in enumerate(n.body.splitlines(), n.body_line):
            s = line.strip()
            if s.startswith("#"):
                section = "open question" in s.lower()
            elif section and s[:2] in ("- ", "* ") and not s.startswith(("- [x]", "* [x]")):
                yield emit("open-question", n.path, i, f"open question: {s[2:][:80]}",
                           "answer it and turn it into a claim, or remove it")


@rule("low-confidence", "warning", "a card whose own confidence is below [lint] low_confidence",
      also=(("claim-low-confidence", "warning",
             "a claim whose confidence is below [lint] low_confidence"),
            ("claim-missing-evidence", "warning", "a claim with no evidence")))
def _confidence(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    low = ctx.low_confidence
    for n in ctx.live:
        conf = n.meta.get("confidence")
        if isinstance(conf, int | float) and not isinstance(conf, bool) and 0 <= conf < low:
            yield emit("low-confidence", n.path, n.key_line("confidence"),
                       f"confidence {conf} is below {low}",
                       "add evidence and raise it, or mark the note as a hypothesis")
        for c in getattr(n, "claims", ()):
            if c.status not in ("supported", "contested"):
                continue
            if c.confidence is not None and 0 <= c.confidence < low:
                yield emit("claim-low-confidence", n.path, c.line,
                           f"claim {c.id} has confidence {c.confidence} (below {low})",
                           "add evidence, or drop the claim if it does not hold")
            if not c.evidence:
                yield emit("claim-missing-evidence", n.path, c.line,
                           f"claim {c.id} has no evidence: {c.text[:80]}",
                           "add `evidence:` (a session turn link such as [[session#^t3]])")


@rule("stale-page", "warning", "a card not updated for [lint] stale_days, or marked stale",
      also=(("stale-claim", "warning",
             "a claim past its valid_until that is still marked supported"),))
def _stale(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    limit = dt.timedelta(days=ctx.stale_days)
    for n in ctx.live:
        if not isinstance(n, Card):
            continue
        if n.meta.get("stale"):
            yield emit("stale-page", n.path, n.key_line("stale"),
                       f"marked stale: {n.meta.get('stale_reason') or 'something it depends on changed'}",
                       "review it against what changed, then remove `stale:`")
        else:
            when = n.updated or n.created
            if when is not None and not n.pinned and ctx.now - when > limit:
                yield emit("stale-page", n.path, n.key_line("updated") or n.key_line("created"),
                           f"not updated since {when.date()} ({(ctx.now - when).days} days)",
                           "review it and bump `updated:`, pin it, or let introspect archive it")
        for c in n.claims:
            if c.status == "supported" and c.valid_until is not None and c.valid_until < ctx.now:
                yield emit("stale-claim", n.path, c.line,
                           f"claim {c.id} expired on {c.valid_until.date()} but is still "
                           "supported", "set its status to superseded, or extend valid_until")
            elif c.status not in CLAIM_STATUSES:
                yield emit("stale-claim", n.path, c.line,
                           f"claim {c.id} has status {c.status!r}",
                           "use one of " + ", ".join(CLAIM_STATUSES))


# -- memory, sessions, secrets --------------------------------------------------------------

@rule("memory-budget-exceeded", "warning", "MEMORY.md longer than [memory] budget_chars")
def _memory_budget(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    path = ctx.vault.root / "MEMORY.md"
    if not path.exists():
        return
    text = path.read_text(encoding="utf-8", errors="replace")
    human = blocks.outside_blocks(text)
    if len(human) > ctx.budget_chars:
        yield emit("memory-budget-exceeded", "MEMORY.md", 1,
                   f"your own text in MEMORY.md is {len(human):,} characters, over the "
                   f"budget of {ctx.budget_chars:,}: nothing can be promoted",
                   "shorten it, move details into cards, or raise [memory] budget_chars")
    elif len(text) > ctx.budget_chars:
        yield emit("memory-budget-exceeded", "MEMORY.md", 1,
                   f"MEMORY.md is {len(text):,} characters, over the budget of "
                   f"{ctx.budget_chars:,}",
                   "run `alaya introspect --phase promote` to evict the lowest-scored entries")


@rule("session-tampered", "error", "a session note whose turns no longer match its raw file")
def _sessions(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    from vault_engine.errors import AlayaError
    from vault_engine.sessions.ingest import parse_input, turn_note_text

    for n in ctx.index.notes:
        if not isinstance(n, Session) or not n.raw:
            continue
        fix = "restore the note from git (`git log -p -- PATH`), or re-ingest the raw file"
        try:
            raw = ctx.vault.read_bytes(n.raw)
        except (OSError, AlayaError):
            yield emit("session-tampered", n.path, n.key_line("raw"),
                       f"the raw file {n.raw} is missing", fix.replace("PATH", n.raw))
            continue
        expected = n.meta.get("raw_sha256")
        if expected and hashlib.sha256(raw).hexdigest() != expected:
            yield emit("session-tampered", n.path, n.key_line("raw_sha256"),
                       f"{n.raw} changed since it was ingested (checksum differs)",
                       fix.replace("PATH", n.raw))
            continue
        try:
            sessions = parse_input(raw, n.raw)
        except AlayaError as exc:
            yield emit("session-tampered", n.path, n.key_line("raw"),
                       f"the raw file no longer parses: {exc.message}", fix.replace("PATH", n.raw))
            continue
        mine = next((s for s in sessions if s.id == n.id), sessions[0] if sessions else None)
        want = [turn_note_text(t).strip() for t in mine.turns] if mine else []
        have = [t.text.strip() for t in n.turns]
        if want == have:
            continue
        for i, (w, h) in enumerate(zip(want, have, strict=False)):
            if w != h:
                t = n.turns[i]
                yield emit("session-tampered", n.path, t.line,
                           f"turn ^{t.anchor} differs from the raw file",
                           fix.replace("PATH", n.path))
                break
        else:
            yield emit("session-tampered", n.path, n.body_line,
                       f"the note has {len(have)} turns, the raw file {len(want)}",
                       fix.replace("PATH", n.path))


@rule("secret-detected", "error", "an API key, token, private key or password in a note")
def _secrets(ctx: LintContext, emit: Emit) -> Iterator[Finding]:
    # the notes this caller may see, readable or not (never a symlink)
    paths = sorted({n.path for n in ctx.index.notes}
                   | {i.path for i in ctx.index.issues if i.code != "symlink"
                      and i.path.endswith(".md")})
    for rel in paths:
        try:
            text = ctx.vault.read_bytes(rel).decode("utf-8", errors="replace")
        except OSError:
            continue
        for hit in find_secrets(text):
            line = text.count("\n", 0, hit.start) + 1
            yield emit("secret-detected", rel, line, f"looks like a {hit.kind}",
                       "remove it and rotate the credential (it is in git history: "
                       "rewrite history or treat it as leaked); ingest with --redact")


def all_codes() -> list[str]:
    return sorted(RULES)
