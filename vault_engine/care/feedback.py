"""`alaya feedback`: what an agent or a person learned about a memory (seed 003 §3.2.1, §3.3.3).

- `useful` / `not-useful`: an event in `.alaya/telemetry.jsonl`; the note's quality score is
  useful / (useful + not-useful). Introspect's forget phase archives a card whose quality is
  below 0.2 after at least 5 verdicts (seed 003's elimination order).
- `correct`: rewrites one claim's text in the card through git (the history is the version
  history), counts the correction (`corrections`; 3 or more marks the card `volatile`), and
  marks every note that relates to the card `stale`, naming what changed.
- `deprecate`: archives the card with the reason (a Tombstone; `alaya restore` reverses it).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from vault_engine.errors import NotFoundError, UsageError
from vault_engine.primitives import now as clock
from vault_engine.store.frontmatter import FlowMap, NoteText
from vault_engine.store.model import Card, Entity, Note
from vault_engine.store.vault import Vault
from vault_engine.telemetry import append_event, read_events
from vault_engine.text.injection import refuse_for_shared

VERDICTS = ("useful", "not-useful", "correct", "deprecate")
VOLATILE_AFTER = 3  # corrections (seed 003 §3.3.3)


@dataclass
class Quality:
    useful: int = 0
    not_useful: int = 0

    @property
    def total(self) -> int:
        return self.useful + self.not_useful

    @property
    def score(self) -> float | None:
        return self.useful / self.total if self.total else None


@dataclass
class FeedbackResult:
    verdict: str
    id: str
    path: str
    quality: dict[str, Any] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    commit: str | None = None
    message: str = ""
    proposals: list[Any] = field(default_factory=list)  # for a person's note (review queue)


def quality_scores(vault: Vault, *, own: bool = False) -> dict[str, Quality]:
    """Useful / not-useful verdicts per note; `own`: only the vault's caller's (what an
    agent is shown — another agent's verdicts are not its to count)."""
    out: dict[str, Quality] = {}
    mine = vault.caller.agent
    for e in read_events(vault.state_dir):
        if own and not vault.caller.is_owner and e.get("agent") != mine:
            continue
        verdict, key = e.get("feedback"), e.get("id")
        if not isinstance(key, str) or verdict not in ("useful", "not-useful"):
            continue
        q = out.setdefault(key, Quality())
        if verdict == "useful":
            q.useful += 1
        else:
            q.not_useful += 1
    return out


def _key(note: Note) -> str:
    return note.id or f"path:{note.path}"


def feedback(vault: Vault, verdict: str, ref: str, *, claim: str | None = None,
             text: str | None = None, reason: str | None = None,
             commit: bool = True) -> FeedbackResult:
    if verdict not in VERDICTS:
        raise UsageError(f"unknown verdict {verdict!r}", fix="use " + ", ".join(VERDICTS))
    from vault_engine.store.namespaces import find_writable

    index = vault.load()  # what the caller sees: another agent's notes are neither changed
    note = find_writable(index, ref, vault.caller)  # nor marked stale as dependants
    key = _key(note)
    now = clock()
    if verdict in ("useful", "not-useful"):
        event = {"ts": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "feedback": verdict, "id": key}
        if reason:
            event["reason"] = reason
        if vault.caller.agent:
            event["agent"] = vault.caller.agent
        append_event(vault.state_dir, event)
        q = quality_scores(vault, own=True).get(key, Quality())
        return FeedbackResult(verdict, key, note.path, quality={
            "useful": q.useful, "not_useful": q.not_useful, "score": q.score},
            message=f"{verdict}: {note.title} (quality {q.score:.2f} over {q.total})")
    if verdict == "deprecate":
        from vault_engine.store.archive import archive_note

        if note.kind == "archive":
            raise UsageError(f"{note.path} is already archived", fix="nothing to do")
        from vault_engine.store.authorship import is_persons_note

        if is_persons_note(vault, note.path):  # never archived by a tool: proposed instead
            from vault_engine.store.proposals import Proposal

            why = f"deprecated: {reason or 'no reason given'}"
            proposal = Proposal(path=note.path, action="archive", reason=why,
                                summary=f"archive {note.path}: {why}")
            return FeedbackResult(verdict, key, note.path, proposals=[proposal],
                                  message=f"{note.title} is a person's note: archiving it is "
                                          "proposed for review (`alaya review`), not done")
        refuse_for_shared(note.namespace, [reason], owner=vault.caller.is_owner,
                          what="the reason")  # the tombstone keeps it
        with vault.transaction(f"feedback: deprecate {note.title}"
                               + (f"\n\n{reason}" if reason else ""), commit=commit) as tx:
            rel = archive_note(tx, vault, note, f"deprecated: {reason or 'no reason given'}", now)
        return FeedbackResult(verdict, key, note.path, changed=[note.path, rel], commit=tx.sha,
                              message=f"deprecated {note.title} → {rel}")
    return _correct(vault, index, note, claim, text, reason, now, commit)


def _correct(vault: Vault, index: Any, note: Note, claim: str | None, text: str | None,
             reason: str | None, now: dt.datetime, commit: bool) -> FeedbackResult:
    if not isinstance(note, Card | Entity):
        raise UsageError(f"{note.path} is a {note.kind}: only cards and entities hold claims",
                         fix="pass a card id")
    if not text or not text.strip():
        raise UsageError("correct needs the corrected statement",
                         fix=f'alaya feedback correct {note.id} --claim c1 --text "…"')
    claims = list(note.claims)
    if claim is None:
        if len(claims) != 1:
            raise UsageError(f"{note.title} has {len(claims)} claims: say which",
                             fix="add --claim " + (claims[0].id if claims else "c1"))
        claim = claims[0].id
    target = next((c for c in claims if c.id == claim), None)
    if target is None:
        raise NotFoundError(f"{note.title} has no claim {claim!r}",
                            fix="claims: " + ", ".join(c.id for c in claims))
    old_text = target.text
    corrections = int(note.meta.get("corrections") or 0) + 1

    def edit(doc: NoteText) -> None:
        items = [dict(c) for c in doc.frontmatter.data.get("claims") or []]
        for c in items:
            if str(c.get("id")) == claim:
                c["text"] = text.strip()
                c["status"] = "supported"
                c["corrected"] = now
                if isinstance(c.get("evidence"), list):
                    c["evidence"] = [FlowMap(e) if isinstance(e, dict) else e
                                     for e in c["evidence"]]
        doc.frontmatter.set("claims", items)
        doc.frontmatter.set("updated", now)
        doc.frontmatter.set("corrections", corrections)
        if corrections >= VOLATILE_AFTER:
            doc.frontmatter.set("volatile", True)
        if doc.frontmatter.data.get("stale"):
            doc.frontmatter.delete("stale")
            doc.frontmatter.delete("stale_reason")

    # dependants: notes whose relations point at this card
    dependants = []
    for n in index.notes:
        if n.path == note.path or n.kind in ("template", "archive", "report", "query"):
            continue
        if any(r.origin != "body" and index.resolver.resolve_link(r.link, n.path).note is note
               for r in n.relations):
            dependants.append(n)
    # the new claim lands in the card, and its first words in each dependant's stale_reason
    for ns in sorted({note.namespace, *(n.namespace for n in dependants)}):
        refuse_for_shared(ns, [text], owner=vault.caller.is_owner, what="the correction")
    why = f"{note.id or note.title} {claim} was corrected on {now.date()}: “{old_text[:80]}” → " \
          f"“{text.strip()[:80]}”"

    def mark(doc: NoteText) -> None:
        doc.ensure_frontmatter()
        doc.frontmatter.set("stale", True)
        doc.frontmatter.set("stale_reason", why)

    message = f"feedback: correct {note.title} {claim}\n\n- {old_text}\n+ {text.strip()}"
    if reason:
        message += f"\n\n{reason}"
    with vault.transaction(message, commit=commit) as tx:
        tx.update(note.path, edit)
        for n in dependants:
            tx.update(n.path, mark)
    return FeedbackResult("correct", _key(note), note.path,
                          changed=[note.path] + [n.path for n in dependants], commit=tx.sha,
                          message=f"corrected {note.title} {claim}; {len(dependants)} "
                                  "dependant(s) marked stale")
