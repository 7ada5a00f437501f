"""Introspect phase 5, forget: knowledge nobody uses any more is moved to archive/ with the
reason and date — never deleted; `alaya restore` brings it back.

A card is forgotten when all of these hold (seed 000 §4.7.3, with seed 003 §3.3.1's decay per
category):
- it is COLD with temperature < 0.1, and was recalled fewer than 3 times;
- it has gone unused (no recall; never recalled: since it was last updated or created) for
  at least its category's days: seed 003's linear decay `1 − days × rate` reaches its floor
  of 0.1 after 0.9 / rate days, never fewer than seed 000's 90 — fact/concept 300 days,
  preference/instruction/constraint 180, decision/event/gotcha 112, pattern/skill 90,
  snippet 90; a volatile card's rate is doubled;
- no knowledge depends on it: no typed relation and no body link from a card or an entity
  resolves to it. Links from scenes, persona.md, MEMORY.md, reports, saved queries and
  sessions are views of the knowledge, not dependants;
- it is not pinned.
A card whose feedback quality is below 0.2 over 5 or more verdicts is forgotten too (seed 003
§3.3.1, step 1).

Notes of an `<agent>-ephemeral` namespace (a conversation's scratch state, seed 003 §1.3) are
archived once they are older than `[vault] ephemeral_ttl_hours`, whatever their use.

A person's note (vault_engine/store/authorship.py) is never archived: it is proposed for
archiving, in the report and the review queue.
"""

from __future__ import annotations

import datetime as dt

from vault_engine.care.tiers import assign_tiers
from vault_engine.primitives import to_datetime
from vault_engine.store.archive import archive_note
from vault_engine.store.links import link_to
from vault_engine.store.model import Card, Note, Session
from vault_engine.store.namespaces import is_ephemeral
from vault_engine.store.proposals import Proposal
from vault_engine.store.vault import Transaction, VaultIndex

from .cooldown import current_manifest, tier_inputs
from .phase import Context, PhaseResult, commit_phase

FORGET = {"temperature": 0.1, "days": 90, "max_access": 3}  # seed 000 §4.7.3
# seed 003 §3.3.1: linear decay per day, by category of memory
DECAY_RATE = {"system_fact": 0.003, "user_pref": 0.005, "proj_context": 0.008,
              "tool_usage": 0.010, "code_snippet": 0.012}
CATEGORY = {"fact": "system_fact", "concept": "system_fact",
            "preference": "user_pref", "instruction": "user_pref", "constraint": "user_pref",
            "decision": "proj_context", "event": "proj_context", "gotcha": "proj_context",
            "pattern": "tool_usage", "skill": "tool_usage",
            "snippet": "code_snippet", "code": "code_snippet"}
DECAY_FLOOR = 0.1
DEPENDANT_KINDS = ("card", "entity")  # notes whose links are knowledge


def forget_after_days(card: Card) -> float:
    """How long a card may go unused before it can be forgotten."""
    rate = DECAY_RATE[CATEGORY.get((card.type or "").lower(), "proj_context")]
    if card.meta.get("volatile") is True:
        rate *= 2  # seed 003 §3.3.3: volatile memories decay twice as fast
    return max(float(FORGET["days"]), (1.0 - DECAY_FLOOR) / rate)


def dependants(index: VaultIndex) -> set[str]:
    """Paths of the notes some card or entity depends on (a typed relation or a body link)."""
    out: set[str] = set()
    for n in index.notes:
        if n.kind not in DEPENDANT_KINDS:
            continue
        for lk in n.links:
            res = index.resolver.resolve_link(lk, n.path) if lk.target else None
            if res is not None and res.note is not None and res.note.path != n.path:
                out.add(res.note.path)
    return out


def protected(note: Note) -> str | None:
    """Why a note is never forgotten, or None."""
    if isinstance(note, Card) and note.pinned or note.meta.get("pinned") is True:
        return "pinned"
    return None


def phase_forget(ctx: Context, results: list[PhaseResult]) -> PhaseResult:
    r = PhaseResult("forget")
    index = ctx.index()
    tiers = ctx.tiers or assign_tiers(tier_inputs(index, ctx.now, current_manifest(ctx.vault)),
                                      ctx.stats, ctx.now, ctx.vault.config.section("tiers"))
    depended = dependants(index)
    from vault_engine.care.feedback import quality_scores

    quality = quality_scores(ctx.vault)
    chosen: list[tuple[Note, str]] = list(_expired(ctx, index.notes))
    for n in index.notes:
        if is_ephemeral(n.namespace):
            continue  # expires by its TTL, above
        if not isinstance(n, Card) or protected(n):
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
        days = forget_after_days(n)
        if last is None or ctx.now - last < dt.timedelta(days=days):
            continue
        if s is not None and s.access_count >= FORGET["max_access"]:
            continue
        if n.path in depended:
            continue
        reason = (f"forgotten: cold (temperature {t.temperature:.2f}), last used "
                  f"{last.date()} (its kind is kept {days:.0f} days unused), recalled "
                  f"{s.access_count if s else 0} time(s), no card or entity depends on it")
        chosen.append((n, reason))
    owners = ctx.owners(index)
    theirs = [(n, why) for n, why in chosen if owners.is_persons(n.path)]
    chosen = [(n, why) for n, why in chosen if not owners.is_persons(n.path)]
    r.proposals += [Proposal(path=n.path, action="archive", reason=why,
                             summary=f"archive {link_to(n, index.resolver)}: {why}")
                    for n, why in theirs]
    r.numbers.update(archived=len(chosen), proposed=len(theirs))
    r.lines = [f"- {link_to(n, index.resolver)}: {why}" for n, why in chosen]

    def work(tx: Transaction) -> None:
        for n, why in chosen:
            archive_note(tx, ctx.vault, n, why, ctx.now, resolver=index.resolver)

    commit_phase(ctx, r, results, work if chosen else None, f"{len(chosen)} card(s) archived")
    return r


def _expired(ctx: Context, notes: list[Note]) -> list[tuple[Note, str]]:
    """Ephemeral notes (a conversation's scratch state, seed 003 §1.3) past their TTL."""
    hours = float(ctx.vault.config.get("vault", "ephemeral_ttl_hours"))
    out: list[tuple[Note, str]] = []
    for n in notes:
        if not is_ephemeral(n.namespace) or n.kind in ("archive", "template"):
            continue
        born = n.created if isinstance(n, Card) else (
            n.started if isinstance(n, Session) else None)
        born = born or to_datetime(n.meta.get("created"))
        if born is not None and ctx.now - born >= dt.timedelta(hours=hours):
            out.append((n, f"ephemeral: {n.namespace} notes expire {hours:g} h after they are "
                           f"created ({born.date()})"))
    return out
