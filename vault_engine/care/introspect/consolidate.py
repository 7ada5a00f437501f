"""Introspect phase 2, consolidate: near-duplicate cards (compared on their full text) merged
into the one with more behind it (claims and evidence united, relations moved over, links
re-pointed where alaya owns them, the other archived with `merged_into`); SIMILAR_TO between
cards in the middle band; REFERENCES from cards to the entities they name; CAUSED_BY across
sessions; relation-type suggestions (report only).

A person's note (vault_engine/store/authorship.py) is never merged, archived or edited here:
what would have changed it becomes a `Proposal` (report and review queue). A symmetric
SIMILAR_TO goes on the end alaya owns when only one end is a person's."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from typing import Any

from vault_engine.care.detection import card_tokens, near_duplicates
from vault_engine.store.archive import archive_note
from vault_engine.store.authorship import Authorship
from vault_engine.store.frontmatter import FlowMap, NoteText
from vault_engine.store.links import link_target_for, link_to
from vault_engine.store.model import CORE_RELATIONS, Card, Note
from vault_engine.store.namespaces import may_name
from vault_engine.store.proposals import Proposal
from vault_engine.store.relations import FAMILIES, GENERIC, classify
from vault_engine.store.vault import Transaction, VaultIndex

from .phase import Context, PhaseResult, appender, commit_phase, flow

SIMILAR_BAND = (0.5, 0.8)  # Jaccard of two cards' words: SIMILAR_TO in this band


def _merge_claims(winner: Card, loser: Card) -> list[dict[str, Any]]:
    from vault_engine.care.detection import DUPLICATE, _jaccard
    from vault_engine.text.tokens import tokenize

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
    owners = ctx.owners(index)
    live = [n for n in index.notes if n.kind not in ("template", "archive")]
    incoming: dict[str, int] = {}
    for n in live:
        for lk in n.links:
            res = index.resolver.resolve_link(lk, n.path) if lk.target else None
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
        if owners.is_persons(loser.path) or owners.is_persons(winner.path):
            r.proposals.append(Proposal(
                path=loser.path, action="merge", into=winner.path,
                reason=f"merged into {winner.title} ({d.similarity:.0%} of their text shared)",
                summary=f"merge {link_to(loser, index.resolver)} into "
                        f"{link_to(winner, index.resolver)} ({d.similarity:.0%} of their "
                        "text shared)"))
            continue
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
    similar, mentions, causes = _route(r, index, owners, similar, mentions, causes)
    r.numbers.update(duplicate_pairs=len(plan), similar_links=len(similar),
                     entity_links=len(mentions), causal_links=len(causes),
                     relation_suggestions=len(suggestions))
    def ln(n: Note) -> str:
        return link_to(n, index.resolver)

    r.lines = [f"- merge {ln(loser)} into {ln(w)} ({s:.0%} of their text shared)"
               for w, loser, s in plan]
    r.lines += [f"- SIMILAR_TO {ln(a)} ↔ {ln(b)} ({s:.0%})" for a, b, s in similar]
    r.lines += [f"- {ln(c)} REFERENCES {ln(e)} (mentions “{name}”)" for c, e, name in mentions]
    r.lines += [f"- {ln(a)} CAUSED_BY {ln(b)} (across sessions: “{phrase}”)"
                for a, b, phrase in causes]
    if suggestions:
        r.lines += ["", "Relation types:"] + [f"- {s}" for s in suggestions]

    def work(tx: Transaction) -> None:
        for winner, loser, sim in plan:
            claims = _merge_claims(winner, loser)
            sources = list(dict.fromkeys(
                [str(s) for s in winner.meta.get("source_sessions") or []]
                + [str(s) for s in loser.meta.get("source_sessions") or []]))
            tags = list(dict.fromkeys(list(winner.tags) + list(loser.tags)))
            have = {(rel.type, (index.resolver.resolve_link(rel.link, winner.path).note
                                or winner).path) for rel in winner.relations}
            extra = []
            for rel in loser.relations:
                if rel.origin != "frontmatter":
                    continue
                target = index.resolver.resolve_link(rel.link, loser.path).note
                if target is None or target.path in (winner.path, loser.path) or \
                        (rel.type, target.path) in have:
                    continue
                item = FlowMap(type=rel.type, target=link_to(target, index.resolver),
                               weight=rel.weight)
                if rel.reason:
                    item["reason"] = rel.reason
                extra.append(item)

            def edit(doc: NoteText, claims: list[Any] = claims, sources: list[str] = sources,
                     tags: list[str] = tags, extra: list[Any] = extra,
                     loser: Card = loser, winner: Card = winner) -> None:
                fm = doc.frontmatter
                if claims:
                    fm.set("claims", flow(claims))
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
            left = repoint_links(tx, index, loser, winner, skip=[winner.path], owners=owners)
            r.lines += [f"- {ln(n)} still links to {ln(loser)} in its text (now archived; "
                        f"Obsidian opens the tombstone): point it at {ln(winner)}"
                        for n in (index.by_path(p) for p in left) if n is not None]
            archive_note(tx, ctx.vault, loser, f"merged into {winner.title} "
                         f"({sim:.0%} of their text shared)", ctx.now, merged_into=winner,
                         resolver=index.resolver)
        for a, b, sim in similar:
            item = FlowMap(type="SIMILAR_TO", target=link_to(b, index.resolver),
                           weight=round(sim, 2),
                           reason="introspect: most of their words are shared")
            tx.update(a.path, appender("relations", item))
        for card, entity, name in mentions:
            item = FlowMap(type="REFERENCES", target=link_to(entity, index.resolver), weight=0.6,
                           reason=f"introspect: mentions {name}")
            tx.update(card.path, appender("relations", item))
        for effect, cause, phrase in causes:
            item = FlowMap(type="CAUSED_BY", target=link_to(cause, index.resolver), weight=0.7,
                           reason=f"introspect: across sessions, “{phrase}”")
            tx.update(effect.path, appender("relations", item))

    commit_phase(ctx, r, results, work if (plan or similar or mentions or causes) else None,
                  f"{len(plan)} merge(s), {len(similar)} SIMILAR_TO, "
                  f"{len(mentions)} entity link(s), {len(causes)} causal link(s)")
    return r


def _route(r: PhaseResult, index: VaultIndex, owners: Authorship,
           similar: list[tuple[Card, Card, float]], mentions: list[tuple[Card, Note, str]],
           causes: list[tuple[Card, Card, str]]) -> tuple[list[Any], list[Any], list[Any]]:
    """Keep the links alaya may write (on notes it owns); the rest become proposals. A
    SIMILAR_TO is symmetric: stored on whichever end alaya owns. A link is made only where
    every reader of the note holding it may read the note it names (`may_name`): a shared
    card never links an agent's private one — a SIMILAR_TO goes on the private end, the rest
    are left out."""
    mine = lambda n: not owners.is_persons(n.path)  # noqa: E731

    def nameable(holder: Note, target: Note) -> bool:
        return may_name(holder.namespace, target.namespace)

    similar = [(a, b, s) if nameable(a, b) else (b, a, s) for a, b, s in similar
               if nameable(a, b) or nameable(b, a)]
    mentions = [m for m in mentions if nameable(m[0], m[1])]
    causes = [c for c in causes if nameable(c[0], c[1])]

    def propose(holder: Note, rel: str, target: Note, weight: float, reason: str) -> None:
        item = {"type": rel, "target": link_to(target, index.resolver), "weight": weight,
                "reason": reason}
        r.proposals.append(Proposal(path=holder.path, action="add-relation", item=item,
                                    summary=f"{link_to(holder, index.resolver)} {rel} "
                                            f"{item['target']}"))

    keep_similar = []
    for a, b, sim in similar:
        if mine(a) or (mine(b) and nameable(b, a)):
            keep_similar.append((a, b, sim) if mine(a) else (b, a, sim))
        else:
            propose(a, "SIMILAR_TO", b, round(sim, 2), "introspect: most of their words are shared")
    def split(found: list[Any], rel: str, weight: float, why: str) -> list[Any]:
        """Keep what lands on a note alaya owns (the first of each tuple); propose the rest."""
        keep = []
        for holder, target, detail in found:
            if mine(holder):
                keep.append((holder, target, detail))
            else:
                propose(holder, rel, target, weight, why.format(detail))
        return keep

    keep_mentions = split(mentions, "REFERENCES", 0.6, "introspect: mentions {}")
    keep_causes = split(causes, "CAUSED_BY", 0.7, "introspect: across sessions, “{}”")
    return keep_similar, keep_mentions, keep_causes


def related_pairs(index: VaultIndex, cards: Iterable[Card],
                  family: str | None = None) -> set[frozenset[str]]:
    """Pairs of paths already joined by a relation of one of `cards` (either direction);
    with `family`, only by a relation of that family ("causal")."""
    linked = set()
    for c in cards:
        for rel in c.relations:
            if family is not None and (classify(rel.type) or ("",))[0] != family:
                continue
            res = index.resolver.resolve_link(rel.link, c.path)
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
        linked = {n.path for n in (index.resolver.resolve_link(lk, card.path).note
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
                        r"resulted\s+in|results\s+in|triggered|triggers)\s+(?P<phrase>[^.;:!?,()]+)"
                        r"|(?:导致|造成|引起|引发)了?(?P<zh>[^。；;：:！!？?，,、（）()]+)")

# "…; the expired certificate on the auth endpoint is the result": what comes before is an
# effect of this card (the phrase before "is the result", not "is the result of")
_RESULT_RE = re.compile(r"(?i)(?:^|[;:,]\s*)(?P<phrase>[^.;:!?,()]+?)\s+(?:is|was|are|were)\s+"
                        r"the\s+(?:direct\s+)?(?:result|consequence|outcome)\b(?!\s+of)"
                        r"|(?:^|[；;：:，,。])(?P<zh>[^。；;：:！!？?，,、（）()]+?)就?是(?:这个的)?"
                        r"(?:结果|后果)")

# "…, caused by expired credentials", "the root cause was the nightly backup …": what
# follows is a cause named by this card
_CAUSE_RE = re.compile(r"(?i)\b(?:caused\s+by|because\s+of|due\s+to|triggered\s+by|"
                       r"started\s+when|(?:root\s+)?cause\s+(?:was|is)|culprit\s+(?:was|is)|"
                       r"result\s+of|turned\s+out\s+to\s+be)\s+(?P<phrase>[^.;:!?,()]+)"
                       r"|(?:根因|根本原因|原因|罪魁祸首|起因)(?:是|在于|出在)(?P<zh>[^。；;：:！!？?，,、（）()]+)"
                       r"|(?:由于|因为)(?P<zh2>[^。；;：:！!？?，,、（）()]+)")


CAUSAL_PHRASE_TOKENS = (2, 5)  # a phrase is its first 2–5 content words (stemmed)
LOOSE_FROM = 4  # a phrase of this many words or more may miss one of them in the other card


def _sessions_of(card: Card) -> frozenset[str]:
    return frozenset(str(s).strip("[]").split("|")[0].split("#")[0]
                     for s in card.meta.get("source_sessions") or [])


def causal_links(index: VaultIndex, cards: Sequence[Card],
                 skip: Iterable[str] = ()) -> list[tuple[Card, Card, str]]:
    """Causal chains across sessions: card B says it caused a phrase ("…, which caused
    replication lag of 40 minutes") and card A, from another session, describes that phrase
    ("the replica had replication lag of 40 minutes") → A CAUSED_BY B; or B says the phrase
    is its result ("…; the expired certificate on the auth endpoint is the result"). Likewise
    A names its cause ("… caused by the expired archive credentials", "the root cause was
    the nightly backup holding its table lock", "根因是…") and B, from another session, is
    about it. A phrase is its first content words (stemmed, stopwords out, 2–5 of them), and
    every one must be among the other card's words — all but one when the phrase has
    LOOSE_FROM words or more ("holding its table lock" finds "takes … lock on every table"):
    specific enough that "the disk" alone never links two incidents. Chinese phrases
    (导致了…, 原因是…, 由于…) the same way. Returns (effect card, cause card, phrase)."""
    from vault_engine.text.tokens import tokenize

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
        """The cards that contain every word of a phrase, or all but one of a long one."""
        need = len(key) - (1 if len(key) >= LOOSE_FROM else 0)
        counts: dict[str, int] = {}
        for t in key:
            for p in postings.get(t, ()):
                counts[p] = counts.get(p, 0) + 1
        return [by_path[p] for p in sorted(counts) if counts[p] >= need]
    lo, hi = CAUSAL_PHRASE_TOKENS

    def phrases(card: Card, pattern: re.Pattern[str]) -> list[tuple[frozenset[str], str]]:
        out = []
        for claim in card.claims:
            for m in pattern.finditer(claim.text):
                said = next(g for g in m.groups() if g)
                toks = list(dict.fromkeys(t for t in tokenize(said) if t not in common))[:hi]
                if len(toks) >= lo:
                    out.append((frozenset(toks), said.strip()))
        return out

    linked = related_pairs(index, live, "causal")  # a SIMILAR_TO says nothing of the cause
    found: dict[tuple[str, str], tuple[Card, Card, str]] = {}
    for card in live:
        for key, phrase in phrases(card, _EFFECT_RE) + phrases(card, _RESULT_RE):
            # card caused the phrase
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
            if rel.origin not in ("body", "embed"):
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


def repoint_links(tx: Transaction, index: VaultIndex, old: Note, new: Note,
                  skip: Iterable[str] = (), owners: Authorship | None = None) -> list[str]:
    """Every link to `old` that alaya owns now points at `new`: links in the frontmatter of
    notes alaya wrote (`relations`, evidence, `merged_into` …) and links inside managed blocks
    (`<!-- alaya:NAME:start -->` … `end`), written as Obsidian resolves them (file name, heading
    and block parts kept). A link in a person's note, or in the free text of any note, is
    never rewritten. Returns the notes that still link to `old` from text alaya does not own."""
    from vault_engine.store.blocks import block_spans

    left = []
    skip = set(skip)
    target = link_target_for(new, index.resolver)
    for n in index.notes:
        if n.path in skip or n.path == old.path or n.kind == "template":
            continue
        hits = [lk for lk in n.links
                if lk.target and index.resolver.resolve_link(lk, n.path).note is old]
        if not hits:
            continue
        persons = owners is not None and owners.is_persons(n.path)
        text, checksum = tx.vault.read_text(n.path)
        lines = text.split("\n")
        owned = block_spans(text)  # 1-based line ranges inside managed blocks
        changed = False
        for lk in hits:
            i = lk.line - 1
            in_block = any(a <= lk.line <= b for a, b in owned)
            in_frontmatter = lk.line < n.body_line
            if persons or not (in_frontmatter or in_block) or lk.kind != "wiki":
                if n.path not in left:
                    left.append(n.path)
                continue
            if not 0 <= i < len(lines) or lk.raw not in lines[i]:
                continue
            anchor = ("#^" + lk.block) if lk.block else ("#" + lk.heading if lk.heading else "")
            shown = lk.display or (None if in_frontmatter else lk.target)
            link = f"[[{target}{anchor}" + (f"|{shown}" if shown and shown != target else "") + "]]"
            lines[i] = lines[i].replace(lk.raw, ("!" if lk.raw.startswith("!") else "") + link)
            changed = True
        if changed:
            tx.write(n.path, "\n".join(lines), checksum)
    return left
