"""Creating cards and linking notes — the operations behind `alaya new`, `link`, `unlink`.

Each operation is one transaction: it writes through the vault gateway and makes one commit.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vault_engine.errors import ConflictError, NamespaceError, NotFoundError, UsageError
from vault_engine.primitives import now

from .frontmatter import FlowMap, NoteText, iter_scalar_strings, new_note_text
from .ids import new_id, safe_filename, slug
from .links import format_link, link_target_for
from .model import SYMMETRIC_RELATIONS, Note
from .namespaces import check_may_name, find_writable, home_folder, is_ephemeral, may_name
from .notes import to_datetime
from .vault import Vault, VaultIndex

_REL_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
_TYPE_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


def now_utc() -> dt.datetime:
    return now()


def relation_name(value: str) -> str:
    name = re.sub(r"[\s-]+", "_", value.strip()).upper()
    if not _REL_NAME_RE.match(name):
        raise UsageError(f"relation type {value!r} is not an UPPER_SNAKE name",
                         fix="use a name like DEPENDS_ON or LED_TO")
    return name


@dataclass(frozen=True)
class ClaimSpec:
    text: str
    confidence: float | None = None
    status: str = "supported"
    evidence: tuple[Mapping[str, Any], ...] = ()
    valid_from: str | None = None


@dataclass(frozen=True)
class NewCard:
    """A card to create: what `alaya new` takes from flags or a JSON object (distill's shape)."""

    title: str
    type: str = "concept"
    content: str = ""
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    importance: float | None = None
    namespace: str | None = None
    pinned: bool = False
    claims: tuple[ClaimSpec, ...] = ()
    relations: tuple[Mapping[str, Any], ...] = ()
    source_sessions: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: Any) -> NewCard:
        """Validate a JSON object (`{"title", "content", "type", "tags", "importance", …}`)."""
        if not isinstance(obj, Mapping):
            raise UsageError("expected a JSON object describing one card",
                             fix='pass e.g. {"title": "…", "type": "gotcha", "content": "…"}')
        title = obj.get("title")
        if not isinstance(title, str) or not title.strip():
            raise UsageError("the card needs a non-empty string `title`",
                             fix='add "title": "…" to the JSON object')

        def strings(key: str) -> tuple[str, ...]:
            value = obj.get(key) or []
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise UsageError(f"`{key}` must be a list of strings", fix=f'"{key}": ["a", "b"]')
            return tuple(v.strip() for v in value if v.strip())

        claims = []
        for i, c in enumerate(obj.get("claims") or []):
            if isinstance(c, str):
                c = {"text": c}
            if not isinstance(c, Mapping) or not isinstance(c.get("text"), str):
                raise UsageError(f"claims[{i}] needs a string `text`",
                                 fix='write claims as [{"text": "…", "confidence": 0.8}]')
            ev = c.get("evidence") or []
            ev_items = tuple(e if isinstance(e, Mapping) else {"kind": "text", "source": str(e)}
                             for e in (ev if isinstance(ev, list) else [ev]))
            claims.append(ClaimSpec(text=c["text"], confidence=_prob(c.get("confidence"),
                                                                     f"claims[{i}].confidence"),
                                    status=str(c.get("status") or "supported"),
                                    evidence=ev_items))
        rels = obj.get("relations") or []
        if not isinstance(rels, list) or not all(isinstance(r, Mapping) for r in rels):
            raise UsageError("`relations` must be a list of objects",
                             fix='"relations": [{"type": "DEPENDS_ON", "target": "Other card"}]')
        known = {"title", "content", "body", "type", "tags", "aliases", "importance",
                 "namespace", "pinned", "claims", "relations", "source_sessions"}
        return cls(title=title.strip(), type=str(obj.get("type") or "concept"),
                   content=str(obj.get("content") or obj.get("body") or ""),
                   tags=strings("tags"), aliases=strings("aliases"),
                   importance=_prob(obj.get("importance"), "importance"),
                   namespace=obj.get("namespace"), pinned=bool(obj.get("pinned") or False),
                   claims=tuple(claims), relations=tuple(rels),
                   source_sessions=strings("source_sessions"),
                   extra={k: v for k, v in obj.items() if k not in known})


def _prob(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise UsageError(f"`{name}` must be a number between 0 and 1, got {value!r}",
                         fix=f"set {name} to e.g. 0.8")
    return float(value)


@dataclass(frozen=True)
class Created:
    id: str
    title: str
    path: str
    commit: str | None
    relations: tuple[str, ...] = ()


# Screens what an agent writes before it lands (text/injection.py `shared_screen`: an injection
# bound for `shared` is refused): called with the namespace the text goes to and the text.
# store imports no text room, so the CLI and the MCP server hand it in.
Screen = Callable[[str, Sequence[str | None]], None]


def card_namespace(vault: Vault, spec: NewCard) -> str:
    """The namespace a new card goes to: the one asked for, else the caller's home."""
    return str(spec.namespace or vault.caller.home(str(vault.config.get("vault", "default_namespace"))))


def card_file(vault: Vault, index: VaultIndex, spec: NewCard, *,
              relations: Sequence[Mapping[str, Any]] = (), taken_ids: set[str] | None = None,
              taken_names: set[str] | None = None, when: dt.datetime | None = None
              ) -> tuple[str, str, str]:
    """(card id, vault-relative path, file text) of a new card; writes nothing.

    `relations` are ready frontmatter items; `taken_*` let a caller creating several cards in
    one transaction keep ids and file names unique among them too.
    """
    ids = index.ids() | (taken_ids or set())
    card_id = new_id("card", ids)
    if taken_ids is not None:
        taken_ids.add(card_id)
    name = safe_filename(spec.title)
    namespace = card_namespace(vault, spec)
    folder = home_folder(f"cards/{slug(spec.type)}", namespace)
    names = {n.stem.casefold() for n in index.notes} | (taken_names or set())
    rel = f"{folder}/{name}.md"
    if name.casefold() in names or (vault.root / rel).exists():
        name = f"{name} ({card_id})"
        rel = f"{folder}/{name}.md"
    if taken_names is not None:
        taken_names.add(name.casefold())
    when = when or now_utc()
    claims = []
    for i, c in enumerate(spec.claims, start=1):
        claim: dict[str, Any] = {"id": f"c{i}", "text": c.text}
        if c.confidence is not None:
            claim["confidence"] = c.confidence
        claim["status"] = c.status
        if c.valid_from:
            claim["valid_from"] = to_datetime(c.valid_from) or c.valid_from
        if c.evidence:
            claim["evidence"] = [FlowMap(e) for e in c.evidence]
        claims.append(claim)
    values: dict[str, Any] = {
        "id": card_id, "title": spec.title, "type": spec.type,
        "tags": list(spec.tags), "aliases": list(spec.aliases) or None,
        "namespace": namespace,
        "created": when, "updated": when, "importance": spec.importance,
        "pinned": spec.pinned or None,
        "source_sessions": [format_link(s) for s in spec.source_sessions] or None,
        "claims": claims or None, "relations": [FlowMap(r) for r in relations] or None,
    }
    values.update({k: v for k, v in spec.extra.items() if k not in values})
    body = spec.content.strip()
    return card_id, rel, new_note_text(values, (body + "\n") if body else "")


def create_card(vault: Vault, spec: NewCard, *, commit: bool = True,
                screen: Screen | None = None) -> Created:
    if not _TYPE_RE.match(spec.type):
        raise UsageError(f"card type {spec.type!r} is not a lowercase word",
                         fix="use e.g. concept, pattern, gotcha, decision, fact, preference")
    if spec.namespace:
        vault.caller.check_namespace(str(spec.namespace))
    if screen is not None:
        screen(card_namespace(vault, spec),
               [spec.title, spec.content, *spec.aliases, *spec.tags, *(c.text for c in spec.claims),
                *(str(r.get("reason") or "") for r in spec.relations)])
    with vault.locked():
        index = vault.load()
        for note in index.notes:
            if note.kind == "card" and note.title.casefold() == spec.title.casefold():
                raise ConflictError(f"a card titled {spec.title!r} already exists: {note.path}",
                                    path=note.path,
                                    fix="edit that card, or choose a different title")
        rels = []
        home = card_namespace(vault, spec)
        for r in spec.relations:
            target = index.find(str(r.get("target") or r.get("to_title") or "").strip("[]"))
            if not may_name(home, target.namespace):
                raise NamespaceError(
                    f"a new card in {home} may not link to {target.title!r} "
                    f"({target.namespace}): every reader of the card would see it",
                    fix="create the card in that namespace, or link from the private note")
            item = FlowMap(type=relation_name(str(r.get("type") or r.get("relation") or "")),
                           target=format_link(link_target_for(target, index.resolver)),
                           weight=_prob(r.get("weight"), "relations.weight") or 1.0)
            if r.get("reason"):
                item["reason"] = str(r["reason"])
            rels.append(item)
        card_id, rel, text = card_file(vault, index, spec, relations=rels)
        message = f"new: {spec.type} card \"{spec.title}\" ({card_id})"
        if rels:
            message += "\n\n" + "\n".join(f"{r['type']} {r['target']}" for r in rels)
        with vault.transaction(message, commit=commit) as tx:
            tx.create(rel, text)
    return Created(id=card_id, title=spec.title, path=rel, commit=tx.sha,
                   relations=tuple(f"{r['type']} {r['target']}" for r in rels))


@dataclass(frozen=True)
class LinkResult:
    source: Note
    target: Note
    type: str
    changed: bool
    commit: str | None
    message: str


def _item_matches(index: VaultIndex, item: Any, rel_type: str | None, target: Note,
                  symmetric_only: bool = False, source: str = "") -> bool:
    """Does a frontmatter relation item have `rel_type` (any if None) and point at `target`?"""
    if not isinstance(item, Mapping) or not item.get("target"):
        return False
    item_type = str(item.get("type", "")).upper()
    if rel_type and item_type != rel_type:
        return False
    if symmetric_only and item_type not in SYMMETRIC_RELATIONS:
        return False
    ref = str(item["target"]).strip().removeprefix("[[").removesuffix("]]")
    res = index.resolver.resolve(ref.split("|")[0].split("#")[0], source, extras=True)
    return res.note is not None and res.note.path == target.path


def _points_to(index: VaultIndex, note: Note, rel_type: str | None, target: Note,
               symmetric_only: bool = False) -> bool:
    raw = note.meta.get("relations")
    return any(_item_matches(index, item, rel_type, target, symmetric_only, note.path)
               for item in (raw if isinstance(raw, list) else []))


def link(vault: Vault, a: str, b: str, rel_type: str, *, weight: float | None = None,
         reason: str | None = None, commit: bool = True,
         screen: Screen | None = None) -> LinkResult:
    """Add `A —TYPE→ B` to A's `relations` (one new line); B must resolve to a note."""
    rel_type = relation_name(rel_type)
    if weight is not None:
        _prob(weight, "weight")
    with vault.locked():
        index = vault.load()
        source = find_writable(index, a, vault.caller)
        target = index.find(b)
        if screen is not None and reason:
            screen(source.namespace, [reason])
        if source.path == target.path:
            raise UsageError(f"{source.title!r} cannot be linked to itself",
                             fix="pick two different notes")
        check_may_name(source, target)
        existing = _points_to(index, source, rel_type, target)
        if not existing and rel_type in SYMMETRIC_RELATIONS:
            existing = _points_to(index, target, rel_type, source)
        if existing:
            return LinkResult(source, target, rel_type, False, None,
                              f"already linked: {source.title} {rel_type} {target.title}")
        item = FlowMap(type=rel_type, target=format_link(link_target_for(target, index.resolver)))
        item["weight"] = 1.0 if weight is None else float(weight)
        if reason:
            item["reason"] = reason
        message = f"link: \"{source.title}\" {rel_type} \"{target.title}\""
        if reason:
            message += f"\n\n{reason}"

        def edit(doc: NoteText) -> None:
            doc.ensure_frontmatter()
            doc.frontmatter.append_item("relations", item)

        with vault.transaction(message, commit=commit) as tx:
            tx.update(source.path, edit)
    return LinkResult(source, target, rel_type, True, tx.sha, message.splitlines()[0])


def unlink(vault: Vault, a: str, b: str, rel_type: str | None = None, *,
           commit: bool = True) -> LinkResult:
    """Remove A's frontmatter relations to B (of `rel_type`, or all); symmetric: either end."""
    rel_type = relation_name(rel_type) if rel_type else None
    with vault.locked():
        index = vault.load()
        source = find_writable(index, a, vault.caller)
        target = index.find(b)
        # (holder, other, symmetric_only): the reverse side only loses symmetric relations,
        # which are one edge stored on either end.
        plan: list[tuple[Note, Note, bool]] = []
        if _points_to(index, source, rel_type, target):
            plan.append((source, target, False))
        if _points_to(index, target, rel_type, source, symmetric_only=True):
            vault.caller.check_write(target, b)
            plan.append((target, source, True))
        if not plan:
            body_links = [r for r in source.relations if r.origin != "frontmatter"
                          and index.resolver.resolve_link(r.link, source.path).note is target]
            hint = (" (a wikilink in the note's text links them: edit the text to remove it)"
                    if body_links else "")
            raise NotFoundError(f"no {rel_type or 'relation'} from {source.title!r} to "
                                f"{target.title!r} in frontmatter{hint}",
                                fix="list relations with `alaya show " + (source.id or source.path)
                                + "`")
        message = f"unlink: \"{source.title}\" {rel_type or 'all relations'} \"{target.title}\""
        with vault.transaction(message, commit=commit) as tx:
            for holder, other, sym_only in plan:
                def edit(doc: NoteText, other: Note = other, sym_only: bool = sym_only,
                         holder: Note = holder) -> None:
                    doc.frontmatter.remove_items(
                        "relations",
                        lambda item: _item_matches(index, item, rel_type, other, sym_only,
                                                   holder.path))

                tx.update(holder.path, edit)
    return LinkResult(source, target, rel_type or "*", True, tx.sha, message)


def parse_tags(values: Sequence[str]) -> tuple[str, ...]:
    out: list[str] = []
    for v in values:
        out.extend(t.strip().lstrip("#") for t in v.split(",") if t.strip())
    return tuple(out)


def promote_shared(vault: Vault, ref: str, *, commit: bool = True,
                   screen: Screen | None = None) -> tuple[Note, str, str | None]:
    """Move a private card into `shared`: one frontmatter line and one commit. Returns the
    note, its old namespace and the commit (None when it was shared already). `screen` reads
    everything the card says — title, text, claims, aliases, relation reasons — as text bound
    for `shared`."""
    with vault.locked():
        index = vault.load()
        note = find_writable(index, ref, vault.caller)
        old = note.namespace
        if old == "shared":
            return note, old, None
        private = sorted({t.title for t in (index.resolver.resolve_link(lk, note.path).note
                                             for lk in note.links if lk.target)
                          if t is not None and t.path != note.path
                          and not may_name("shared", t.namespace)})
        if private:
            raise NamespaceError(
                f"{note.title!r} links to note(s) of {old} that would then be named in "
                f"`shared`: {', '.join(repr(t) for t in private[:5])}",
                fix="promote those first, or remove the links (alaya unlink), then promote")
        if is_ephemeral(old):
            raise UsageError(f"{ref!r} is in {old}: ephemeral notes are never promoted (they "
                             "are archived after [vault] ephemeral_ttl_hours)",
                             fix="write what should last as a new card in your own "
                                 "namespace, then promote that")
        if screen is not None:
            said = [note.title, note.body]
            for key in ("claims", "relations", "aliases", "tags"):
                said += list(iter_scalar_strings(note.meta.get(key)))
            screen("shared", said)

        def edit(doc: NoteText) -> None:
            doc.ensure_frontmatter()
            doc.frontmatter.set("namespace", "shared")

        with vault.transaction(f"promote-shared: \"{note.title}\" {old} → shared",
                               commit=commit) as tx:
            tx.update(note.path, edit)
    return note, old, tx.sha
