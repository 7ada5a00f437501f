"""Entity pages: "what we know about Melanie" — one note per person, system or project named
across sessions, whose managed block lists the dated facts the memory holds, each linked to
the exact turn (`[[conv-26-s5#^t4|t4]]`). Written offline by `distill` (the entities its
sessions name) and by `introspect` (every page); docs/vault-format.md shows one.

```markdown
<!-- alaya:facts:start -->
## What we know about Melanie

*person · 54 fact(s) from 19 session(s), 2023-05-08 – 2023-10-22. Written by alaya from the
sessions and cards it links; edit outside this block.*

### From the cards
- Melanie prefers … ([[conv-26-s3#^t5|2023-06-09]], [[Card title]])

### 2023-07-03 · [[conv-26-s5|Session 2023-07-03 13:36 · locomo]]
- Melanie: I just signed up for a pottery class yesterday (2023-07-02). [[conv-26-s5#^t4|t4]]
<!-- alaya:facts:end -->
```

The rules of the house hold: alaya writes only its block, in notes it wrote or notes that
already carry the block (a person's own entity note without it is left alone and reported);
a page's facts come only from notes every reader of the page may see (a shared page: shared
sessions and cards); a page with nothing to say is not created; the same vault always gives
the same bytes, so a run with nothing new makes no commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from vault_engine.store import blocks
from vault_engine.store.authorship import Authorship
from vault_engine.store.cards import now_utc
from vault_engine.store.frontmatter import NoteText, new_note_text
from vault_engine.store.ids import new_id, safe_filename
from vault_engine.store.links import LinkResolver, format_link, link_target_for
from vault_engine.store.model import Card, Entity, Note, Session
from vault_engine.store.namespaces import SHARED, Caller, agent_of
from vault_engine.store.vault import Transaction, Vault, VaultIndex
from vault_engine.text.segment import cjk_share

from .entity_facts import Fact, Subject, facts_for, subjects

BLOCK = "facts"


@dataclass
class PagePlan:
    rel: str
    name: str
    facts: int
    text: str | None = None  # a new note's text
    block: str | None = None  # the block for an existing note
    created: bool = False


@dataclass
class PagesResult:
    pages: list[PagePlan] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # a person's note without the block

    def line(self) -> str:
        made = sum(p.created for p in self.pages)
        return f"{len(self.pages)} page(s), {made} new, " \
               f"{sum(p.facts for p in self.pages)} fact(s)"


_ZH_TYPES = {"person": "人物", "system": "系统", "project": "项目", "topic": "话题",
             "organization": "组织", "place": "地点"}


def _zh(facts: Sequence[Fact]) -> bool:
    text = "".join(f.text for f in facts[:20])
    return bool(text) and cjk_share(text) > 0.3


def render_block(subject: Subject, facts: Sequence[Fact], sessions: dict[str, Session],
                 resolver: LinkResolver) -> str:
    """The block's text: a heading, one line of what it rests on, the cards' facts, then the
    sessions' facts by date — every fact linked to its turn."""
    zh = _zh(facts)
    def started(stem: str) -> str:
        when = sessions[stem].started
        return when.isoformat() if when else ""

    said_in = sorted({f.session for f in facts if f.session in sessions},
                     key=lambda s: (started(s), s))
    days = sorted({d.date().isoformat() for d in (sessions[s].started for s in said_in) if d})
    span = (days[0] if len(days) == 1 else f"{days[0]} – {days[-1]}") if days else ""

    def target(stem: str) -> str:
        note = sessions.get(stem)
        return link_target_for(note, resolver) if note is not None else stem

    def ref(f: Fact, label: str | None = None) -> str:
        return format_link(target(f.session), label or f.anchor or f.said or f.session,
                           anchor=f"^{f.anchor}" if f.anchor else None)

    if zh:
        kind = _ZH_TYPES.get(subject.type, subject.type)
        lines = [f"## 关于{subject.name}，我们知道的", "",
                 f"*{kind} · 来自 {len(said_in)} 次会话的 {len(facts)} 条事实"
                 + (f"（{span}）" if span else "") + "。alaya 根据下面链接的会话和卡片写成；"
                 "请在此块之外编辑。*"]
    else:
        lines = [f"## What we know about {subject.name}", "",
                 f"*{subject.type} · {len(facts)} fact(s) from {len(said_in)} session(s)"
                 + (f", {span}" if span else "") + ". Written by alaya from the sessions and "
                 "cards it links; edit outside this block.*"]
    from_cards = [f for f in facts if f.card]
    if from_cards:
        lines += ["", "### 卡片里的事实" if zh else "### From the cards"]
        for f in from_cards:
            where = ref(f, f.said or f.anchor) if f.session in sessions else ""
            card = format_link(f.card or "")
            lines.append(f"- {f.text} ({', '.join(x for x in (where, card) if x)})")
    by_session: dict[str, list[Fact]] = {}
    for f in facts:
        if not f.card and f.session in sessions:
            by_session.setdefault(f.session, []).append(f)
    for stem in said_in:
        if stem not in by_session:
            continue
        note = sessions[stem]
        day = note.started.date().isoformat() if note.started else stem
        lines += ["", f"### {day} · {format_link(target(stem), note.title)}"]
        lines += [f"- {f.speaker + ': ' if f.speaker else ''}{f.text} {ref(f)}"
                  for f in by_session[stem]]
    return "\n".join(lines) + "\n"


def _audience(namespace: str) -> Caller:
    owner = agent_of(namespace)
    return Caller.public() if owner is None else Caller("agent", owner)


def plan_pages(vault: Vault, index: VaultIndex, *, names: Iterable[str] | None = None,
               namespaces: Iterable[str] | None = None, create: bool = True,
               owners: Authorship | None = None) -> PagesResult:
    """What the entity pages should hold now (`names`: only these, casefolded; `namespaces`:
    only pages there; None: all). New pages are shared and come from shared notes only; an
    agent's page (written by its distill) is refreshed from its namespace and `shared`."""
    wanted = {n.casefold() for n in names} if names is not None else None
    result = PagesResult()
    by_ns: dict[str, list[Entity]] = {}
    for note in index.notes:
        if isinstance(note, Entity):
            by_ns.setdefault(note.namespace or SHARED, []).append(note)
    taken_ids = set(index_ids(index))
    only = set(namespaces) if namespaces is not None else None
    for namespace in sorted({SHARED, *by_ns}):
        if only is not None and namespace not in only:
            continue
        view = _audience(namespace).view(index)
        sessions = [n for n in view.notes if isinstance(n, Session)]
        cards = [n for n in view.notes if isinstance(n, Card)]
        mine = [n for n in view.notes if n.namespace == namespace or namespace == SHARED
                and (n.namespace or SHARED) == SHARED]
        found = subjects([n for n in mine if isinstance(n, Entity)], sessions)
        by_stem = {s.stem: s for s in sessions}
        for key, subject in sorted(found.items()):
            if wanted is not None and key not in wanted and not (
                    wanted & {f.casefold() for f in subject.forms}):
                continue
            if subject.note is None and (namespace != SHARED or not create):
                continue
            facts = facts_for(subject, sessions, cards)
            if not facts:
                continue
            block = render_block(subject, facts, by_stem, view.resolver)
            if subject.note is not None:
                _plan_existing(vault, subject.note, block, len(facts), result, owners)
            else:
                rel = f"entities/{safe_filename(subject.name)}.md"
                if index.by_path(rel) is not None or (vault.root / rel).exists():
                    continue
                ent_id = new_id("entity", taken_ids)
                taken_ids.add(ent_id)
                values = {"id": ent_id, "title": subject.name, "type": subject.type,
                          "namespace": SHARED, "created": now_utc()}
                body = blocks.replace_block("", BLOCK, block)
                result.pages.append(PagePlan(rel, subject.name, len(facts),
                                             text=new_note_text(values, body), created=True))
    return result


def index_ids(index: VaultIndex) -> list[str]:
    return [n.id for n in [*index.notes, *index.hidden] if n.id]


def _plan_existing(vault: Vault, note: Entity, block: str, n_facts: int, result: PagesResult,
                   owners: Authorship | None) -> None:
    current = blocks.read_block(note.body, BLOCK, note.path)
    if current == block:
        return
    if current is None and (owners or Authorship.load(vault, [note])).is_persons(note.path):
        result.skipped.append(note.path)  # a person's own note: theirs unless it asks
        return
    result.pages.append(PagePlan(note.path, note.title, n_facts, block=block))


def write_pages(tx: Transaction, plans: Sequence[PagePlan]) -> None:
    """Write the planned pages in `tx`: new notes created, existing ones get their block
    (re-read and re-applied if a person saved the file meanwhile)."""
    for plan in plans:
        if plan.text is not None:
            tx.create(plan.rel, plan.text)
            continue
        block = plan.block or ""

        def edit(doc: NoteText, block: str = block, rel: str = plan.rel) -> None:
            body = doc.body
            if blocks.find_block(body, BLOCK, rel) is None and body.strip():
                body = body.rstrip("\n") + "\n\n"
            doc.body = blocks.replace_block(body, BLOCK, block, path=rel)

        tx.update(plan.rel, edit)


def refresh_pages(vault: Vault, *, names: Iterable[str] | None = None,
                  namespaces: Iterable[str] | None = None, create: bool = True,
                  commit: bool = True) -> tuple[PagesResult, str | None]:
    """Plan and write the entity pages in one commit ("entities: …"); (result, commit sha).
    An agent refreshes only pages it may write (its own namespaces and `shared`)."""
    caller = vault.caller
    if namespaces is None and not caller.is_owner:
        namespaces = [SHARED, *caller.own]
    with vault.locked():
        index = vault.load_all()
        result = plan_pages(vault, index, names=names, namespaces=namespaces, create=create)
        if not result.pages:
            return result, None
        tx = vault.transaction(f"entities: {result.line()}", commit=commit)
        with tx:
            write_pages(tx, result.pages)
    return result, tx.sha


def names_in_sessions(notes: Iterable[Note]) -> set[str]:
    """The names a batch of sessions says (for distill: the pages it should refresh)."""
    from .entity_facts import _names_in

    out: set[str] = set()
    for note in notes:
        if isinstance(note, Session):
            out |= {n.casefold() for n in _names_in(note)}
    return out
