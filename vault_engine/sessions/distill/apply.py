"""Write a distill result into the vault: dedup (store / update / discard), entities, links,
the session's distilled mark — one transaction, one commit per session.

Dedup (seed 004 L1): every draft card is compared with existing cards by title and by the
token overlap (Jaccard over BM25 tokens of title + claims):
- no existing card is close → **store** a new card;
- a close card exists → **update** it: a claim it already has (overlap ≥ 0.7) gains this
  session's evidence, a new claim is appended, `updated` and `source_sessions` move;
- the close card already holds every claim with this evidence → **discard**.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vault_engine.store.authorship import Authorship
from vault_engine.store.cards import ClaimSpec, NewCard, card_file, now_utc
from vault_engine.store.frontmatter import FlowMap, NoteText, format_datetime
from vault_engine.store.ids import new_id, safe_filename
from vault_engine.store.links import format_link, link_target_for, normalize_name
from vault_engine.store.model import Card, Entity, Note, Session
from vault_engine.store.namespaces import SHARED, Caller, agent_of, home_folder
from vault_engine.store.proposals import Proposal
from vault_engine.store.vault import Transaction, Vault, VaultIndex
from vault_engine.text.tokens import tokenize

from .model import CardDraft, DistillResult
from .supersede import Supersession, find_supersessions

CARD_MATCH = 0.5  # at least this token overlap with an existing card: the same card
SIMILAR_MATCH = 0.3  # between this and CARD_MATCH: a new card linked SIMILAR_TO the old one
CLAIM_MATCH = 0.7


@dataclass
class Applied:
    session: str
    created: list[str] = field(default_factory=list)  # "[type] Title"
    updated: list[str] = field(default_factory=list)
    discarded: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    card_paths: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)  # "[type] Title (why)"
    # a person's card a new value supersedes: its status change is proposed, never made
    proposals: list[Proposal] = field(default_factory=list)

    def message(self, distiller: str) -> str:
        head = (f"distill: {self.session} → {len(self.created)} new, {len(self.updated)} "
                f"updated card(s), {len(self.links)} link(s) [{distiller}]")
        lines = ([f"+ {c}" for c in self.created] + [f"~ {c}" for c in self.updated]
                 + [f"= {c} (already known)" for c in self.discarded]
                 + [f"⤳ {c} superseded" for c in self.superseded]
                 + [f"? {p.summary} (a person's card: proposed, not changed)"
                    for p in self.proposals]
                 + [f"+ entity {e}" for e in self.entities] + [f"→ {link}" for link in self.links])
        return head + ("\n\n" + "\n".join(lines) if lines else "")


def _tokens(text: str) -> set[str]:
    return set(tokenize(text))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _card_tokens(title: str, claims: Sequence[str]) -> set[str]:
    return _tokens(title + " " + " ".join(claims))


def closest_card(index: VaultIndex, draft: CardDraft,
                 namespace: str | None = None) -> tuple[float, Card | None]:
    """The existing card most like a draft: (1.0, card) for the same title, else the best
    token overlap — among the cards of `namespace` when given (a session's cards update only
    cards of its own namespace)."""
    want = normalize_name(draft.title)
    draft_tokens = _card_tokens(draft.title, [c.text for c in draft.claims])
    best: tuple[float, Card | None] = (0.0, None)
    for note in index.notes:
        if not isinstance(note, Card) or (namespace is not None and note.namespace != namespace):
            continue
        if normalize_name(note.title) == want:
            return 1.0, note
        score = _jaccard(draft_tokens, _card_tokens(note.title, [c.text for c in note.claims]))
        if score > best[0]:
            best = (score, note)
    return best


def find_duplicate(index: VaultIndex, draft: CardDraft) -> Card | None:
    """The existing card a draft duplicates (title, or token overlap ≥ CARD_MATCH)."""
    score, card = closest_card(index, draft)
    return card if score >= CARD_MATCH else None


def _evidence(session_link: str, anchors: Sequence[str], conf: float) -> list[FlowMap]:
    if not anchors:
        return [FlowMap(kind="session", source=format_link(session_link), confidence=conf)]
    return [FlowMap(kind="session", source=format_link(session_link, anchor="^" + a),
                    confidence=conf) for a in anchors]


def _update_card(doc: NoteText, draft: CardDraft, session_link: str) -> list[str]:
    """Merge a draft into an existing card's text; returns what changed (empty: discard)."""
    data = doc.frontmatter.data
    claims: list[Any] = data["claims"] if isinstance(data.get("claims"), list) else []
    changes: list[str] = []
    for dc in draft.claims:
        dtok = _tokens(dc.text)
        match = None
        for i, existing in enumerate(claims):
            if isinstance(existing, Mapping) and _jaccard(
                    dtok, _tokens(str(existing.get("text", "")))) >= CLAIM_MATCH:
                match = i
                break
        new_ev = _evidence(session_link, dc.evidence, dc.confidence)
        if match is None:
            ids = {str(c.get("id")) for c in claims if isinstance(c, Mapping)}
            n = len(claims) + 1
            while f"c{n}" in ids:
                n += 1
            item: dict[str, Any] = {"id": f"c{n}", "text": dc.text, "confidence": dc.confidence,
                                    "status": "supported", "evidence": new_ev}
            doc.frontmatter.append_item("claims", item)
            claims = list(doc.frontmatter.data.get("claims") or [])
            changes.append(f"new claim c{n}")
            continue
        existing = claims[match]
        have = {str(e.get("source")) for e in existing.get("evidence") or [] if isinstance(e, Mapping)}
        fresh = [e for e in new_ev if e["source"] not in have]
        if fresh:
            updated = dict(existing)
            updated["evidence"] = [FlowMap(e) if isinstance(e, Mapping) else e
                                   for e in (existing.get("evidence") or [])] + fresh
            new_claims = [dict(c) if isinstance(c, Mapping) else c for c in claims]
            new_claims[match] = updated
            for c in new_claims:
                if isinstance(c, dict) and isinstance(c.get("evidence"), list):
                    c["evidence"] = [FlowMap(e) if isinstance(e, Mapping) else e
                                     for e in c["evidence"]]
            doc.set("claims", new_claims)
            claims = list(doc.frontmatter.data.get("claims") or [])
            changes.append(f"evidence for {existing.get('id')}")
    if changes:
        raw_sources = data.get("source_sessions")
        sources: list[Any] = raw_sources if isinstance(raw_sources, list) else []
        link = format_link(session_link)
        if link not in [str(s) for s in sources]:
            doc.frontmatter.append_item("source_sessions", link)
        doc.set("updated", now_utc())
    return changes


def _entity_file(index: VaultIndex, name: str, etype: str, aliases: Sequence[str],
                 lane: str | None, session_link: str, taken: set[str],
                 namespace: str = SHARED) -> tuple[str, str]:
    from vault_engine.store.frontmatter import new_note_text

    ent_id = new_id("entity", index.ids() | taken)
    taken.add(ent_id)
    rel = f"{home_folder('entities', namespace)}/{safe_filename(name)}.md"
    values: dict[str, Any] = {"id": ent_id, "title": name, "type": etype,
                              "aliases": list(aliases) or None, "lane": lane,
                              "namespace": namespace, "created": now_utc(),
                              "source_sessions": [format_link(session_link)]}
    return rel, new_note_text(values, "")


class _Owners:
    """Whose each card is, read from git only when a draft matches an existing card."""

    def __init__(self, vault: Vault, index: Any) -> None:
        self.vault, self.index = vault, index
        self._owners: Authorship | None = None

    def is_persons(self, rel: str) -> bool:
        if self._owners is None:
            self._owners = Authorship.load(self.vault, self.index.notes)
        return self._owners.is_persons(rel)


def apply_result(vault: Vault, session: Session, result: DistillResult, *,
                 commit: bool = True) -> tuple[Applied, Transaction | None]:
    """Write `result` for `session` in one transaction (caller holds no lock).

    What a session teaches stays in its namespace: its cards and entities are written there,
    and they update, link to and name only notes that namespace's readers see (a shared
    session: shared notes only) — so a private note's title never reaches a shared card."""
    namespace = session.namespace or SHARED
    owner = agent_of(namespace)
    audience = Caller.public() if owner is None else Caller("agent", owner)
    with vault.locked():
        index = audience.view(vault.load())
        session_link = session.stem
        applied = Applied(session=session.id or session.stem)
        plan_new: list[tuple[CardDraft, str, str, str]] = []  # draft, id, path, text
        plan_update: list[tuple[CardDraft, Card]] = []
        title_to_target: dict[str, str] = {}
        taken_ids: set[str] = set()
        taken_names: set[str] = set()
        owners = _Owners(vault, index)
        # entities first: cards link to them
        entity_targets: dict[str, str] = {}
        entity_files: list[tuple[str, str]] = []
        mentioned = {n.casefold() for c in result.cards for n in c.entities}
        for ed in result.entities:
            if ed.type != "person" and ed.name.casefold() not in mentioned:
                continue  # a recurring term no card is about stays out of the vault
            res = index.resolver.lookup(ed.name)
            if res.note is not None and isinstance(res.note, Entity | Card | Note):
                entity_targets[ed.name.casefold()] = link_target_for(res.note, index.resolver)
                continue
            rel, text = _entity_file(index, ed.name, ed.type, ed.aliases, ed.lane,
                                     session_link, taken_ids, namespace)
            if rel.casefold() in {p.casefold() for p, _ in entity_files} or \
                    (vault.root / rel).exists():
                continue
            entity_files.append((rel, text))
            entity_targets[ed.name.casefold()] = rel.rsplit("/", 1)[-1][:-3]
            applied.entities.append(ed.name)
        # the latest value wins: older cards this session gives a new value for; a draft that
        # supersedes the card it resembles is a new card, not an update of the old one
        # … a person's card is never rewritten: the new card links SUPERSEDES to it and the
        # status change is proposed (report, review queue), as introspect does for their notes
        found = _supersessions(vault, index, session, result)
        superseded = [sup for sup in found if not owners.is_persons(sup.old.path)]
        theirs = [sup for sup in found if owners.is_persons(sup.old.path)]
        replaces = {(id(sup.draft), sup.old.path) for sup in superseded}
        for draft in result.cards:
            score, near = closest_card(index, draft, namespace)
            if near is None or score < SIMILAR_MATCH:
                score, near = closest_card(index, draft)  # shared ones, to link SIMILAR_TO
                score = min(score, CARD_MATCH - 0.01)
            if near is not None and score >= CARD_MATCH and owners.is_persons(near.path):
                score = min(score, SIMILAR_MATCH)  # a person's card is linked, never updated
            if near is not None and score >= CARD_MATCH and (id(draft), near.path) not in replaces:
                plan_update.append((draft, near))
                title_to_target[draft.title.casefold()] = link_target_for(near, index.resolver)
                continue
            rels = [FlowMap(type="REFERENCES", target=format_link(entity_targets[n.casefold()]),
                            weight=0.6)
                    for n in draft.entities if n.casefold() in entity_targets]
            if near is not None and score >= SIMILAR_MATCH:  # related, not the same: link it
                rels.append(FlowMap(type="SIMILAR_TO",
                                    target=format_link(link_target_for(near, index.resolver)),
                                    weight=round(score, 2), reason="shares most of its terms"))
                applied.links.append(f"{draft.title} SIMILAR_TO {near.title}")
            spec = NewCard(
                title=draft.title, type=draft.type, content=draft.content, tags=draft.tags,
                importance=draft.importance, source_sessions=(session_link,),
                namespace=namespace,
                claims=tuple(ClaimSpec(text=c.text, confidence=c.confidence,
                                       evidence=tuple(_evidence(session_link, c.evidence,
                                                                c.confidence)),
                                       valid_from=c.valid_from) for c in draft.claims))
            card_id, rel, text = card_file(vault, index, spec, relations=rels,
                                           taken_ids=taken_ids, taken_names=taken_names)
            plan_new.append((draft, card_id, rel, text))
            title_to_target[draft.title.casefold()] = rel.rsplit("/", 1)[-1][:-3]
        # links between drafts (and to existing cards by title)
        link_items: dict[str, list[FlowMap]] = {}
        for sup in found:
            src = title_to_target.get(sup.draft.title.casefold())
            if src is None:
                continue
            link_items.setdefault(src, []).append(FlowMap(
                type="SUPERSEDES", target=format_link(link_target_for(sup.old, index.resolver)),
                weight=0.9, reason=sup.reason))
            applied.links.append(f"{sup.draft.title} SUPERSEDES {sup.old.title}")
        for ld in result.links:
            src = title_to_target.get(ld.from_title.casefold())
            dst = title_to_target.get(ld.to_title.casefold())
            if dst is None:
                res = index.resolver.lookup(ld.to_title)
                dst = link_target_for(res.note, index.resolver) if res.note else None
            if src is None or dst is None or src == dst:
                continue
            item = FlowMap(type=ld.relation, target=format_link(dst), weight=0.8)
            if ld.reason:
                item["reason"] = ld.reason
            link_items.setdefault(src, []).append(item)
            applied.links.append(f"{ld.from_title} {ld.relation} {ld.to_title}")

        message_parts: list[str] = []
        tx = vault.transaction("distill", commit=commit)
        with tx:
            for rel, text in entity_files:
                tx.create(rel, text)
            for draft, _card_id, rel, text in plan_new:
                stem = rel.rsplit("/", 1)[-1][:-3]
                extra = link_items.pop(stem, [])
                if extra:
                    doc = NoteText.parse(text, path=rel)
                    for item in extra:
                        doc.frontmatter.append_item("relations", item)
                    text = doc.render()
                tx.create(rel, text)
                applied.created.append(f"[{draft.type}] {draft.title}")
                applied.card_paths.append(rel)
            for draft, card in plan_update:
                changes: list[str] = []
                stem = link_target_for(card, index.resolver)
                extra = link_items.pop(stem, [])

                def edit(doc: NoteText, draft: CardDraft = draft, extra: list[FlowMap] = extra,
                         out: list[str] = changes) -> None:
                    out.clear()
                    out.extend(_update_card(doc, draft, session_link))
                    for item in extra:
                        existing = doc.frontmatter.data.get("relations") or []
                        if not any(isinstance(r, Mapping) and r.get("type") == item["type"]
                                   and r.get("target") == item["target"] for r in existing):
                            doc.frontmatter.append_item("relations", item)
                            out.append(f"{item['type']} link")

                before = vault.current_checksum(card.path)
                after = tx.update(card.path, edit)
                if after != before and changes:
                    applied.updated.append(f"[{card.type}] {card.title} ({', '.join(changes)})")
                    applied.card_paths.append(card.path)
                else:
                    applied.discarded.append(f"[{card.type}] {card.title}")
            until = format_datetime(session.started or now_utc())
            for sup in superseded:
                def retire(doc: NoteText, ids: tuple[str, ...] = sup.claim_ids) -> None:
                    _supersede_claims(doc, ids, until)

                tx.update(sup.old.path, retire)
                applied.superseded.append(f"[{sup.old.type}] {sup.old.title} ({sup.reason})")
                if sup.old.path not in applied.card_paths:
                    applied.card_paths.append(sup.old.path)
            for sup in theirs:
                new = title_to_target.get(sup.draft.title.casefold(), sup.draft.title)
                old = link_target_for(sup.old, index.resolver)
                applied.proposals.extend(Proposal(
                    path=sup.old.path, action="claim-status",
                    item={"claim": cid, "status": "superseded", "valid_until": until,
                          "superseded_by": format_link(new)},
                    summary=f"mark {format_link(old)} {cid} superseded by {format_link(new)} "
                            f"({sup.reason})") for cid in sup.claim_ids)
            if not is_distilled(session) or applied.created or applied.updated or entity_files \
                    or found:
                # a re-distil (--all) that learnt nothing leaves the mark alone: no commit
                # that only touches markers
                tx.update(session.path, lambda doc: _mark_distilled(doc, result.distiller,
                                                                    len(session.turns)))
            message_parts.append(applied.message(result.distiller))
            tx.message = "\n".join(message_parts)
    return applied, tx


def _supersessions(vault: Vault, index: VaultIndex, session: Session,
                   result: DistillResult) -> list[Supersession]:
    cards = [n for n in index.notes if isinstance(n, Card)]
    seen_at = {n.stem: n.started for n in index.notes if isinstance(n, Session) and n.started}
    by_stem = {n.stem: n for n in index.notes if isinstance(n, Session)}

    def context_of(card: Card) -> str:
        """The turns an older card's claims cite (where it may name its subject)."""
        texts = []
        for claim in card.claims:
            for ev in claim.evidence:
                note = by_stem.get(ev.link.target) if ev.link is not None else None
                turn = note.turn(ev.link.block or "") if note and ev.link else None
                if turn is not None and turn.text not in texts:
                    texts.append(turn.text)
        return "\n".join(texts)

    return find_supersessions(cards, result.cards, session.started, session.stem, seen_at,
                              vault.config.timezone(), {t.anchor: t.text for t in session.turns},
                              context_of)


def _supersede_claims(doc: NoteText, ids: tuple[str, ...], until: str) -> None:
    """The claims `ids` of a card: status superseded, valid until the new value's session."""
    claims = doc.frontmatter.data.get("claims")
    if not isinstance(claims, list):
        return
    new_claims: list[Any] = []
    for c in claims:
        if isinstance(c, Mapping) and str(c.get("id")) in ids and c.get("status") != "superseded":
            c = dict(c)
            c["status"] = "superseded"
            c["valid_until"] = until
        elif isinstance(c, Mapping):
            c = dict(c)
        if isinstance(c, dict) and isinstance(c.get("evidence"), list):
            c["evidence"] = [FlowMap(e) if isinstance(e, Mapping) else e for e in c["evidence"]]
        new_claims.append(c)
    doc.set("claims", new_claims)
    doc.set("updated", now_utc())


def _mark_distilled(doc: NoteText, distiller: str, turns: int) -> None:
    doc.set("distilled", now_utc())
    doc.set("distilled_by", distiller)
    doc.set("distilled_turns", turns)  # turns appended later make the session pending again


def is_distilled(session: Session) -> bool:
    """Distilled, and not grown since: `distilled_turns` is how many turns the last distil
    read; a session marked before that key existed counts as distilled whole."""
    if not session.meta.get("distilled"):
        return False
    seen = session.meta.get("distilled_turns")
    return not isinstance(seen, int) or isinstance(seen, bool) or seen >= len(session.turns)

