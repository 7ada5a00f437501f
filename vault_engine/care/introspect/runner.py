"""`alaya introspect`: the vault looks after itself, one git commit per phase.

Phases, in order (seed 000 §4.7, seed 002 dreaming, seed 003 §3.2–3.3):

1. **distill** — sessions not distilled yet (distill keeps its one commit per session).
2. **consolidate** — near-duplicate cards merged into the one with more behind it (claims and
   evidence united, relations moved over, every link re-pointed, the other archived with
   `merged_into`); SIMILAR_TO added between cards in the middle band; custom relation types
   clustered into merge / alias / promote / refine suggestions (report only).
3. **conflicts** — offline claim-conflict candidates (vault_engine.care.detection); with an LLM
   configured each is judged by it first (a real contradiction? which side to keep?), any
   other answer falls back to the rules: resolved where seed 003's rules allow (source trust
   differs by more than 0.5 → the trusted side; else more than 90 days apart → the newer),
   otherwise both marked `contested` with a CONTRADICTS link and listed in
   reports/contradictions.md.
4. **cooldown** — temperatures and tiers recomputed from recall telemetry (seed 000 §3.3, the
   same function the compiler uses), HOT limit enforced; the tier table goes in the report.
5. **forget** — cold, old, rarely recalled, unpinned cards that nothing links to are moved to
   archive/ with the reason and date (never deleted; `alaya restore` brings one back); so is
   a card whose feedback quality is below 0.2 after 5 or more verdicts (seed 003).
6. **promote** — the six-factor score (seed 002) over recall telemetry; cards past the gates
   are written into MEMORY.md's managed block as wikilinks with their score, within
   `[memory] budget_chars`, the lowest score evicted first. Text outside the block is never
   touched; when it alone exceeds the budget nothing is promoted and the report says so.

Every phase appends its section to `reports/introspect-<date>.md` in the same commit as its
changes, so `git log -p` reads like a dream diary. `dry_run` computes every plan and writes
nothing.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vault_engine.care.detection import ClaimConflict, card_tokens, claim_conflicts, near_duplicates
from vault_engine.care.tiers import TierInput, assign_tiers
from vault_engine.store import blocks
from vault_engine.store.frontmatter import FlowMap, NoteText
from vault_engine.store.links import format_link
from vault_engine.store.model import CORE_RELATIONS, Card, Note, Session
from vault_engine.store.relations import FAMILIES, GENERIC, classify
from vault_engine.store.vault import Transaction, Vault, VaultIndex
from vault_engine.telemetry import NoteStats, note_stats

PHASES = ("distill", "consolidate", "conflicts", "cooldown", "forget", "promote")
MEMORY = "MEMORY.md"
CONTRADICTIONS = "reports/contradictions.md"
SIMILAR_BAND = (0.5, 0.8)  # Jaccard of two cards' words: SIMILAR_TO in this band
FORGET = {"temperature": 0.1, "days": 90, "max_access": 3}  # seed 000 §4.7.3
TRUST_GAP = 0.5  # seed 003 §3.3.2: trust differs by more → the trusted source wins
RECENCY_GAP_DAYS = 90  # … else timestamps further apart → latest wins
WEIGHTS = {"frequency": 0.24, "relevance": 0.30, "diversity": 0.15, "recency": 0.15,
           "consolidation": 0.10, "concepts": 0.06}  # seed 002 six-factor score


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


# -- small helpers ---------------------------------------------------------------------------

def _flow(claims: Sequence[Any]) -> list[Any]:
    """Claims as the house style renders them: evidence items one line each."""
    out = []
    for c in claims:
        c = dict(c)
        if isinstance(c.get("evidence"), list):
            c["evidence"] = [FlowMap(e) if isinstance(e, dict) else e for e in c["evidence"]]
        out.append(c)
    return out


def _appender(key: str, item: Any) -> Callable[[NoteText], None]:
    def edit(doc: NoteText) -> None:
        doc.ensure_frontmatter()
        doc.frontmatter.append_item(key, item)
    return edit


def _link_to(note: Note) -> str:
    return format_link(note.id or note.path[:-3])


def _archive_path(vault: Vault, note: Note) -> str:
    base = f"archive/{note.stem}"
    rel, n = f"{base}.md", 2
    while (vault.root / rel).exists():
        rel, n = f"{base}-{n}.md", n + 1
    return rel


def archive_note(tx: Transaction, vault: Vault, note: Note, reason: str, when: dt.datetime,
                 merged_into: Note | None = None) -> str:
    """Move a note to archive/ with why and when (a Tombstone; `restore` reverses it)."""
    doc = NoteText.parse(vault.read_text(note.path)[0], note.path)
    doc.ensure_frontmatter()
    doc.frontmatter.set("archived", when.replace(microsecond=0))
    doc.frontmatter.set("archived_reason", reason)
    doc.frontmatter.set("archived_from", note.path)
    if merged_into is not None:
        doc.frontmatter.set("merged_into", _link_to(merged_into))
    rel = _archive_path(vault, note)
    tx.create(rel, doc.render())
    tx.delete(note.path, vault.current_checksum(note.path))
    return rel


def repoint_links(tx: Transaction, index: VaultIndex, old: Note, new: Note,
                  skip: Iterable[str] = ()) -> list[str]:
    """Every link that resolves to `old` now points at `new`: `[[new-id]]` in frontmatter,
    `[[new-id|what it showed]]` in the text (heading and block parts kept). Returns the
    notes changed."""
    changed = []
    skip = set(skip)
    target = new.id or new.path[:-3]
    for n in index.notes:
        if n.path in skip or n.path == old.path or n.kind == "template":
            continue
        hits = [lk for lk in n.links if lk.target and index.resolver.resolve(lk.target).note is old]
        if not hits:
            continue
        text, checksum = tx.vault.read_text(n.path)
        lines = text.split("\n")
        for lk in hits:
            i = lk.line - 1
            if not 0 <= i < len(lines) or lk.raw not in lines[i]:
                continue
            page, _, display = lk.raw[2:-2].partition("|")
            rest = page[page.index("#"):] if "#" in page else ""
            if lk.line < n.body_line:
                lines[i] = lines[i].replace(lk.raw, f"[[{target}{rest}]]")
            else:
                shown = display or page.split("#", 1)[0]
                lines[i] = lines[i].replace(lk.raw, f"[[{target}{rest}|{shown}]]")
        tx.write(n.path, "\n".join(lines), checksum)
        changed.append(n.path)
    return changed


# -- report ----------------------------------------------------------------------------------

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


def _commit_phase(ctx: Context, result: PhaseResult, results: Sequence[PhaseResult],
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


# -- phases ----------------------------------------------------------------------------------

def phase_distill(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    from vault_engine.sessions.distill import distill, select_sessions

    r = PhaseResult("distill")
    pending = list(select_sessions(ctx.vault, None, False))
    r.numbers["sessions_pending"] = len(pending)
    if ctx.dry_run:
        r.lines = [f"- would distil [[{s.id or s.stem}]]" for s in pending]
        return r
    outcomes = distill(ctx.vault, commit=ctx.commit) if pending else []
    created = sum(len(o.applied.created) for o in outcomes if o.applied)
    updated = sum(len(o.applied.updated) for o in outcomes if o.applied)
    r.numbers.update(distilled=sum(o.status == "distilled" for o in outcomes),
                     skipped=sum(o.status == "skipped" for o in outcomes),
                     failed=sum(o.status == "failed" for o in outcomes),
                     cards_created=created, cards_updated=updated)
    r.lines = [f"- [[{o.session}]]: {o.status}{' — ' + o.reason if o.reason else ''}"
               for o in outcomes]
    _commit_phase(ctx, r, results, None, f"{len(outcomes)} session(s), {created} card(s)")
    return r


def _merge_claims(winner: Card, loser: Card) -> list[dict[str, Any]]:
    from vault_engine.care.detection import DUPLICATE, _jaccard
    from vault_engine.recall.bm25 import tokenize

    claims = [dict(c) for c in (winner.meta.get("claims") or []) if isinstance(c, dict)]
    used = {str(c.get("id")) for c in claims}

    def words(c: dict[str, Any]) -> frozenset[str]:
        return frozenset(tokenize(str(c.get("text", ""))))

    for c in loser.meta.get("claims") or []:
        if not isinstance(c, dict):
            continue
        same = next((m for m in claims if _jaccard(words(m), words(c)) >= DUPLICATE), None)
        if same is not None:  # the same statement in other words: unite the evidence
            mine = same
            ev = list(mine.get("evidence") or [])
            seen = {str(e.get("source")) for e in ev if isinstance(e, dict)}
            ev += [e for e in c.get("evidence") or []
                   if isinstance(e, dict) and str(e.get("source")) not in seen]
            if ev:
                mine["evidence"] = ev
            continue
        new = dict(c)
        n = len(used) + 1
        while f"c{n}" in used:
            n += 1
        new["id"] = f"c{n}"
        used.add(new["id"])
        claims.append(new)
    return claims


def _weight_of(note: Card, incoming: dict[str, int]) -> tuple[int, int, int, str]:
    """Which of two duplicates survives: more claims and evidence, then more links to it,
    then the older one."""
    evidence = sum(len(c.evidence) for c in note.claims)
    return (len(note.claims) + evidence, incoming.get(note.path, 0),
            -int((note.created or dt.datetime.max.replace(tzinfo=dt.UTC)).timestamp()),
            note.path)


def phase_consolidate(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    r = PhaseResult("consolidate")
    index = ctx.index()
    live = [n for n in index.notes if n.kind not in ("template", "archive")]
    incoming: dict[str, int] = {}
    for n in live:
        for lk in n.links:
            res = index.resolver.resolve(lk.target) if lk.target else None
            if res is not None and res.note is not None and res.note.path != n.path:
                incoming[res.note.path] = incoming.get(res.note.path, 0) + 1
    dups = near_duplicates(live)
    merged: dict[str, Card] = {}  # loser path → winner
    plan: list[tuple[Card, Card, float]] = []
    for d in sorted(dups, key=lambda d: -d.similarity):
        a, b = d.a, d.b
        if a.path in merged or b.path in merged:
            continue
        if a.namespace != b.namespace:
            continue  # never merge across namespaces (an agent's private card into shared)
        assert isinstance(a, Card) and isinstance(b, Card)
        winner, loser = (a, b) if _weight_of(a, incoming) >= _weight_of(b, incoming) else (b, a)
        merged[loser.path] = winner
        plan.append((winner, loser, d.similarity))
    # middle band: SIMILAR_TO where the two are not linked yet
    cards = [n for n in live if isinstance(n, Card) and n.path not in merged]
    toks = {c.path: card_tokens(c) for c in cards}
    linked = related_pairs(index, cards)
    similar = []
    from vault_engine.care.detection import similar_pairs

    paths = [c.path for c in cards]
    for i, j, sim in similar_pairs([toks[p] for p in paths], SIMILAR_BAND[0]):
        if sim < SIMILAR_BAND[1] and frozenset({paths[i], paths[j]}) not in linked:
            similar.append((cards[i], cards[j], round(sim, 3)))
    mentions = entity_mentions(index, [c for c in cards], merged)
    causes = causal_links(index, cards, merged)
    suggestions = relation_suggestions(live)
    r.numbers.update(duplicate_pairs=len(plan), similar_links=len(similar),
                     entity_links=len(mentions), causal_links=len(causes),
                     relation_suggestions=len(suggestions))
    r.lines = [f"- merge [[{loser.id or loser.stem}]] into [[{w.id or w.stem}]] "
               f"({s:.0%} of their words shared)" for w, loser, s in plan]
    r.lines += [f"- SIMILAR_TO [[{a.id or a.stem}]] ↔ [[{b.id or b.stem}]] ({s:.0%})"
                for a, b, s in similar]
    r.lines += [f"- [[{c.id or c.stem}]] REFERENCES [[{e.id or e.stem}]] (mentions "
                f"“{name}”)" for c, e, name in mentions]
    r.lines += [f"- [[{a.id or a.stem}]] CAUSED_BY [[{b.id or b.stem}]] (across sessions: "
                f"“{phrase}”)" for a, b, phrase in causes]
    if suggestions:
        r.lines += ["", "Relation types:"] + [f"- {s}" for s in suggestions]

    def work(tx: Transaction) -> None:
        for winner, loser, sim in plan:
            claims = _merge_claims(winner, loser)
            sources = list(dict.fromkeys(
                [str(s) for s in winner.meta.get("source_sessions") or []]
                + [str(s) for s in loser.meta.get("source_sessions") or []]))
            tags = list(dict.fromkeys(list(winner.tags) + list(loser.tags)))
            have = {(rel.type, (index.resolver.resolve(rel.target).note or winner).path)
                    for rel in winner.relations}
            extra = []
            for rel in loser.relations:
                if rel.origin != "frontmatter":
                    continue
                target = index.resolver.resolve(rel.target).note
                if target is None or target.path in (winner.path, loser.path) or \
                        (rel.type, target.path) in have:
                    continue
                item = FlowMap(type=rel.type, target=format_link(target.id or target.path[:-3]),
                               weight=rel.weight)
                if rel.reason:
                    item["reason"] = rel.reason
                extra.append(item)

            def edit(doc: NoteText, claims: list[Any] = claims, sources: list[str] = sources,
                     tags: list[str] = tags, extra: list[Any] = extra,
                     loser: Card = loser, winner: Card = winner) -> None:
                fm = doc.frontmatter
                if claims:
                    fm.set("claims", _flow(claims))
                if sources:
                    fm.set("source_sessions", sources)
                if tags:
                    fm.set("tags", tags)
                for item in extra:
                    fm.append_item("relations", item)
                aliases = [str(a) for a in fm.data.get("aliases") or []]
                if loser.title not in aliases and loser.title != winner.title:
                    fm.set("aliases", aliases + [loser.title])
                fm.set("updated", ctx.now.replace(microsecond=0))

            tx.update(winner.path, edit)
            repoint_links(tx, index, loser, winner, skip=[winner.path])
            archive_note(tx, ctx.vault, loser, f"merged into {winner.title} "
                         f"({sim:.0%} of their words shared)", ctx.now, merged_into=winner)
        for a, b, sim in similar:
            item = FlowMap(type="SIMILAR_TO", target=_link_to(b), weight=round(sim, 2),
                           reason="introspect: most of their words are shared")
            tx.update(a.path, _appender("relations", item))
        for card, entity, name in mentions:
            item = FlowMap(type="REFERENCES", target=_link_to(entity), weight=0.6,
                           reason=f"introspect: mentions {name}")
            tx.update(card.path, _appender("relations", item))
        for effect, cause, phrase in causes:
            item = FlowMap(type="CAUSED_BY", target=_link_to(cause), weight=0.7,
                           reason=f"introspect: across sessions, “{phrase}”")
            tx.update(effect.path, _appender("relations", item))

    _commit_phase(ctx, r, results, work if (plan or similar or mentions or causes) else None,
                  f"{len(plan)} merge(s), {len(similar)} SIMILAR_TO, "
                  f"{len(mentions)} entity link(s), {len(causes)} causal link(s)")
    return r


def related_pairs(index: VaultIndex, cards: Iterable[Card]) -> set[frozenset[str]]:
    """Pairs of paths already joined by a relation of one of `cards` (either direction)."""
    linked = set()
    for c in cards:
        for rel in c.relations:
            res = index.resolver.resolve(rel.target)
            if res.note is not None:
                linked.add(frozenset({c.path, res.note.path}))
    return linked


def entity_mentions(index: VaultIndex, cards: Sequence[Card],
                    skip: Iterable[str] = ()) -> list[tuple[Card, Note, str]]:
    """Cards whose title or claims name a known entity (its title or an alias, as a whole
    word) without linking to it — typically an entity first seen in another session, which
    is exactly the link that connects sessions."""
    from vault_engine.store.model import Entity

    names: dict[str, Note] = {}
    for e in index.notes:
        if isinstance(e, Entity):
            for name in (e.title, *e.aliases):
                if name and len(name) >= 3:
                    names.setdefault(name.casefold(), e)
    if not names:
        return []
    pattern = re.compile(r"(?<![\w-])(" + "|".join(
        re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?![\w-])",
        re.IGNORECASE)
    skipped = set(skip)
    out = []
    for card in cards:
        if card.path in skipped:
            continue
        linked = {n.path for n in (index.resolver.resolve(lk.target).note
                                   for lk in card.links if lk.target) if n is not None}
        text = " ".join([card.title] + [c.text for c in card.claims])
        seen = set()
        for m in pattern.finditer(text):
            entity = names[m.group(1).casefold()]
            if entity.path in linked or entity.path in seen:
                continue
            seen.add(entity.path)
            out.append((card, entity, m.group(1)))
    return out


# "…, which caused replication lag of 40 minutes": what follows is an effect of this card
_EFFECT_RE = re.compile(r"(?i)\b(?:caused|causes|causing|led\s+to|leads\s+to|leading\s+to|"
                        r"resulted\s+in|results\s+in|triggered|triggers)\s+(?P<phrase>[^.;:!?,()]+)")
# "…, caused by expired credentials": what follows is a cause named by this card
_CAUSE_RE = re.compile(r"(?i)\b(?:caused\s+by|because\s+of|due\s+to|triggered\s+by|"
                       r"started\s+when)\s+(?P<phrase>[^.;:!?,()]+)")
CAUSAL_PHRASE_TOKENS = (2, 5)  # a phrase is its first 2–5 content words (stemmed)


def _sessions_of(card: Card) -> frozenset[str]:
    return frozenset(str(s).strip("[]").split("|")[0].split("#")[0]
                     for s in card.meta.get("source_sessions") or [])


def causal_links(index: VaultIndex, cards: Sequence[Card],
                 skip: Iterable[str] = ()) -> list[tuple[Card, Card, str]]:
    """Causal chains across sessions: card B says it caused a phrase ("…, which caused
    replication lag of 40 minutes") and card A, from another session, describes that phrase
    ("the replica had replication lag of 40 minutes") → A CAUSED_BY B. Likewise A names its
    cause ("… caused by the expired archive credentials") and B, from another session, is
    about it. A phrase is its first content words (stemmed, stopwords out, 2–5 of them), and
    every one must be among the other card's words: specific enough that "the disk" alone
    never links two incidents. Returns (effect card, cause card, phrase)."""
    from vault_engine.recall.bm25 import tokenize

    skipped = set(skip)
    live = [c for c in cards if c.path not in skipped and c.claims]
    words = {c.path: card_tokens(c) for c in live}
    sessions = {c.path: _sessions_of(c) for c in live}
    # a word in most cards says nothing about which two belong together
    postings: dict[str, set[str]] = {}
    for path, toks in words.items():
        for t in toks:
            postings.setdefault(t, set()).add(path)
    common = {t for t, ps in postings.items() if len(ps) > max(3, len(live) // 4)}
    by_path = {c.path: c for c in live}

    def about(key: frozenset[str]) -> list[Card]:
        """The cards that contain every word of a phrase (rarest word's postings first)."""
        lists = sorted((postings.get(t, set()) for t in key), key=len)
        hits = set(lists[0]).intersection(*lists[1:]) if lists else set()
        return [by_path[p] for p in sorted(hits)]
    lo, hi = CAUSAL_PHRASE_TOKENS

    def phrases(card: Card, pattern: re.Pattern[str]) -> list[tuple[frozenset[str], str]]:
        out = []
        for claim in card.claims:
            for m in pattern.finditer(claim.text):
                toks = [t for t in tokenize(m.group("phrase")) if t not in common][:hi]
                if len(toks) >= lo:
                    out.append((frozenset(toks), m.group("phrase").strip()))
        return out

    linked = related_pairs(index, live)
    found: dict[tuple[str, str], tuple[Card, Card, str]] = {}
    for card in live:
        for key, phrase in phrases(card, _EFFECT_RE):  # card caused the phrase
            for other in about(key):
                if not sessions[card.path] & sessions[other.path]:
                    found.setdefault((other.path, card.path), (other, card, phrase))
        for key, phrase in phrases(card, _CAUSE_RE):  # the phrase caused card
            for other in about(key):
                if not sessions[card.path] & sessions[other.path]:
                    found.setdefault((card.path, other.path), (card, other, phrase))
    return [v for (a, b), v in sorted(found.items())
            if a != b and frozenset({a, b}) not in linked and sessions[a] and sessions[b]]


def relation_suggestions(notes: Sequence[Note], promote_at: int = 100) -> list[str]:
    """Custom relation types clustered by family (seed 000 §4.7.1): merge/alias the ones
    that mean the same, promote frequent ones, refine vague ones."""
    known = set(CORE_RELATIONS)
    counts: dict[str, int] = {}
    for n in notes:
        for rel in n.relations:
            if rel.origin != "body":
                counts[rel.type] = counts.get(rel.type, 0) + 1
    custom = {t: c for t, c in counts.items() if t not in known}
    out = []
    groups: dict[tuple[str, int], list[str]] = {}
    for t in custom:
        fam = classify(t)
        if fam is not None:
            groups.setdefault(fam, []).append(t)
    for (family, direction), names in sorted(groups.items()):
        fwd, bwd = FAMILIES[family]
        core = sorted((fwd if direction > 0 or not bwd else bwd) & known)
        if len(names) > 1 or core:
            target = core[0] if core else sorted(names, key=lambda x: -custom[x])[0]
            out.append(f"merge/alias {', '.join(sorted(names))} → {target} "
                       f"(same {family} family and direction)")
    for t, c in sorted(custom.items()):
        if c >= promote_at:
            out.append(f"promote {t} to a core relation type (used {c} times)")
    vague = sum(c for t, c in counts.items() if t in GENERIC)
    if vague >= 10 and vague > 0.3 * max(1, sum(counts.values())):
        out.append(f"refine RELATES_TO: {vague} of {sum(counts.values())} relations are "
                   "generic; name them (CAUSED_BY, DEPENDS_ON, …)")
    return out


def source_trust(note: Note, index: VaultIndex) -> float:
    """Seed 003 §3.3.3: what a person wrote 1.0; what a user said in a session 0.95; what the
    agent said (its inference) 0.5; an LLM distillation with no turn behind it 0.4."""
    explicit = note.meta.get("trust")
    if isinstance(explicit, int | float) and not isinstance(explicit, bool):
        return float(explicit)
    if not isinstance(note, Card) or not (note.source_sessions or any(
            c.evidence for c in note.claims)):
        return 1.0
    best = 0.4
    for c in note.claims:
        for e in c.evidence:
            if e.link is None:
                continue
            res = index.resolver.resolve(e.link.target)
            if isinstance(res.note, Session) and e.link.block:
                turn = res.note.turn(e.link.block)
                if turn is not None:
                    best = max(best, 0.95 if turn.role == "user" else 0.5)
    return best


def _claim_time(ref: Any) -> dt.datetime | None:
    c, n = ref.claim, ref.note
    return c.valid_from or getattr(n, "updated", None) or getattr(n, "created", None)


JUDGE_PROMPT = """Two claims from a knowledge base look like they contradict each other.
Decide whether they really do (the same subject, incompatible statements), and if so which
one to keep when the text alone makes it clear (otherwise keep neither).
Answer with JSON only: {"contradiction": true|false, "keep": "a"|"b"|null, "reason": "..."}"""


def _judge(ctx: Context, k: ClaimConflict) -> dict[str, Any] | None:
    """Ask the configured LLM about one candidate. None: no LLM, budget spent, or an answer
    that is not the JSON asked for (then the offline rules decide)."""
    import json

    from vault_engine.errors import AlayaError
    from vault_engine.providers.llm import Budget, ChatClient, llm_settings

    settings = llm_settings(ctx.vault.config)
    if settings.provider not in ("openai", "llm") or not settings.base_url:
        return None
    budget = Budget(ctx.vault.state_dir, settings.daily_call_budget)
    if not budget.available():
        return None
    user = (f"Claim a ({k.a.note.title}, {k.a.claim.id}): {k.a.claim.text}\n"
            f"Claim b ({k.b.note.title}, {k.b.claim.id}): {k.b.claim.text}\n"
            f"They differ in: {k.detail}")
    try:
        budget.spend()
        raw = ChatClient(settings).complete([{"role": "system", "content": JUDGE_PROMPT},
                                             {"role": "user", "content": user}])
        answer = json.loads(raw)
    except (AlayaError, ValueError):
        return None
    if not isinstance(answer, dict) or not isinstance(answer.get("contradiction"), bool) \
            or answer.get("keep") not in ("a", "b", None):
        return None
    return answer


def phase_conflicts(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    r = PhaseResult("conflicts")
    index = ctx.index()
    live = [n for n in index.notes if n.kind not in ("template", "archive")]
    found = claim_conflicts(live)
    total = len(found)
    resolved: list[tuple[ClaimConflict, Any, Any, str]] = []  # (conflict, winner, loser, why)
    open_: list[ClaimConflict] = []
    dismissed = 0
    for k in list(found):
        verdict = None if ctx.dry_run else _judge(ctx, k)
        if verdict is None:
            continue
        found.remove(k)
        if not verdict["contradiction"]:
            dismissed += 1
            r.lines.append(f"- not a contradiction (LLM): [[{k.a.note.id or k.a.note.stem}]] "
                           f"{k.a.claim.id} / [[{k.b.note.id or k.b.note.stem}]] {k.b.claim.id}"
                           f" — {str(verdict.get('reason', ''))[:120]}")
        elif verdict["keep"] in ("a", "b"):
            win, lose = (k.a, k.b) if verdict["keep"] == "a" else (k.b, k.a)
            resolved.append((k, win, lose, "LLM: " + str(verdict.get("reason", ""))[:120]))
        else:
            open_.append(k)
    for k in found:
        ta, tb = source_trust(k.a.note, index), source_trust(k.b.note, index)
        wa, wb = _claim_time(k.a), _claim_time(k.b)
        if abs(ta - tb) > TRUST_GAP:
            win, lose = (k.a, k.b) if ta > tb else (k.b, k.a)
            resolved.append((k, win, lose, f"source trust {max(ta, tb):.2f} vs {min(ta, tb):.2f}"))
        elif wa and wb and abs((wa - wb).days) > RECENCY_GAP_DAYS:
            win, lose = (k.a, k.b) if wa > wb else (k.b, k.a)
            resolved.append((k, win, lose, f"newer by {abs((wa - wb).days)} days"))
        else:
            open_.append(k)
    r.numbers.update(candidates=total, resolved=len(resolved), contested=len(open_))
    if dismissed:
        r.numbers["dismissed"] = dismissed
    for k, win, lose, why in resolved:
        r.lines.append(f"- kept [[{win.note.id or win.note.stem}]] {win.claim.id} over "
                       f"[[{lose.note.id or lose.note.stem}]] {lose.claim.id} ({k.detail}; {why})")
    for k in open_:
        r.lines.append(f"- contested: [[{k.a.note.id or k.a.note.stem}]] {k.a.claim.id} vs "
                       f"[[{k.b.note.id or k.b.note.stem}]] {k.b.claim.id} ({k.detail})")

    def set_status(tx: Transaction, note: Note, claim_id: str, status: str,
                   extra: dict[str, Any] | None = None) -> None:
        def edit(doc: NoteText) -> None:
            claims = [dict(c) for c in doc.frontmatter.data.get("claims") or []]
            for c in claims:
                if str(c.get("id")) == claim_id:
                    c["status"] = status
                    c.update(extra or {})
            doc.frontmatter.set("claims", _flow(claims))
        tx.update(note.path, edit)

    def work(tx: Transaction) -> None:
        for _k, win, lose, why in resolved:
            set_status(tx, lose.note, lose.claim.id, "superseded",
                       {"superseded_by": f"{_link_to(win.note)} {win.claim.id}",
                        "resolution": why})
        for k in open_:
            set_status(tx, k.a.note, k.a.claim.id, "contested")
            set_status(tx, k.b.note, k.b.claim.id, "contested")
            if k.a.note.path != k.b.note.path:
                item = FlowMap(type="CONTRADICTS", target=_link_to(k.b.note), weight=1.0,
                               reason=f"claim {k.a.claim.id} vs {k.b.claim.id}: {k.detail}")
                tx.update(k.a.note.path, _appender("relations", item))
        if open_:
            _write_contradictions(tx, ctx, open_)

    _commit_phase(ctx, r, results, work if (resolved or open_) else None,
                  f"{len(resolved)} resolved, {len(open_)} contested")
    return r


def _write_contradictions(tx: Transaction, ctx: Context, open_: Sequence[ClaimConflict]) -> None:
    rel = CONTRADICTIONS
    path = ctx.vault.root / rel
    old = path.read_text(encoding="utf-8") if path.exists() else (
        "---\nid: report-contradictions\ntitle: Contradictions\ntype: report\n---\n"
        "# Contradictions\n\nClaims that contradict each other and need a person's decision. "
        "Resolve one by setting the wrong claim's status to `refuted` or `superseded` (or "
        "`alaya feedback correct`).\n\n")
    current = blocks.read_block(old, "contradictions", rel) or ""
    lines = [x for x in current.splitlines() if x.strip()]
    for k in open_:
        line = (f"- [[{k.a.note.id or k.a.note.stem}]] {k.a.claim.id} “{k.a.claim.text}” vs "
                f"[[{k.b.note.id or k.b.note.stem}]] {k.b.claim.id} “{k.b.claim.text}” "
                f"({k.detail}; found {ctx.now.date()})")
        if line.split(" (")[0] not in {x.split(" (")[0] for x in lines}:
            lines.append(line)
    new = blocks.replace_block(old, "contradictions", "\n".join(lines) + "\n", path=rel)
    if path.exists():
        tx.write(rel, new, ctx.vault.current_checksum(rel))
    else:
        tx.create(rel, new)


def _tier_inputs(index: VaultIndex, now: dt.datetime) -> list[TierInput]:
    out = []
    for n in index.notes:
        if n.kind in ("template", "archive"):
            continue
        created = getattr(n, "created", None) or getattr(n, "started", None) or now
        out.append(TierInput(key=n.id or f"path:{n.path}", created=created,
                             pinned=bool(n.meta.get("pinned"))))
    return out


def _previous_tiers(vault: Vault) -> dict[str, str]:
    from vault_engine import artifacts as A

    build = A.current_build(vault.state_dir)
    if build is None:
        return {}
    try:
        manifest = build.manifest()
    except (OSError, ValueError):
        return {}
    return {v["key"]: v.get("tier", "") for v in manifest.get("notes", {}).values()}


def phase_cooldown(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    r = PhaseResult("cooldown")
    index = ctx.index()
    tiers = assign_tiers(_tier_inputs(index, ctx.now), ctx.stats, ctx.now,
                         ctx.vault.config.section("tiers"))
    before = _previous_tiers(ctx.vault)
    order = {"COLD": 0, "WARM": 1, "HOT": 2}
    up = sorted(k for k, t in tiers.items() if k in before and before[k] in order
                and order[t.tier] > order[before[k]])
    down = sorted(k for k, t in tiers.items() if k in before and before[k] in order
                  and order[t.tier] < order[before[k]])
    counts = {t: sum(1 for x in tiers.values() if x.tier == t) for t in ("HOT", "WARM", "COLD")}
    r.numbers.update(hot=counts["HOT"], warm=counts["WARM"], cold=counts["COLD"],
                     upgraded=len(up), downgraded=len(down),
                     hot_limit=ctx.vault.config.get("tiers", "hot_limit"))
    hist = [0] * 5
    for t in tiers.values():
        hist[min(4, int(t.temperature * 5))] += 1
    r.lines = ["Temperature histogram: " + ", ".join(
        f"{i / 5:.1f}–{(i + 1) / 5:.1f}: {c}" for i, c in enumerate(hist))]
    r.lines += [f"- ↑ [[{k}]] {before[k]} → {tiers[k].tier}" for k in up[:50]]
    r.lines += [f"- ↓ [[{k}]] {before[k]} → {tiers[k].tier}" for k in down[:50]]
    r.lines.append("")
    r.lines.append("Tiers are derived data: `alaya compile` applies them to the indexes.")
    ctx.tiers = tiers  # forget reads them
    _commit_phase(ctx, r, results, None,
                  f"HOT {counts['HOT']}, WARM {counts['WARM']}, COLD {counts['COLD']}")
    return r


def phase_forget(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    r = PhaseResult("forget")
    index = ctx.index()
    tiers = ctx.tiers or assign_tiers(
        _tier_inputs(index, ctx.now), ctx.stats, ctx.now, ctx.vault.config.section("tiers"))
    depended: set[str] = set()
    for n in index.notes:
        if n.kind in ("template", "archive"):
            continue
        for lk in n.links:
            res = index.resolver.resolve(lk.target) if lk.target else None
            if res is not None and res.note is not None and res.note.path != n.path:
                depended.add(res.note.path)
    from vault_engine.care.feedback import quality_scores

    quality = quality_scores(ctx.vault)
    limit = dt.timedelta(days=FORGET["days"])
    chosen: list[tuple[Card, str]] = []
    for n in index.notes:
        if not isinstance(n, Card) or n.pinned or n.meta.get("pinned"):
            continue
        key = n.id or f"path:{n.path}"
        q = quality.get(key)
        if q is not None and q.total >= 5 and (q.score or 0.0) < 0.2:
            chosen.append((n, f"deprecated by feedback: quality {q.score:.2f} over "
                              f"{q.total} verdicts"))
            continue
        t = tiers.get(key)
        s = ctx.stats.get(key)
        if t is None or t.tier != "COLD" or t.temperature >= FORGET["temperature"]:
            continue
        last = (s.last_accessed if s else None) or n.updated or n.created
        if last is None or ctx.now - last < limit:
            continue
        if s is not None and s.access_count >= FORGET["max_access"]:
            continue
        if n.path in depended:
            continue
        reason = (f"forgotten: cold (temperature {t.temperature:.2f}), last used "
                  f"{last.date()}, recalled {s.access_count if s else 0} time(s), nothing "
                  "links to it")
        chosen.append((n, reason))
    r.numbers.update(archived=len(chosen))
    r.lines = [f"- [[{n.id or n.stem}]] {n.title}: {why}" for n, why in chosen]

    def work(tx: Transaction) -> None:
        for n, why in chosen:
            archive_note(tx, ctx.vault, n, why, ctx.now)

    _commit_phase(ctx, r, results, work if chosen else None, f"{len(chosen)} card(s) archived")
    return r


# -- promote: the six-factor score -----------------------------------------------------------

@dataclass(frozen=True)
class Score:
    key: str
    score: float
    factors: dict[str, float]
    signals: int
    queries: int


def six_factor(stats: NoteStats, concepts: int, now: dt.datetime,
               bonus: float = 0.0) -> Score:
    """Seed 002: frequency 0.24, relevance 0.30, diversity 0.15, recency 0.15, consolidation
    0.10, concept coverage 0.06, plus up to 0.15 dreaming bonus."""
    signals = stats.access_count
    last = stats.last_accessed or now
    first = stats.first_accessed or last
    days_since = max(0.0, (now - last).total_seconds() / 86400)
    span = max(0.0, (last - first).total_seconds() / 86400)
    f = {
        "frequency": min(1.0, math.log1p(signals) / math.log1p(10)),
        "relevance": max(0.0, min(1.0, stats.relevance)),
        "diversity": min(1.0, max(len(stats.queries), len(stats.days)) / 5),
        "recency": math.exp(-math.log(2) / 14 * days_since),
        "consolidation": 0.55 * min(1.0, len(stats.days) / 5) + 0.45 * min(1.0, span / 7),
        "concepts": min(1.0, concepts / 6),
    }
    score = sum(WEIGHTS[k] * v for k, v in f.items()) + min(0.15, bonus)
    return Score("", round(score, 4), {k: round(v, 3) for k, v in f.items()}, signals,
                 len(stats.queries))


_ENTRY_RE = re.compile(r"^- \[\[(?P<key>[^\]|#]+)(?:\|[^\]]*)?\]\].*?\(score (?P<score>[0-9.]+)\)")


def memory_entries(block: str) -> dict[str, tuple[float, str]]:
    out = {}
    for line in block.splitlines():
        m = _ENTRY_RE.match(line.strip())
        if m:
            out[m.group("key")] = (float(m.group("score")), line.strip())
    return out


def phase_promote(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    r = PhaseResult("promote")
    cfg = ctx.vault.config.section("memory")
    budget = int(cfg["budget_chars"])
    index = ctx.index()
    by_key = {n.id: n for n in index.notes if n.id and n.kind not in ("template", "archive")}
    new_today = {n.id for n in index.notes if isinstance(n, Card) and n.created
                 and ctx.now - n.created < dt.timedelta(days=1)}
    scored: list[Score] = []
    for key, st in ctx.stats.items():
        note = by_key.get(key)
        if not isinstance(note, Card) or note.namespace not in ("shared", ctx.vault.config.get(
                "vault", "default_namespace")):
            continue
        concepts = len(set(note.tags) | {lk.target.lower() for lk in note.links
                                          if lk.field == "relations"})
        # dreaming bonus: Light (+0.06) for what today's distillation touched, REM (+0.09)
        # for a memory whose scene groups it with others (a cross-memory pattern)
        bonus = (0.06 if key in new_today else 0.0) + (0.09 if note.meta.get("scene") else 0.0)
        sc = six_factor(st, concepts, ctx.now, bonus)
        scored.append(Score(key, sc.score, sc.factors, sc.signals, sc.queries))
    winners = [s for s in scored if s.score >= float(cfg["min_score"])
               and s.signals >= int(cfg["min_signals"]) and s.queries >= int(cfg["min_queries"])]
    path = ctx.vault.root / MEMORY
    text = path.read_text(encoding="utf-8") if path.exists() else (
        "---\nid: memory\ntitle: MEMORY\n---\n# MEMORY\n\n")
    human = blocks.outside_blocks(text)
    current = memory_entries(blocks.read_block(text, "memory", MEMORY) or "")
    entries: dict[str, tuple[float, str]] = {k: v for k, v in current.items() if k in by_key}
    for s in winners:
        note = by_key[s.key]
        first_claim = next((c.text for c in getattr(note, "claims", ()) if c.status ==
                            "supported"), "")
        gist = f" — {first_claim[:140]}" if first_claim and first_claim != note.title else ""
        entries[s.key] = (s.score, f"- [[{s.key}|{note.title}]]{gist} (score {s.score:.2f})")
    ranked = sorted(entries.items(), key=lambda kv: (-kv[1][0], kv[0]))
    markers = len(blocks.replace_block("", "memory", "x\n")) - 2  # the block's own markers
    room = budget - len(human) - markers
    kept, evicted = [], []
    used = 0
    for key, (score, line) in ranked:
        if used + len(line) + 1 <= room:
            kept.append(line)
            used += len(line) + 1
        else:
            evicted.append((key, score))
    added = [k for k, _ in ranked if k not in current and any(k in x for x in kept)]
    r.numbers.update(candidates=len(scored), past_the_gates=len(winners), promoted=len(added),
                     in_memory=len(kept), evicted=len(evicted), budget_chars=budget,
                     human_chars=len(human))
    if len(human) > budget:
        r.lines.append(f"⚠ your own text in MEMORY.md is {len(human):,} characters, over the "
                       f"budget of {budget:,}: nothing can be promoted until it is shorter "
                       "(alaya never evicts human text)")
    r.lines += [f"- promoted [[{k}]]" for k in added]
    r.lines += [f"- evicted [[{k}]] (score {s:.2f}, lowest first)" for k, s in evicted
                if k in current]
    r.lines += ["", "| card | score | frequency | relevance | diversity | recency | "
                "consolidation | concepts | signals | queries |", "|---|---|---|---|---|---|---|---|---|---|"]
    for s in sorted(scored, key=lambda s: -s.score)[:30]:
        f = s.factors
        r.lines.append(f"| [[{s.key}]] | {s.score:.2f} | {f['frequency']} | {f['relevance']} | "
                       f"{f['diversity']} | {f['recency']} | {f['consolidation']} | "
                       f"{f['concepts']} | {s.signals} | {s.queries} |")
    block = "\n".join(kept) + ("\n" if kept else "")
    new_text = blocks.replace_block(text, "memory", block, path=MEMORY)

    def work(tx: Transaction) -> None:
        if path.exists():
            tx.write(MEMORY, new_text, ctx.vault.current_checksum(MEMORY))
        else:
            tx.create(MEMORY, new_text)

    _commit_phase(ctx, r, results, work if new_text != text else None,
                  f"{len(added)} promoted, {len(kept)} in MEMORY.md")
    return r


RUNNERS: dict[str, Callable[[Context, list[PhaseResult]], PhaseResult]] = {
    "distill": phase_distill, "consolidate": phase_consolidate, "conflicts": phase_conflicts,
    "cooldown": phase_cooldown, "forget": phase_forget, "promote": phase_promote,
}


def introspect(vault: Vault, *, phases: Sequence[str] = PHASES, dry_run: bool = False,
               commit: bool = True, now: dt.datetime | None = None,
               on_phase: Callable[[PhaseResult], None] | None = None) -> list[PhaseResult]:
    now = now or dt.datetime.now(dt.UTC)
    ctx = Context(vault=vault, now=now, dry_run=dry_run, commit=commit,
                  report_path=f"reports/introspect-{now.date().isoformat()}.md",
                  stats=note_stats(vault.state_dir))
    results: list[PhaseResult] = []
    for name in PHASES:
        if name not in phases:
            continue
        result = RUNNERS[name](ctx, results)
        results.append(result)
        if on_phase:
            on_phase(result)
    return results


def restore(vault: Vault, ref: str, *, commit: bool = True) -> tuple[str, str | None]:
    """Bring an archived note back where it was (or into cards/)."""
    from vault_engine.errors import NotFoundError, UsageError

    with vault.locked():
        index = vault.load()
        note = index.find(ref)
        if note.kind != "archive":
            raise UsageError(f"{note.path} is not archived", fix="pass an archived note's id")
        doc = NoteText.parse(vault.read_text(note.path)[0], note.path)
        origin = str(doc.frontmatter.data.get("archived_from") or f"cards/{note.stem}.md")
        if (vault.root / origin).exists():
            raise NotFoundError(f"{origin} exists again; restore would overwrite it",
                                fix="rename or move that note first")
        for key in ("archived", "archived_reason", "archived_from", "merged_into"):
            doc.frontmatter.delete(key)
        with vault.transaction(f"restore: {note.title} → {origin}", commit=commit) as tx:
            tx.create(origin, doc.render())
            tx.delete(note.path, vault.current_checksum(note.path))
    return origin, tx.sha
